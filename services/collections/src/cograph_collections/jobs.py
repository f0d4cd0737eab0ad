"""JobStore: md_jobs is the queue. A row that exists is a job that will run: there is no
separate broker that could lose it. Workers claim with SKIP LOCKED and wake on NOTIFY."""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import asyncpg
import msgspec

from cograph_db import DATABASE_ERRORS, Connection, Queries
from cograph_grpc import NotFound

log = logging.getLogger(__name__)

SQL = Queries.load("cograph_collections.sql", "jobs.sql")
CHANNEL = "md_jobs"


class Kind(enum.StrEnum):
    UPLOAD = "upload"
    EMBED = "embed"
    RESOLVE_LINKS = "resolve_links"


class Status(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    ERROR = "error"


class Job(msgspec.Struct, frozen=True):
    id: uuid.UUID
    collection_id: uuid.UUID
    kind: Kind
    status: Status
    error: str | None
    retry_of: uuid.UUID | None
    requested_by: str
    progress_done: int
    progress_total: int
    payload: dict[str, Any]
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    heartbeat_at: dt.datetime | None


class Claimed(msgspec.Struct, frozen=True):
    id: uuid.UUID
    collection_id: uuid.UUID
    kind: Kind
    payload: dict[str, Any]
    requested_by: str


class JobStore:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    async def enqueue(
        self,
        collection_id: uuid.UUID,
        kind: Kind,
        *,
        requested_by: str = "",
        retry_of: uuid.UUID | None = None,
        payload: dict[str, Any] | None = None,
    ) -> uuid.UUID:
        """Queue a job (or join the identical one already queued) and wake the workers."""
        job_id = await self._insert(collection_id, kind, Status.QUEUED, requested_by, retry_of, payload or {})
        await self._wake_workers(job_id)
        return job_id

    async def start_inline(self, collection_id: uuid.UUID, kind: Kind, requested_by: str) -> uuid.UUID:
        """A job run by the caller itself (an upload): born running, so no worker ever claims it."""
        return await self._insert(collection_id, kind, Status.RUNNING, requested_by, None, {})

    async def _insert(
        self,
        collection_id: uuid.UUID,
        kind: Kind,
        status: Status,
        requested_by: str,
        retry_of: uuid.UUID | None,
        payload: dict[str, Any],
    ) -> uuid.UUID:
        try:
            job_id: uuid.UUID = await self._db.fetchval(
                SQL.insert_job, collection_id, kind.value, status.value, requested_by, retry_of, payload
            )
        except asyncpg.ForeignKeyViolationError:  # deleted since the caller looked it up
            raise NotFound(f"collection {collection_id} does not exist") from None
        return job_id

    async def _wake_workers(self, job_id: uuid.UUID) -> None:
        """NOTIFY the workers' channel (delivered when the caller's transaction commits)."""
        await self._db.execute("SELECT pg_notify($1, $2)", CHANNEL, str(job_id))

    async def claim(self, worker: str) -> Claimed | None:
        async with self._db.transaction():
            await self._db.execute(SQL.lock_claims)
            row = await self._db.fetchrow(SQL.claim_job, worker)
        return msgspec.convert(dict(row), Claimed) if row else None

    async def heartbeat(self, job_id: uuid.UUID, done: int, total: int) -> None:
        await self._db.execute(SQL.heartbeat, job_id, done, total)

    async def finish(
        self,
        job_id: uuid.UUID,
        error: str | None = None,
        *,
        done: int | None = None,
        total: int | None = None,
    ) -> None:
        status = Status.ERROR if error is not None else Status.SUCCESS
        await self._db.execute(SQL.finish_job, job_id, status.value, error, done, total)
        # A queued job of the same collection and kind may have waited for this one to end.
        await self._wake_workers(job_id)

    async def sweep(self, stale_after_seconds: float) -> list[uuid.UUID]:
        """Running jobs whose worker went silent become errors, with the reason."""
        swept = [row["id"] for row in await self._db.fetch(SQL.sweep_stale, stale_after_seconds)]
        if swept:  # queued jobs of the same collection and kind waited for these to end
            await self._wake_workers(swept[0])
        return swept

    async def get(self, job_id: uuid.UUID) -> Job | None:
        row = await self._db.fetchrow(SQL.select_job, job_id)
        return msgspec.convert(dict(row), Job) if row else None

    async def find(
        self,
        collection_ids: list[uuid.UUID],
        *,
        status: Status | None,
        kind: Kind | None,
        limit: int,
        after: Sequence[str | None],
    ) -> list[Job]:
        """Newest first, after that (created_at, id) (a page token's)."""
        rows = await self._db.fetch(
            SQL.select_jobs,
            collection_ids,
            status.value if status else None,
            kind.value if kind else None,
            limit,
            *after,
        )
        return [msgspec.convert(dict(row), Job) for row in rows]

    async def queued(self) -> int:
        count: int = await self._db.fetchval(SQL.count_queued)
        return count


async def beat(
    pool: asyncpg.Pool[Any], job_id: uuid.UUID, seconds: float, progress: Callable[[], tuple[int, int]]
) -> None:
    """Record that a running job is alive, with its progress (done, total), every `seconds` until
    cancelled. A failed beat is logged and the next one tried: a moment without the database must
    not stop the heart of a job that is still working, or the sweep would fail it."""
    while True:
        await asyncio.sleep(seconds)
        try:
            async with pool.acquire() as connection:
                await JobStore(connection).heartbeat(job_id, *progress())
        except DATABASE_ERRORS:
            log.warning("heartbeat of job %s failed", job_id, exc_info=True)
