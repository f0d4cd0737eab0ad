"""JobStore: md_jobs is the queue (sql/jobs.sql). A row that exists is a job that will run: there
is no separate broker that could lose it. Workers claim with SKIP LOCKED and wake on NOTIFY."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import asyncpg
import msgspec

from cograph_collections.domain.jobs import Claimed, Job, JobQuery, Kind, Lost, Status
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

    async def heartbeat(self, job_id: uuid.UUID, done: int, total: int, attempt: int | None = None) -> bool:
        """Answers whether the job is still running as run `attempt` (any run when None): False
        once a sweep took it from a worker it thought dead."""
        return await self._db.fetchval(SQL.heartbeat, job_id, done, total, attempt) is not None

    async def finish(
        self,
        job_id: uuid.UUID,
        error: str | None = None,
        *,
        done: int | None = None,
        total: int | None = None,
        attempt: int | None = None,
    ) -> None:
        """The end of the job's run `attempt` (None: whichever runs), unless it is no longer its."""
        status = Status.ERROR if error is not None else Status.SUCCESS
        await self._db.execute(SQL.finish_job, job_id, status.value, error, done, total, attempt)
        # A queued job of the same collection and kind may have waited for this one to end.
        await self._wake_workers(job_id)

    async def stale(self, stale_after_seconds: float) -> list[tuple[Lost, int]]:
        """In a transaction: the running jobs silent for longer than stale_after_seconds, each
        with how long it has been silent, locked until the transaction ends."""
        rows = await self._db.fetch(SQL.select_stale, stale_after_seconds)
        return [(_lost(row), int(row["silent_seconds"])) for row in rows]

    async def running(self, job_id: uuid.UUID, attempt: int) -> Lost | None:
        """In a transaction: the job, locked, while it is still running as run `attempt`."""
        row = await self._db.fetchrow(SQL.select_running, job_id, attempt)
        return _lost(row) if row else None

    async def requeue(
        self, job_id: uuid.UUID, delay_seconds: float, reason: str, done: int | None, total: int | None
    ) -> bool:
        """Queue an interrupted job again after delay_seconds, its run recorded with the reason;
        answers False (and changes nothing) when an identical job was queued meanwhile."""
        try:
            async with self._db.transaction():  # a savepoint: the caller's transaction goes on
                await self._db.execute(SQL.requeue_job, job_id, delay_seconds, reason, done, total)
        except asyncpg.UniqueViolationError:
            return False
        await self._wake_workers(job_id)  # jobs of its collection and kind waited for it to end
        return True

    async def end_interrupted(
        self, job_id: uuid.UUID, error: str, reason: str, done: int | None, total: int | None
    ) -> None:
        await self._db.execute(SQL.end_interrupted, job_id, error, reason, done, total)
        await self._wake_workers(job_id)

    async def mark_successor(self, job_id: uuid.UUID) -> uuid.UUID | None:
        """The identical job queued while this one ran, now marked as continuing it; None if none."""
        successor: uuid.UUID | None = await self._db.fetchval(SQL.mark_successor, job_id)
        return successor

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


def _lost(row: asyncpg.Record) -> Lost:
    return Lost(
        id=row["id"],
        kind=Kind(row["kind"]),
        attempts=row["attempts"],
        worker=row["worker"],
        progress_done=row["progress_done"],
        progress_total=row["progress_total"],
    )


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
