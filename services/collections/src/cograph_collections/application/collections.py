"""Collections: create, read, change and delete them, and who may read them (their access facts
and group grants)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg

from cograph_collections.domain import collections as rules
from cograph_collections.domain.collections import Access, Collection
from cograph_collections.stores.collections import CollectionStore
from cograph_errors import NotFound


class Collections:
    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    async def create(self, name: str, description: str, visibility: str, owner: str) -> Collection:
        name = rules.check_name(name)
        description = rules.check_description(description)
        checked = rules.check_visibility(visibility)
        owner = rules.check_owner(owner)
        async with self._pool.acquire() as connection:
            store = CollectionStore(connection)
            return await store.get(await store.create(name, description, checked, owner))

    async def get(self, collection_id: uuid.UUID) -> Collection:
        async with self._pool.acquire() as connection:
            return await CollectionStore(connection).get(collection_id)

    async def find(
        self, collection_ids: list[uuid.UUID], *, query: str, limit: int, after: Sequence[str | None]
    ) -> list[Collection]:
        """Those of the ids whose name or description holds the query, by (name, id) after that key."""
        async with self._pool.acquire() as connection:
            return await CollectionStore(connection).find(
                collection_ids, query=query, limit=limit, after=after
            )

    async def update(
        self,
        collection_id: uuid.UUID,
        *,
        name: str | None,
        description: str | None,
        visibility: str | None,
    ) -> Collection:
        """What is None stays as it is."""
        name = rules.check_name(name) if name is not None else None
        description = rules.check_description(description) if description is not None else None
        checked = rules.check_visibility(visibility) if visibility is not None else None
        async with self._pool.acquire() as connection:
            store = CollectionStore(connection)
            if not await store.update(collection_id, name=name, description=description, visibility=checked):
                raise NotFound(f"collection {collection_id} does not exist")
            return await store.get(collection_id)

    async def delete(self, collection_id: uuid.UUID) -> None:
        async with self._pool.acquire() as connection, connection.transaction():
            if not await CollectionStore(connection).delete(collection_id):
                raise NotFound(f"collection {collection_id} does not exist")

    async def access(self, collection_ids: Sequence[uuid.UUID]) -> list[Access]:
        """The access facts of these collections; of every one when none is named."""
        async with self._pool.acquire() as connection:
            return await CollectionStore(connection).access(collection_ids or None)

    async def access_of(self, collection_id: uuid.UUID) -> Access | None:
        """One collection's access facts; None when there is no such collection (no error: the
        gateway's policy decides what a missing one answers)."""
        async with self._pool.acquire() as connection:
            return await CollectionStore(connection).access_of(collection_id)

    async def add_grant(self, collection_id: uuid.UUID, group: str) -> Collection:
        group = rules.check_group(group)
        async with self._pool.acquire() as connection, connection.transaction():
            store = CollectionStore(connection)
            await store.get(collection_id)
            await store.add_grant(collection_id, group)
            return await store.get(collection_id)

    async def remove_grant(self, collection_id: uuid.UUID, group: str) -> Collection:
        async with self._pool.acquire() as connection, connection.transaction():
            store = CollectionStore(connection)
            await store.get(collection_id)
            await store.remove_grant(collection_id, rules.check_group(group))
            return await store.get(collection_id)
