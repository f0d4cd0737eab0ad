"""CollectionStore: md_collections and their grants (sql/collections.sql)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import asyncpg
import msgspec

from cograph_collections.domain.collections import MAX_GROUP_GRANTS, Access, Collection, Visibility
from cograph_db import Connection, Queries
from cograph_errors import FailedPrecondition, NotFound

SQL = Queries.load("cograph_collections.sql", "collections.sql")


class CollectionStore:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    async def create(self, name: str, description: str, visibility: Visibility, owner: str) -> uuid.UUID:
        collection_id: uuid.UUID = await self._db.fetchval(
            SQL.insert_collection, name, description, visibility.value, owner
        )
        return collection_id

    async def get(self, collection_id: uuid.UUID) -> Collection:
        """NotFound unless it exists: every caller names one it needs."""
        rows = await self.find([collection_id], query="", limit=1, after=(None, None))
        if not rows:
            raise NotFound(f"collection {collection_id} does not exist")
        return rows[0]

    async def find(
        self, collection_ids: list[uuid.UUID], *, query: str, limit: int, after: Sequence[str | None]
    ) -> list[Collection]:
        """Ordered by (name, id), after that key (a page token's)."""
        rows = await self._db.fetch(SQL.select_collection, collection_ids, _escape_like(query), limit, *after)
        return [msgspec.convert(dict(row), Collection) for row in rows]

    async def update(
        self,
        collection_id: uuid.UUID,
        *,
        name: str | None,
        description: str | None,
        visibility: Visibility | None,
    ) -> bool:
        updated = await self._db.fetchval(
            SQL.update_collection,
            collection_id,
            name,
            description,
            visibility.value if visibility else None,
        )
        return updated is not None

    async def delete(self, collection_id: uuid.UUID) -> bool:
        """In a transaction: the collection with everything in it, once the writes into it in
        progress are done."""
        await self._db.execute(SQL.wait_for_writers, collection_id)
        if await self._db.fetchval(SQL.delete_collection, collection_id) is None:
            return False
        await self._db.execute(SQL.delete_scope_statistics, collection_id)
        return True

    async def access(self, collection_ids: Sequence[uuid.UUID] | None) -> list[Access]:
        """The access facts of these collections, or of every one (None)."""
        rows = await self._db.fetch(SQL.select_access, collection_ids)
        return [msgspec.convert(dict(row), Access) for row in rows]

    async def access_of(self, collection_id: uuid.UUID) -> Access | None:
        row = await self._db.fetchrow(SQL.select_access_of, collection_id)
        return msgspec.convert(dict(row), Access) if row else None

    async def add_grant(self, collection_id: uuid.UUID, group: str) -> None:
        """In a transaction: the count and the insert happen under the collection's lock."""
        await self._db.execute(SQL.lock_grants, collection_id)
        if await self._db.fetchval(SQL.count_other_grants, collection_id, group) >= MAX_GROUP_GRANTS:
            raise FailedPrecondition(
                f"a collection has at most {MAX_GROUP_GRANTS} group grants; remove one before adding another"
            )
        try:
            await self._db.execute(SQL.insert_grant, collection_id, group)
        except asyncpg.ForeignKeyViolationError:  # deleted since the caller looked it up
            raise NotFound(f"collection {collection_id} does not exist") from None

    async def remove_grant(self, collection_id: uuid.UUID, group: str) -> None:
        await self._db.execute(SQL.delete_grant, collection_id, group)


def _escape_like(text: str) -> str:
    """The ILIKE filter matches the text literally: % and _ typed by a user are not wildcards."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
