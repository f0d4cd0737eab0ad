"""The job worker: claims queued jobs, runs them with a heartbeat, and sweeps jobs whose worker died.

Several workers, on several machines, may run at once: a claim is an UPDATE over
`SELECT ... FOR UPDATE SKIP LOCKED`, so a job runs once. Jobs never retry by themselves.
A stopping worker claims nothing more and lets running jobs finish for a while; a job it
must cut off is recorded as an error at once, saying so, rather than left to the sweep.
A database outage does not leave a job `running` (its end is recorded once the database is
back) nor a worker deaf (its LISTEN connection is opened again).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from prometheus_client import REGISTRY, Gauge, Histogram

from cograph_collections.application.jobs import Progress, beat
from cograph_collections.domain.jobs import Claimed, Kind
from cograph_collections.stores.jobs import JobStore, listen
from cograph_db import DATABASE_ERRORS
from cograph_settings import CollectionsSettings

log = logging.getLogger(__name__)

# Published only by processes that run a worker (see _publish_job_metrics): every process imports
# this module, and a gateway or search pod reporting an empty queue would be a false reading.
JOBS_QUEUED = Gauge("cograph_jobs_queued", "Collection jobs waiting for a worker.", registry=None)
JOB_DURATION = Histogram(
    "cograph_job_duration_seconds",
    "Time a collection job ran, by kind and outcome.",
    ["kind", "status"],
    buckets=(0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600),
    registry=None,
)


@functools.cache  # once per process, however many workers it starts
def _publish_job_metrics() -> None:
    REGISTRY.register(JOBS_QUEUED)
    REGISTRY.register(JOB_DURATION)


Handler = Callable[[Claimed, Progress], Awaitable[None]]


class Worker:
    def __init__(
        self,
        pool: asyncpg.Pool[Any],
        dsn: str,
        handlers: dict[Kind, Handler],
        settings: CollectionsSettings,
    ) -> None:
        self._pool = pool
        self._dsn = dsn
        self._handlers = handlers
        self._settings = settings
        self.name = f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}"
        self._wakes: list[asyncio.Event] = []  # one per claiming loop
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._sweeper: asyncio.Task[None] | None = None
        self._listener: asyncpg.Connection[Any] | None = None
        self._relistening: asyncio.Task[None] | None = None

    async def start(self) -> None:
        _publish_job_metrics()
        self._stopping.clear()
        self._wakes = [asyncio.Event() for _ in range(self._settings.worker_concurrency)]
        await self._listen()
        self._tasks = [
            asyncio.create_task(self._loop(wake), name=f"worker-{i}") for i, wake in enumerate(self._wakes)
        ]
        self._sweeper = asyncio.create_task(self._sweep_loop(), name="worker-sweep")
        log.info("job worker %s started", self.name)

    async def _listen(self) -> None:
        """LISTEN on a connection of its own (a pooled one drops it when released), opened
        again whenever it is lost: a database restart or an idle-connection reaper must not
        leave every job waiting for the poll."""
        self._listener = await listen(self._dsn, self._wake_all, self._listener_lost)

    def _listener_lost(self) -> None:
        if not self._stopping.is_set():  # stop() closes it on purpose
            log.warning("job worker %s lost its LISTEN connection; opening another", self.name)
            self._relistening = asyncio.create_task(self._listen_again(), name="worker-listen")

    async def _listen_again(self) -> None:
        delay = 0.1
        while not self._stopping.is_set():
            try:
                await self._listen()
            except Exception:  # whatever it is, a worker that stops listening waits for the poll
                log.warning("job worker cannot LISTEN yet; retrying in %gs", delay, exc_info=True)
                await asyncio.sleep(delay)
                delay = min(2 * delay, self._settings.heartbeat_seconds)
                continue
            self._wake_all()  # jobs queued while nobody listened
            return

    def _wake_all(self) -> None:
        for wake in self._wakes:
            wake.set()

    async def stop(self) -> None:
        """Claim nothing more; running jobs get worker_drain_seconds to finish, then are cut off."""
        self._stopping.set()
        self._wake_all()  # idle loops leave at once
        loops, self._tasks = self._tasks, []
        if loops:
            drain = self._settings.worker_drain_seconds
            _, running = await asyncio.wait(loops, timeout=drain)
            if running:
                log.warning("job worker stopping: cutting off %d job(s) after %gs", len(running), drain)
            for task in running:
                task.cancel()
            for task in loops:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        if self._relistening is not None:
            self._relistening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._relistening
            self._relistening = None
        if self._listener is not None:
            await self._listener.close()
            self._listener = None

    async def _loop(self, wake: asyncio.Event) -> None:
        while not self._stopping.is_set():
            # Cleared before the claim, not after it: a NOTIFY that arrives while an empty
            # claim runs (a job committed after its snapshot) finds the event set.
            wake.clear()
            try:
                ran = await self.run_once()
            except DATABASE_ERRORS:
                log.exception("job worker cannot reach the database; retrying")
                ran = False
            if not ran and not self._stopping.is_set():
                with contextlib.suppress(TimeoutError):
                    # NOTIFY wakes us at once; the timeout is a safety net for a lost notification.
                    await asyncio.wait_for(wake.wait(), timeout=self._settings.heartbeat_seconds)

    async def _sweep_loop(self) -> None:
        while True:
            try:
                async with self._pool.acquire() as connection:
                    store = JobStore(connection)
                    for job_id in await store.sweep(self._settings.stale_after_seconds):
                        log.warning("job %s lost its worker; marked error", job_id)
                    JOBS_QUEUED.set(await store.queued())
            except DATABASE_ERRORS:
                log.exception("stale-job sweep failed; retrying")
            await asyncio.sleep(self._settings.heartbeat_seconds)

    async def run_once(self) -> bool:
        """Claim and run one job; answers whether there was one."""
        async with self._pool.acquire() as connection, connection.transaction():
            job = await JobStore(connection).claim(self.name)
        if job is None:
            return False
        started = time.perf_counter()
        progress = {"done": 0, "total": 0}

        async def report(done: int, total: int) -> None:
            progress.update(done=done, total=total)

        heart = asyncio.create_task(
            beat(
                self._pool,
                job.id,
                self._settings.heartbeat_seconds,
                lambda: (progress["done"], progress["total"]),
            )
        )
        error: str | None = None
        cut_off = False
        try:
            await self._handlers[job.kind](job, report)
        except asyncio.CancelledError:
            cut_off = True
            error = (
                f"the worker stopped before the job finished ({progress['done']} of "
                f"{progress['total']} done); retry it"
            )
        except Exception as exc:
            log.exception("job %s (%s) failed", job.id, job.kind)
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        finally:
            heart.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heart
        await self._finish(job.id, error, progress["done"], progress["total"])
        status = "error" if error else "success"
        JOB_DURATION.labels(job.kind.value, status).observe(time.perf_counter() - started)
        log.info("job %s (%s) %s", job.id, job.kind, status)
        if cut_off:
            raise asyncio.CancelledError
        return True

    async def _finish(self, job_id: uuid.UUID, error: str | None, done: int, total: int) -> None:
        """Record how the job ended, retrying through a database outage for as long as the sweep
        would wait: a job left `running` holds back every later job of its collection and kind.
        A stopping worker tries once more, so as not to outstay its drain; the sweep ends the rest."""
        deadline = time.monotonic() + self._settings.stale_after_seconds
        delay = 0.1
        while True:
            try:
                async with self._pool.acquire() as connection:
                    await JobStore(connection).finish(job_id, error, done=done, total=total)
                return
            except DATABASE_ERRORS:
                if self._stopping.is_set() or time.monotonic() + delay > deadline:
                    raise
                log.warning(
                    "recording the end of job %s failed; retrying in %gs", job_id, delay, exc_info=True
                )
                with contextlib.suppress(TimeoutError):  # a stop cuts the wait short
                    await asyncio.wait_for(self._stopping.wait(), timeout=delay)
                delay = min(2 * delay, self._settings.heartbeat_seconds)
