"""JobStore: md_jobs is the queue (sql/jobs.sql). A row that exists is a job that will run: there
is no separate broker that could lose it. Workers claim with SKIP LOCKED and wake on NOTIFY."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import asyncpg
import msgspec

from cograph_collections.domain.jobs import Claimed, Job, JobQuery, Kind, Status
from cograph_db import Connection, Queries
from cograph_errors import NotFound

SQL = Queries.load("cograph_collections.sql", "jobs.sql")
CHANNEL = "md_jobs"


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
        await self._db.execute(SQL.wake_workers, CHANNEL, str(job_id))

    async def claim(self, worker: str) -> Claimed | None:
        """In a transaction: claims are serialised on a lock held until it ends."""
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

    async def find(self, query: JobQuery) -> list[Job]:
        """Newest first, after the query's (created_at, id) (a page token's)."""
        rows = await self._db.fetch(
            SQL.select_jobs,
            query.collection_ids,
            query.status.value if query.status else None,
            query.kind.value if query.kind else None,
            query.limit,
            *query.after,
        )
        return [msgspec.convert(dict(row), Job) for row in rows]

    async def queued(self) -> int:
        count: int = await self._db.fetchval(SQL.count_queued)
        return count


async def listen(
    dsn: str, on_notify: Callable[[], None], on_lost: Callable[[], None]
) -> asyncpg.Connection[Any]:
    """A connection of its own LISTENing on the queue's channel (a pooled one drops it when
    released): on_notify runs at each NOTIFY, on_lost when the connection is lost."""
    listener = await asyncpg.connect(dsn)
    try:
        await listener.add_listener(CHANNEL, lambda *_: on_notify())
    except BaseException:  # cancelled too: a connection that does not listen is not kept
        listener.terminate()
        raise
    listener.add_termination_listener(lambda _: on_lost())
    return listener
