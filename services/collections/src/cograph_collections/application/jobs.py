"""Jobs: what callers ask of the queue (read it, retry a job, queue a re-embed), the heartbeat
that tells the sweep a running job is alive, and what becomes of a job whose worker was lost."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from cograph_collections.domain.jobs import (
    Job,
    JobQuery,
    Kind,
    Lost,
    backoff_seconds,
    check_retryable,
    interrupted_error,
)
from cograph_collections.stores.collections import CollectionStore
from cograph_collections.stores.jobs import JobStore
from cograph_db import DATABASE_ERRORS
from cograph_errors import NotFound

log = logging.getLogger(__name__)

# How a running job reports its progress: (done, total).
Progress = Callable[[int, int], Awaitable[None]]


class Jobs:
    def __init__(self, pool: asyncpg.Pool[Any], *, max_attempts: int) -> None:
        self._pool = pool
        # How many runs a job whose worker is lost gets (COGRAPH_COLLECTIONS__JOB_MAX_ATTEMPTS).
        self.max_attempts = max_attempts

    async def get(self, job_id: uuid.UUID) -> Job:
        async with self._pool.acquire() as connection:
            job = await JobStore(connection).get(job_id)
        if job is None:
            raise NotFound(f"job {job_id} does not exist")
        return job

    async def find(self, query: JobQuery) -> list[Job]:
        """The jobs the query asks for, newest first."""
        async with self._pool.acquire() as connection:
            return await JobStore(connection).find(query)

    async def re_embed(self, collection_id: uuid.UUID, requested_by: str) -> Job:
        """Queue the job that re-chunks what older chunker parameters built, then embeds every
        chunk anew."""
        async with self._pool.acquire() as connection:
            await CollectionStore(connection).get(collection_id)
            jobs = JobStore(connection)
            job_id = await jobs.enqueue(
                collection_id, Kind.EMBED, requested_by=requested_by, payload={"all": True}
            )
            job = await jobs.get(job_id)
        assert job is not None
        return job

    async def retry(self, job_id: uuid.UUID, requested_by: str) -> Job:
        """A new job row for the same work."""
        async with self._pool.acquire() as connection:
            jobs = JobStore(connection)
            job = await jobs.get(job_id)
            if job is None:
                raise NotFound(f"job {job_id} does not exist")
            check_retryable(job)
            new_id = await jobs.enqueue(
                job.collection_id, job.kind, requested_by=requested_by, retry_of=job.id, payload=job.payload
            )
            retried = await jobs.get(new_id)
        assert retried is not None
        return retried


async def beat(
    pool: asyncpg.Pool[Any],
    job_id: uuid.UUID,
    seconds: float,
    progress: Callable[[], tuple[int, int]],
    *,
    attempt: int | None = None,
    on_taken: Callable[[], object] | None = None,
) -> None:
    """Record that a running job is alive, with its progress (done, total), every `seconds` until
    cancelled. A failed beat is logged and the next one tried: a moment without the database must
    not stop the heart of a job that is still working, or the sweep would fail it. A job no longer
    running as run `attempt` (a sweep took it, thinking its worker dead) stops the beat, and
    on_taken is called: the job is another run's now."""
    while True:
        await asyncio.sleep(seconds)
        try:
            async with pool.acquire() as connection:
                ours = await JobStore(connection).heartbeat(job_id, *progress(), attempt)
        except DATABASE_ERRORS:
            log.warning("heartbeat of job %s failed", job_id, exc_info=True)
            continue
        if not ours:
            log.warning("job %s is no longer this run's (attempt %s): it was swept", job_id, attempt)
            if on_taken is not None:
                on_taken()
            return


async def settle_interrupted(
    store: JobStore,
    lost: Lost,
    reason: str,
    *,
    max_attempts: int,
    backoff_base_seconds: float,
    done: int | None = None,
    total: int | None = None,
) -> str:
    """Queue again a job whose run ended without its handler's say (its worker silent, stopping,
    or without its database), after a backoff; or end it with the reason when it may not run
    again. Its run is recorded either way. Answers what became of it, for the log. In a
    transaction that holds the job's row (JobStore.stale or JobStore.running)."""
    error = interrupted_error(lost, reason, max_attempts)
    if error is None:
        delay = backoff_seconds(lost.attempts, backoff_base_seconds)
        if await store.requeue(lost.id, delay, reason, done, total):
            return f"requeued after attempt {lost.attempts} of {max_attempts} ({reason}), for {delay:g} s on"
        # The same work was queued while it ran: that job does it, and says it continues this one.
        successor = await store.mark_successor(lost.id)
        error = f"the worker running this job was lost ({reason}); job {successor} does its work"
    await store.end_interrupted(lost.id, error, reason, done, total)
    return f"ended: {error}"
