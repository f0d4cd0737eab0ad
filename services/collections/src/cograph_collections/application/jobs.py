"""Jobs: what callers ask of the queue (read it, retry a job, queue a re-embed), and the heartbeat
that tells the sweep a running job is alive."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from cograph_collections.domain.jobs import Job, JobQuery, Kind, check_retryable
from cograph_collections.stores.collections import CollectionStore
from cograph_collections.stores.jobs import JobStore
from cograph_db import DATABASE_ERRORS
from cograph_errors import NotFound

log = logging.getLogger(__name__)

# How a running job reports its progress: (done, total).
Progress = Callable[[int, int], Awaitable[None]]


class Jobs:
    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

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
