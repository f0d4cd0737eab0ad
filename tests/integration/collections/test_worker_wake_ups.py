"""The worker through database trouble: a job whose end cannot be written at once is still ended,
and a queued job is claimed at once after its NOTIFY, even when the LISTEN connection was lost or
the NOTIFY came while an empty claim ran. Each waited up to the sweep (120 s) or the poll before."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import msgspec
import pytest

from cograph_collections.app import MIGRATIONS
from cograph_collections.application.worker import Worker
from cograph_collections.domain.jobs import Claimed, Kind
from cograph_collections.stores.jobs import JobStore
from cograph_db import connect, open_service_pool
from cograph_settings import CollectionsSettings, Settings

Report = Callable[[int, int], Awaitable[None]]
# The poll that stands in for a lost NOTIFY: long, so a job claimed sooner was woken.
POLL_SECONDS = 5.0
LISTENERS = "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database()"


class Queue:
    def __init__(
        self, pool: asyncpg.Pool[Any], collection_id: uuid.UUID, watcher: asyncpg.Connection
    ) -> None:
        self.pool = pool
        self.collection_id = collection_id
        self.watcher = watcher  # a connection the tests never cut, to look on

    async def enqueue(self) -> uuid.UUID:
        async with self.pool.acquire() as connection:
            return await JobStore(connection).enqueue(self.collection_id, Kind.RESOLVE_LINKS)

    async def until_ended(self, job_id: uuid.UUID, within: float) -> asyncpg.Record:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            job = await self.watcher.fetchrow(
                "SELECT status, error FROM collections.md_jobs WHERE id = $1", job_id
            )
            if job["status"] in ("success", "error"):
                return job
            await asyncio.sleep(0.05)
        raise AssertionError(f"job {job_id} is still {job['status']} after {within:g} s")

    async def listener(self) -> int:
        """The process id of the worker's LISTEN connection."""
        pid: int | None = await self.watcher.fetchval(LISTENERS)
        assert pid is not None, "no connection listens"
        return pid

    async def until_another_listener_than(self, pid: int) -> None:
        for _ in range(100):
            if await self.watcher.fetchval(LISTENERS + " AND pid <> $1", pid):
                return
            await asyncio.sleep(0.05)
        raise AssertionError("no other connection came to listen")


@pytest.fixture
async def queue(settings: Settings, database: str) -> AsyncIterator[Queue]:
    pool = await open_service_pool(database, settings.database, MIGRATIONS)
    watcher = await connect(database)
    try:
        collection_id = await pool.fetchval(
            "INSERT INTO md_collections (name, visibility, owner)"
            " VALUES ('c', 'public', 'alice') RETURNING id"
        )
        yield Queue(pool, collection_id, watcher)
    finally:
        await watcher.close()
        await pool.close()


def worker_settings(settings: Settings) -> CollectionsSettings:
    return msgspec.structs.replace(
        settings.collections, heartbeat_seconds=POLL_SECONDS, stale_after_seconds=12 * POLL_SECONDS
    )


async def test_a_job_that_meets_an_outage_is_requeued_once_the_database_is_back(
    queue: Queue, settings: Settings, database: str
) -> None:
    """The outage cuts the job's work and then the write of what became of it. That write was not
    tried again: the job stayed `running`, and the next job of its kind waited until the sweep.
    Now it is written once the database is back: the job, interrupted not by its own error, is
    queued again and runs to its end."""
    name = await queue.pool.fetchval("SELECT current_database()")
    admin = await asyncpg.connect(database, database="postgres")  # another database: it stays up
    outage: list[asyncio.Task[None]] = []

    async def end_outage() -> None:
        await asyncio.sleep(1.0)
        await admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')

    async def meets_an_outage(job: Claimed, report: Report) -> None:
        if outage:
            return
        await admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
        await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> $2",
            name,
            queue.watcher.get_server_pid(),
        )
        outage.append(asyncio.create_task(end_outage()))  # while the job fails and ends
        async with queue.pool.acquire() as connection:  # the job's own work meets the outage
            await connection.fetchval("SELECT 1")

    again = msgspec.structs.replace(worker_settings(settings), job_backoff_seconds=0.0)
    worker = Worker(queue.pool, database, {Kind.RESOLVE_LINKS: meets_an_outage}, again)
    try:
        first = await queue.enqueue()
        await worker.start()
        resumed = await queue.until_ended(first, within=POLL_SECONDS)
        second = await queue.enqueue()
        succeeded = await queue.until_ended(second, within=POLL_SECONDS)
        record = await queue.watcher.fetchrow(
            "SELECT attempts, interruptions FROM collections.md_jobs WHERE id = $1", first
        )
    finally:
        await worker.stop()
        await asyncio.gather(*outage)
        await admin.close()
    assert (resumed["status"], succeeded["status"]) == ("success", "success")
    assert record["attempts"] == 2
    [interruption] = json.loads(record["interruptions"])
    assert interruption["reason"] == "the database could not be reached (0 of 0 done)"


async def test_a_worker_that_lost_its_listen_connection_is_still_woken(
    queue: Queue, settings: Settings, database: str
) -> None:
    """A database restart or an idle-connection reaper ends the LISTEN connection; it was never
    opened again, so every queued job waited for the poll."""
    ran: list[float] = []

    async def note(job: Claimed, report: Report) -> None:
        ran.append(time.monotonic())

    worker = Worker(queue.pool, database, {Kind.RESOLVE_LINKS: note}, worker_settings(settings))
    await worker.start()
    try:
        await queue.until_ended(await queue.enqueue(), within=POLL_SECONDS / 2)
        listener = await queue.listener()
        assert await queue.watcher.fetchval("SELECT pg_terminate_backend($1)", listener)
        await queue.until_another_listener_than(listener)
        enqueued = time.monotonic()
        await queue.until_ended(await queue.enqueue(), within=POLL_SECONDS / 2)
    finally:
        await worker.stop()
    assert ran[-1] - enqueued < POLL_SECONDS / 2


async def test_a_notify_that_comes_while_an_empty_claim_runs_is_not_lost(
    queue: Queue, settings: Settings, database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job committed after an empty claim's snapshot, its NOTIFY delivered before the loop
    went to sleep: the loop cleared the wake-up after the claim, losing it."""
    ran = asyncio.Event()

    async def note(job: Claimed, report: Report) -> None:
        ran.set()

    claim = JobStore.claim
    racing = asyncio.Event()

    async def claim_then_a_job_commits(self: JobStore, worker: str) -> Claimed | None:
        found = await claim(self, worker)
        if found is None and racing.is_set():
            racing.clear()
            await queue.enqueue()
            await asyncio.sleep(0.1)  # its NOTIFY arrives before this claim returns
        return found

    monkeypatch.setattr(JobStore, "claim", claim_then_a_job_commits)
    worker = Worker(queue.pool, database, {Kind.RESOLVE_LINKS: note}, worker_settings(settings))
    await worker.start()
    try:
        await asyncio.sleep(0.2)  # idle, waiting
        racing.set()
        async with queue.pool.acquire() as connection:  # any NOTIFY makes the idle loop claim
            await connection.execute("SELECT pg_notify('md_jobs', 'nothing')")
        await asyncio.wait_for(ran.wait(), timeout=POLL_SECONDS / 2)
    finally:
        await worker.stop()


async def test_a_stop_while_the_end_of_a_job_is_retried_does_not_wait_out_the_drain(
    queue: Queue, settings: Settings, database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing a job's end is retried through an outage, but not past a stop: the retries
    went on until the drain ran out, and stop() waited for all of it."""
    ended = asyncio.Event()

    async def fail(job: Claimed, report: Report) -> None:
        ended.set()
        raise RuntimeError("the job's work failed")

    async def finish_in_an_outage(self: JobStore, *args: Any, **kwargs: Any) -> None:
        raise ConnectionRefusedError("the database is down")

    drain = 3 * POLL_SECONDS
    quick = msgspec.structs.replace(worker_settings(settings), worker_drain_seconds=drain)
    worker = Worker(queue.pool, database, {Kind.RESOLVE_LINKS: fail}, quick)
    job_id = await queue.enqueue()
    monkeypatch.setattr(JobStore, "finish", finish_in_an_outage)
    await worker.start()
    try:
        await asyncio.wait_for(ended.wait(), timeout=POLL_SECONDS)
        await asyncio.sleep(0.5)  # retrying the end now
    finally:
        started = time.monotonic()
        await worker.stop()
        took = time.monotonic() - started
    assert took < POLL_SECONDS, f"stop() took {took:.1f} s of its {drain:g} s drain"
    # Not ended: the sweep will say the worker was lost.
    assert (
        await queue.watcher.fetchval("SELECT status FROM collections.md_jobs WHERE id = $1", job_id)
        == "running"
    )


async def test_a_connection_that_fails_to_listen_is_closed_and_another_opened(
    queue: Queue, settings: Settings, database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening the LISTEN connection again can fail half-way (connected, LISTEN refused): that
    connection stayed open, one more for each failed try, for as long as the worker ran; and a
    failure other than a database error ended the retries, leaving the worker to the poll."""
    worker = Worker(queue.pool, database, {}, worker_settings(settings))
    await worker.start()
    opened: list[asyncpg.Connection] = []
    connect_ = asyncpg.connect
    add_listener = asyncpg.Connection.add_listener

    async def noted_connect(*args: Any, **kwargs: Any) -> asyncpg.Connection:
        connection = await connect_(*args, **kwargs)
        opened.append(connection)
        return connection

    async def refused_once(self: asyncpg.Connection, *args: Any) -> None:
        if len(opened) == 1:
            raise RuntimeError("LISTEN refused")  # not a database error: retried all the same
        await add_listener(self, *args)

    monkeypatch.setattr(asyncpg, "connect", noted_connect)
    monkeypatch.setattr(asyncpg.Connection, "add_listener", refused_once)
    try:
        listener = await queue.listener()
        assert await queue.watcher.fetchval("SELECT pg_terminate_backend($1)", listener)
        await queue.until_another_listener_than(listener)
    finally:
        await worker.stop()
    assert len(opened) == 2
    assert opened[0].is_closed()
