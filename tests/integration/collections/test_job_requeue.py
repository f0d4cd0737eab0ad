"""A job whose run was interrupted, not by itself (its worker went silent, was stopping, or lost
the database), is queued again with backoff until it has had COGRAPH_COLLECTIONS__JOB_MAX_ATTEMPTS
runs, each interruption recorded; a job that fails on its own content stops for a person."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
import msgspec
import pytest

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_collections.app import create_service
from cograph_collections.application.worker import Worker
from cograph_collections.domain.jobs import Claimed, Kind
from cograph_collections.stores.jobs import JobStore
from cograph_db import create_pool
from cograph_grpc import open_channel
from cograph_settings import CollectionsSettings
from support.collections import Running

Report = Callable[[int, int], Awaitable[None]]


@dataclass
class Quiet:
    """The collections service without any worker of its own (the tests run theirs), its
    stub, and a pool on its database."""

    stub: pb_grpc.CollectionsServiceAsyncStub
    pool: asyncpg.Pool[Any]
    collections: CollectionsSettings
    dsn: str

    async def job(self, job_id: uuid.UUID) -> pb.Job:
        return (await self.stub.GetJob(pb.GetJobRequest(job_id=str(job_id)))).job

    async def enqueue(self, collection_id: str) -> uuid.UUID:
        async with self.pool.acquire() as connection:
            return await JobStore(connection).enqueue(uuid.UUID(collection_id), Kind.RESOLVE_LINKS)

    async def claim(self, worker: str) -> Claimed | None:
        async with self.pool.acquire() as connection, connection.transaction():
            return await JobStore(connection).claim(worker)

    async def silence(self, job_id: uuid.UUID) -> None:
        """Its worker's last heartbeat an hour ago."""
        await self.pool.execute(
            "UPDATE md_jobs SET heartbeat_at = now() - interval '1 hour' WHERE id = $1", job_id
        )

    def worker(self, handlers: dict[Kind, Any], **settings: Any) -> Worker:
        return Worker(self.pool, self.dsn, handlers, msgspec.structs.replace(self.collections, **settings))


@pytest.fixture
async def quiet(service: Running, collection: pb.Collection, database: str) -> AsyncIterator[Quiet]:
    """Made after the collection (the service that made it is stopped here)."""
    await service.host.stop()  # its in-process worker must not take the jobs
    host = await create_service(service.settings, database, service.counter)
    await host.start("127.0.0.1", 0, 0)
    channel = open_channel(f"127.0.0.1:{host.grpc.port}", service.settings.grpc)
    pool = await create_pool(database, service.settings.database, schema="collections")
    try:
        yield Quiet(pb_grpc.CollectionsServiceStub(channel), pool, service.settings.collections, database)
    finally:
        await pool.close()
        await channel.close(None)
        await host.stop()


async def test_a_silent_workers_job_is_requeued_with_backoff_until_its_runs_are_spent(
    quiet: Quiet, collection: pb.Collection
) -> None:
    job_id = await quiet.enqueue(collection.id)
    sweeper = quiet.worker({}, job_backoff_seconds=30.0)
    max_attempts = quiet.collections.job_max_attempts
    assert max_attempts == 3  # the default
    for attempt in range(1, max_attempts + 1):
        claimed = await quiet.claim(f"host:dead{attempt}")
        assert claimed is not None
        assert (claimed.id, claimed.attempt) == (job_id, attempt)
        await quiet.silence(job_id)
        assert await sweeper.sweep() == [job_id]
        job = await quiet.job(job_id)
        assert job.attempts == attempt
        assert job.max_attempts == max_attempts
        assert [i.worker for i in job.interruptions] == [f"host:dead{n}" for n in range(1, attempt + 1)]
        assert all(i.reason.startswith("no heartbeat for 36") for i in job.interruptions)
        if attempt == max_attempts:
            break
        assert job.status == pb.JOB_STATUS_QUEUED
        assert job.error == ""
        # The backoff doubles: 30 s, then 60 s; no worker claims the job before it ends.
        wait = job.not_before.ToDatetime(dt.UTC) - dt.datetime.now(dt.UTC)
        assert 30 * 2 ** (attempt - 1) - 5 < wait.total_seconds() <= 30 * 2 ** (attempt - 1)
        assert await quiet.claim("host:eager") is None
        await quiet.pool.execute("UPDATE md_jobs SET not_before = now() WHERE id = $1", job_id)  # it ends
    assert job.status == pb.JOB_STATUS_ERROR
    assert job.error.startswith("the worker running this job was lost 3 times (last: no heartbeat for 36")
    assert job.error.endswith(" s); retry it")
    assert not job.HasField("not_before")
    assert await quiet.claim("host:eager") is None


async def test_a_job_that_fails_on_its_own_content_stops_for_a_person(
    quiet: Quiet, collection: pb.Collection
) -> None:
    async def failing(job: Claimed, report: Report) -> None:
        await report(0, 4)
        raise ValueError("the document cannot be parsed")

    job_id = await quiet.enqueue(collection.id)
    worker = quiet.worker({Kind.RESOLVE_LINKS: failing}, job_backoff_seconds=0.0)
    assert await worker.run_once()
    assert await worker.sweep() == []
    job = await quiet.job(job_id)
    assert (job.status, job.error) == (pb.JOB_STATUS_ERROR, "ValueError: the document cannot be parsed")
    assert (job.attempts, list(job.interruptions)) == (1, [])
    assert await quiet.claim("host:eager") is None


async def test_a_job_cut_off_by_a_stopping_worker_runs_again_on_another(
    quiet: Quiet, collection: pb.Collection
) -> None:
    started = asyncio.Event()

    async def endless(job: Claimed, report: Report) -> None:
        await report(1, 3)
        started.set()
        await asyncio.Event().wait()

    async def quick(job: Claimed, report: Report) -> None:
        await report(2, 2)

    job_id = await quiet.enqueue(collection.id)
    stopping = quiet.worker({Kind.RESOLVE_LINKS: endless}, worker_drain_seconds=0.2, job_backoff_seconds=0.0)
    await stopping.start()
    await asyncio.wait_for(started.wait(), timeout=10)
    await stopping.stop()
    job = await quiet.job(job_id)
    assert job.status == pb.JOB_STATUS_QUEUED
    [interruption] = job.interruptions
    assert interruption.worker == stopping.name
    assert interruption.reason == "its worker stopped before the job finished (1 of 3 done)"
    assert (interruption.progress_done, interruption.progress_total) == (1, 3)

    assert await quiet.worker({Kind.RESOLVE_LINKS: quick}).run_once()
    job = await quiet.job(job_id)
    assert (job.status, job.attempts, len(job.interruptions)) == (pb.JOB_STATUS_SUCCESS, 2, 1)
    assert (job.progress_done, job.progress_total) == (2, 2)


async def test_a_job_that_loses_the_database_is_requeued_not_failed(
    quiet: Quiet, collection: pb.Collection
) -> None:
    """Its connection is cut under it (as a database restart does): the run is an interruption,
    not the job's own failure."""
    admin = await asyncpg.connect(quiet.dsn)

    async def cut(job: Claimed, report: Report) -> None:
        async with quiet.pool.acquire() as connection:
            await admin.execute("SELECT pg_terminate_backend($1)", connection.get_server_pid())
            await connection.fetchval("SELECT 1")

    try:
        job_id = await quiet.enqueue(collection.id)
        assert await quiet.worker({Kind.RESOLVE_LINKS: cut}, job_backoff_seconds=0.0).run_once()
    finally:
        await admin.close()
    job = await quiet.job(job_id)
    assert (job.status, job.error) == (pb.JOB_STATUS_QUEUED, "")
    assert [i.reason for i in job.interruptions] == ["the database could not be reached (0 of 0 done)"]


async def test_the_size_of_the_work_is_recorded_before_the_work(
    quiet: Quiet, collection: pb.Collection
) -> None:
    """A job's total shows as soon as its handler knows it, not at the next heartbeat."""
    counted, release = asyncio.Event(), asyncio.Event()

    async def counts_first(job: Claimed, report: Report) -> None:
        await report(0, 7)
        counted.set()
        await release.wait()

    job_id = await quiet.enqueue(collection.id)
    worker = quiet.worker(
        {Kind.RESOLVE_LINKS: counts_first}, heartbeat_seconds=30.0, stale_after_seconds=90.0
    )
    await worker.start()
    try:
        await asyncio.wait_for(counted.wait(), timeout=10)
        job = await quiet.job(job_id)
    finally:
        release.set()
        await worker.stop()
    assert (job.status, job.progress_done, job.progress_total) == (pb.JOB_STATUS_RUNNING, 0, 7)


async def test_a_worker_whose_job_was_requeued_meanwhile_drops_it(
    quiet: Quiet, collection: pb.Collection
) -> None:
    """A worker silent long enough to be swept (its heartbeats lost) but still running must not
    run the job beside the next run, nor record its end over it: its next beat stops it."""
    started, stopped = asyncio.Event(), asyncio.Event()

    async def endless(job: Claimed, report: Report) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    job_id = await quiet.enqueue(collection.id)
    slow = quiet.worker({Kind.RESOLVE_LINKS: endless}, heartbeat_seconds=0.2, stale_after_seconds=1.0)
    sweeper = quiet.worker({}, job_backoff_seconds=30.0)
    await slow.start()
    try:
        await asyncio.wait_for(started.wait(), timeout=10)
        for _ in range(20):  # a beat may land between the two statements: then again
            await quiet.silence(job_id)
            await sweeper.sweep()  # or the slow worker's own sweep, first
            if (await quiet.job(job_id)).status == pb.JOB_STATUS_QUEUED:
                break
        else:
            pytest.fail("no sweep found the silenced job")
        await asyncio.wait_for(stopped.wait(), timeout=5)
        await asyncio.sleep(0.5)  # what the dropped run would record, it would have by now
        job = await quiet.job(job_id)
    finally:
        await slow.stop()
    assert (job.status, job.attempts, len(job.interruptions)) == (pb.JOB_STATUS_QUEUED, 1, 1)
