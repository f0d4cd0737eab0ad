"""RepositoryStore: repositories and their group grants. Takes a connection: the caller owns transactions."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence

import asyncpg
import msgspec

from cograph_db import Connection, Queries
from cograph_errors import AlreadyExists, FailedPrecondition, NotFound
from cograph_repodocs.domain.rules import Ref, Visibility

SQL = Queries.load("cograph_repodocs.sql", "repositories.sql")
# Every request's access check reads every grant: their number is bounded.
MAX_GROUP_GRANTS = 100


class NewRepository(msgspec.Struct, frozen=True, kw_only=True):
    ref: Ref
    clone_url: str | None
    checkout_path: str | None
    visibility: Visibility
    owner_subject: str
    default_branch: str
    web_url: str


class RepositoryRow(msgspec.Struct, frozen=True, kw_only=True):
    id: uuid.UUID
    host: str
    owner: str
    name: str
    clone_url: str | None
    checkout_path: str | None
    visibility: Visibility
    owner_subject: str
    default_branch: str
    web_url: str
    created_at: dt.datetime
    group_grants: list[str]
    # Seconds between its scheduled syncs, 0 for none; None: the service's interval.
    sync_interval_seconds: int | None = None

    @property
    def ref(self) -> Ref:
        return Ref(self.host, self.owner, self.name)


class AccessRow(msgspec.Struct, frozen=True, kw_only=True):
    id: uuid.UUID
    host: str
    owner: str
    name: str
    visibility: Visibility
    owner_subject: str
    group_grants: list[str]


class ClonedRow(msgspec.Struct, frozen=True, kw_only=True):
    id: uuid.UUID
    clone_url: str
    default_branch: str


class RepositoryStore:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    async def create(self, new: NewRepository) -> uuid.UUID:
        try:
            repository_id: uuid.UUID = await self._db.fetchval(
                SQL.insert_repository,
                new.ref.host,
                new.ref.owner,
                new.ref.name,
                new.clone_url,
                new.checkout_path,
                new.visibility.value,
                new.owner_subject,
                new.default_branch,
                new.web_url,
            )
        except asyncpg.UniqueViolationError:
            raise AlreadyExists(f"repository {new.ref} is already registered") from None
        return repository_id

    async def get(self, repository_id: uuid.UUID) -> RepositoryRow | None:
        row = await self._db.fetchrow(SQL.select_repository, repository_id)
        return msgspec.convert(dict(row), RepositoryRow) if row else None

    async def require(self, repository_id: uuid.UUID) -> RepositoryRow:
        """The repository, or NotFound."""
        row = await self.get(repository_id)
        if row is None:
            raise NotFound(f"repository {repository_id} does not exist")
        return row

    async def id_of(self, ref: Ref) -> uuid.UUID | None:
        found: uuid.UUID | None = await self._db.fetchval(
            SQL.select_repository_id_by_ref, ref.host, ref.owner, ref.name
        )
        return found

    async def find(
        self, repository_ids: list[uuid.UUID], *, limit: int, after: Sequence[str | None]
    ) -> list[RepositoryRow]:
        """Ordered by (host, owner, name, id), after that key (a page token's)."""
        rows = await self._db.fetch(SQL.select_repositories, repository_ids, limit, *after)
        return [msgspec.convert(dict(row), RepositoryRow) for row in rows]

    async def access(self, repository_ids: Sequence[uuid.UUID] | None) -> list[AccessRow]:
        """The access facts of these repositories, or of every one (None)."""
        rows = await self._db.fetch(SQL.select_access, repository_ids)
        return [msgspec.convert(dict(row), AccessRow) for row in rows]

    async def access_of(self, ref: Ref) -> AccessRow | None:
        """The access facts of the repository named `ref` in any letter case, None if there is none."""
        row = await self._db.fetchrow(SQL.select_access_by_ref, ref.host, ref.owner, ref.name)
        return msgspec.convert(dict(row), AccessRow) if row else None

    async def add_grant(self, repository_id: uuid.UUID, group: str) -> None:
        """In a transaction: the count and the insert happen under the repository's lock."""
        await self._db.execute(SQL.lock_grants, repository_id)
        if await self._db.fetchval(SQL.count_other_grants, repository_id, group) >= MAX_GROUP_GRANTS:
            raise FailedPrecondition(
                f"a repository has at most {MAX_GROUP_GRANTS} group grants; remove one before adding another"
            )
        try:
            await self._db.execute(SQL.insert_grant, repository_id, group)
        except asyncpg.ForeignKeyViolationError:  # deleted since the caller looked it up
            raise NotFound(f"repository {repository_id} does not exist") from None

    async def remove_grant(self, repository_id: uuid.UUID, group: str) -> None:
        await self._db.execute(SQL.delete_grant, repository_id, group)

    async def lock(self, repository_id: uuid.UUID) -> RepositoryRow:
        """In a transaction: the repository, held until it ends (NotFound if there is none)."""
        if await self._db.fetchval(SQL.lock_repository, repository_id) is None:
            raise NotFound(f"repository {repository_id} does not exist")
        return await self.require(repository_id)

    async def update(self, row: RepositoryRow) -> None:
        """Store the row's visibility, branch, web URL and sync interval."""
        await self._db.execute(
            SQL.update_repository,
            row.id,
            row.visibility.value,
            row.default_branch,
            row.web_url,
            row.sync_interval_seconds,
        )

    async def delete(self, repository_id: uuid.UUID) -> bool:
        """In a transaction: the repository and every row of it, its term statistics included.
        False when there was none."""
        await self._db.execute(SQL.lock_syncs, repository_id)
        if await self._db.fetchval(SQL.delete_repository, repository_id) is None:
            return False
        await self._db.execute(SQL.delete_scope_statistics, repository_id)
        return True

    async def due(self, interval_seconds: float) -> list[uuid.UUID]:
        """Repositories the scheduler should sync now, the longest-waiting first."""
        return [row["id"] for row in await self._db.fetch(SQL.select_due, interval_seconds)]

    async def cloned(self) -> list[ClonedRow]:
        """Every repository registered by clone URL: its id, URL and tracked branch."""
        rows = await self._db.fetch(SQL.select_cloned)
        return [
            ClonedRow(id=r["id"], clone_url=r["clone_url"], default_branch=r["default_branch"]) for r in rows
        ]
