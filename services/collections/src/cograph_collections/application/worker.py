"""The job worker: claims queued jobs, runs them with a heartbeat, and sweeps jobs whose worker died.

Several workers, on several machines, may run at once: a claim is an UPDATE over
`SELECT ... FOR UPDATE SKIP LOCKED`, so a job runs once at a time. A job that fails on its own
(its handler raised) stops for a person. A job whose run was interrupted, not by itself, is
queued again with backoff, up to COGRAPH_COLLECTIONS__JOB_MAX_ATTEMPTS runs: its worker went
silent (the sweep finds it), its worker was stopping and cut it off, or the database could not
be reached. A stopping worker claims nothing more and lets running jobs finish for a while.
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
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import asyncpg
from prometheus_client import REGISTRY, Gauge, Histogram

from cograph_collections.application.jobs import Progress, beat, settle_interrupted
from cograph_collections.domain.jobs import Claimed, Kind
from cograph_collections.stores.jobs import JobStore, listen
from cograph_db import DATABASE_ERRORS, Connection
from cograph_db.outage import database_unreachable
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


Handler = Callable[[Claimed, Progress], Coroutine[Any, Any, None]]


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
                await self.sweep()
                async with self._pool.acquire() as connection:
                    JOBS_QUEUED.set(await JobStore(connection).queued())
            except DATABASE_ERRORS:
                log.exception("stale-job sweep failed; retrying")
            await asyncio.sleep(self._settings.heartbeat_seconds)

    async def sweep(self) -> list[uuid.UUID]:
        """Requeue (or end, when it may not run again) each running job whose worker went silent;
        answers their ids."""
        async with self._pool.acquire() as connection, connection.transaction():
            store = JobStore(connection)
            stale = await store.stale(self._settings.stale_after_seconds)
            for lost, silent in stale:
                outcome = await settle_interrupted(
                    store,
                    lost,
                    f"no heartbeat for {silent} s",
                    max_attempts=self._settings.job_max_attempts,
                    backoff_base_seconds=self._settings.job_backoff_seconds,
                )
                log.warning("job %s lost its worker %s: %s", lost.id, lost.worker, outcome)
        return [lost.id for lost, _ in stale]

    async def run_once(self) -> bool:
        """Claim and run one job; answers whether there was one."""
        async with self._pool.acquire() as connection, connection.transaction():
            job = await JobStore(connection).claim(self.name)
        if job is None:
            return False
        started = time.perf_counter()
        progress = {"done": 0, "total": 0}

        async def report(done: int, total: int) -> None:
            known = progress["total"]
            progress.update(done=done, total=total)
            if total != known:  # the size of the work, shown at once rather than at the next beat
                await self._beat_now(job, done, total)

        # Its own task, so that a sweep that took the job away can stop it alone.
        work = asyncio.create_task(self._handlers[job.kind](job, report), name=f"job-{job.id}")
        heart = asyncio.create_task(
            beat(
                self._pool,
                job.id,
                self._settings.heartbeat_seconds,
                lambda: (progress["done"], progress["total"]),
                attempt=job.attempt,
                on_taken=work.cancel,
            )
        )
        error: str | None = None
        interrupted: str | None = None
        cut_off = False
        try:
            await work  # cancelling this worker (a stop) cancels the job with it
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is None or current.cancelling() == 0:
                # Not this worker's stop: a sweep requeued the job while this worker was silent,
                # and another run owns it now.
                log.warning("job %s (%s) was taken from this worker; dropped", job.id, job.kind)
                JOB_DURATION.labels(job.kind.value, "taken").observe(time.perf_counter() - started)
                return True
            cut_off = True
            interrupted = "its worker stopped before the job finished"
        except Exception as exc:
            if database_unreachable(exc):
                log.warning("job %s (%s) lost the database", job.id, job.kind, exc_info=True)
                interrupted = "the database could not be reached"
            else:
                log.exception("job %s (%s) failed", job.id, job.kind)
                error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        finally:
            heart.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heart
        done, total = progress["done"], progress["total"]
        if interrupted is not None:
            reason = f"{interrupted} ({done} of {total} done)"
            await self._record(job, lambda connection: self._interrupt(connection, job, reason, done, total))
            status = "interrupted"
        else:
            await self._record(
                job,
                lambda connection: JobStore(connection).finish(
                    job.id, error, done=done, total=total, attempt=job.attempt
                ),
            )
            status = "error" if error else "success"
        JOB_DURATION.labels(job.kind.value, status).observe(time.perf_counter() - started)
        log.info("job %s (%s) %s", job.id, job.kind, status)
        if cut_off:
            raise asyncio.CancelledError
        return True

    async def _beat_now(self, job: Claimed, done: int, total: int) -> None:
        """One heartbeat out of turn; a failure is only logged, the next beat tries again."""
        try:
            async with self._pool.acquire() as connection:
                await JobStore(connection).heartbeat(job.id, done, total, job.attempt)
        except DATABASE_ERRORS:
            log.warning("progress of job %s not recorded yet", job.id, exc_info=True)

    async def _interrupt(
        self, connection: Connection, job: Claimed, reason: str, done: int, total: int
    ) -> None:
        async with connection.transaction():
            store = JobStore(connection)
            lost = await store.running(job.id, job.attempt)
            if lost is None:  # swept meanwhile: the sweep has settled it
                return
            outcome = await settle_interrupted(
                store,
                lost,
                reason,
                max_attempts=self._settings.job_max_attempts,
                backoff_base_seconds=self._settings.job_backoff_seconds,
                done=done,
                total=total,
            )
        log.warning("job %s (%s) interrupted: %s", job.id, job.kind, outcome)

    async def _record(self, job: Claimed, write: Callable[[Connection], Awaitable[None]]) -> None:
        """Record how the job's run ended, retrying through a database outage for as long as the
        sweep would wait: a job left `running` holds back every later job of its collection and
        kind. A stopping worker tries once more, so as not to outstay its drain; the sweep ends
        (or requeues) the rest."""
        deadline = time.monotonic() + self._settings.stale_after_seconds
        delay = 0.1
        while True:
            try:
                async with self._pool.acquire() as connection:
                    await write(connection)
                return
            except DATABASE_ERRORS:
                if self._stopping.is_set() or time.monotonic() + delay > deadline:
                    raise
                log.warning(
                    "recording the end of job %s failed; retrying in %gs", job.id, delay, exc_info=True
                )
                with contextlib.suppress(TimeoutError):  # a stop cuts the wait short
                    await asyncio.wait_for(self._stopping.wait(), timeout=delay)
                delay = min(2 * delay, self._settings.heartbeat_seconds)
