"""Syncs: starting, joining and recording them, never two of one repository at once; and a
repository's sync history.

Within a process a lock and the table of running tasks decide; across processes
(replicas) the partial unique index repo_syncs_one_running does. A request for a
repository that is already syncing joins that sync instead of starting another.
A running sync beats a heartbeat; one whose process died is marked error by the
next request, so it never blocks its repository for good. A repository being deleted
is held off: its sync in this process is stopped, and no other starts here until the
delete is over; one running in another process finds its rows gone and stops quietly.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import re
import traceback
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import asyncpg
import msgspec

from cograph_db import DATABASE_ERRORS
from cograph_embeddings import EmbeddingError
from cograph_errors import FailedPrecondition, NotFound, ServiceError
from cograph_repodocs.application.pipeline import SyncPipeline
from cograph_repodocs.application.progress import SyncProgress
from cograph_repodocs.git import GitError
from cograph_repodocs.stores.repositories import RepositoryStore
from cograph_repodocs.stores.syncs import SyncRow, SyncStore, SyncTrigger

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 5.0
# How often a running sync's phase and counts are copied to its row, when they changed.
PROGRESS_SECONDS = 0.25
# A sync silent this long belongs to a process that died.
STALE_AFTER_SECONDS = 60.0
# How often a request waiting on another process's sync looks at it again.
POLL_SECONDS = 0.5
INTERRUPTED = "interrupted: the service stopped during the sync"
DELETED = "stopped: the repository is being deleted"
ABANDONED = "abandoned: the process running it stopped sending heartbeats"
# What raised_in counts as this service's code: all of it, not only this layer.
_SERVICE = __name__.partition(".")[0]


class Syncs:
    def __init__(self, pool: asyncpg.Pool[Any], pipeline: SyncPipeline) -> None:
        self._pool = pool
        self._pipeline = pipeline
        self._running: dict[uuid.UUID, tuple[uuid.UUID, asyncio.Task[None]]] = {}
        self._starting = asyncio.Lock()
        self._stopping = False
        # Repositories being deleted (a count: two deletes of one may overlap).
        self._held: collections.Counter[uuid.UUID] = collections.Counter()

    async def sync(
        self, repository_id: uuid.UUID, trigger: SyncTrigger, *, force_relink: bool, wait: bool
    ) -> SyncRow:
        """Start a sync (or join the one in progress); with `wait`, answer it once it has ended."""
        sync_id = await self._start(repository_id, trigger, force_relink)
        if wait:
            await self._wait(repository_id, sync_id)
        async with self._pool.acquire() as connection:
            row = await SyncStore(connection).get(sync_id)
        if row is None:
            raise NotFound(f"repository {repository_id} was deleted during its sync")
        return row

    async def request(self, repository_id: uuid.UUID, *, force_relink: bool, wait: bool) -> SyncRow:
        """A sync a caller asked for (trigger `manual`)."""
        return await self.sync(repository_id, SyncTrigger.MANUAL, force_relink=force_relink, wait=wait)

    async def history(
        self, repository_id: uuid.UUID, *, limit: int, after: Sequence[str | None]
    ) -> list[SyncRow]:
        """The repository's syncs, newest first, after that (started_at, id) key."""
        async with self._pool.acquire() as connection:
            await RepositoryStore(connection).require(repository_id)
            return await SyncStore(connection).history(repository_id, limit=limit, after=after)

    async def _start(self, repository_id: uuid.UUID, trigger: SyncTrigger, force_relink: bool) -> uuid.UUID:
        if self._stopping:
            raise FailedPrecondition("the service is stopping; sync again once it is back")
        async with self._starting, self._pool.acquire() as connection:
            if self._held[repository_id]:
                raise NotFound(f"repository {repository_id} is being deleted")
            await RepositoryStore(connection).require(repository_id)
            syncs = SyncStore(connection)
            sync_id = await _created(syncs, repository_id, trigger, force_relink)
            if sync_id is None:
                # Another sync is queued or running; if its process died, clear it and try once more.
                mine = [sid for sid, _ in self._running.values()]
                if await syncs.abandon_stale(repository_id, STALE_AFTER_SECONDS, ABANDONED, mine):
                    sync_id = await _created(syncs, repository_id, trigger, force_relink)
            if sync_id is None:
                active = await syncs.active(repository_id)
                if active is None:  # it ended between the two statements
                    sync_id = await _created(syncs, repository_id, trigger, force_relink)
                else:
                    if force_relink and not active.force_relink:
                        raise FailedPrecondition(
                            f"a sync of this repository is already {active.status} (sync {active.id}) and"
                            " does not re-link unchanged documents; ask for force_relink once it has ended"
                        )
                    return active.id
            if sync_id is None:
                raise FailedPrecondition("another sync of this repository started at the same moment; retry")
            task = asyncio.create_task(
                self._run(repository_id, sync_id, force_relink), name=f"sync-{sync_id}"
            )
            self._running[repository_id] = (sync_id, task)
            return sync_id

    async def _wait(self, repository_id: uuid.UUID, sync_id: uuid.UUID) -> None:
        entry = self._running.get(repository_id)
        if entry is not None and entry[0] == sync_id:
            # shield: a caller who gives up waiting must not cancel the sync itself.
            try:
                await asyncio.shield(entry[1])
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # the caller gave up
                # The sync was stopped (a delete, a shutdown): its row says how it ended.
            return
        # Run by another process (or already over): watch its row.
        while True:
            async with self._pool.acquire() as connection:
                row = await SyncStore(connection).get(sync_id)
            if row is None or row.finished:
                return
            await asyncio.sleep(POLL_SECONDS)

    async def _run(self, repository_id: uuid.UUID, sync_id: uuid.UUID, force_relink: bool) -> None:
        progress = SyncProgress()
        heartbeat = asyncio.create_task(self._beat(sync_id), name=f"heartbeat-{sync_id}")
        reporter = asyncio.create_task(self._report(sync_id, progress), name=f"progress-{sync_id}")
        root: Path | None = None
        branch: str | None = None
        status = "error"
        try:
            async with self._pool.acquire() as connection:
                await SyncStore(connection).mark_running(sync_id)
                repository = await RepositoryStore(connection).get(repository_id)
            if repository is None:
                raise NotFound("the repository was removed")
            root = self._pipeline.checkout_root(repository)
            branch = repository.default_branch
            await self._pipeline.run(repository, sync_id, force_relink=force_relink, progress=progress)
            status = "success"
        except asyncio.CancelledError:
            status = "interrupted"
            stopped = DELETED if self._held[repository_id] else INTERRUPTED
            await asyncio.shield(self._fail(sync_id, stopped))
            raise
        except Exception as error:
            if await self._exists(repository_id):
                log.warning("sync %s of repository %s failed", sync_id, repository_id, exc_info=True)
                await self._fail(sync_id, describe(error, root))
            else:  # deleted meanwhile (by another process): its sync has nothing left to record
                log.info("sync %s stopped: repository %s was deleted", sync_id, repository_id)
        finally:
            for task in (heartbeat, reporter):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            progress.observe(status)
            entry = self._running.get(repository_id)
            if entry is not None and entry[0] == sync_id:
                del self._running[repository_id]
        if branch is not None:
            await self._follow_branch(repository_id, branch)

    async def _follow_branch(self, repository_id: uuid.UUID, synced_branch: str) -> None:
        """Sync again when the tracked branch changed while this sync ran: a request made then
        joined this sync, which fetched the branch tracked before."""
        try:
            async with self._pool.acquire() as connection:
                now = await RepositoryStore(connection).get(repository_id)
            if now is None or now.default_branch == synced_branch:
                return
            await self._start(repository_id, SyncTrigger.MANUAL, force_relink=False)
        except ServiceError as error:  # deleted, or the service is stopping: nothing to follow
            log.info("no sync of %s's new branch: %s", repository_id, error.message)
        except DATABASE_ERRORS:
            log.warning("no sync of %s's new branch yet: the schedule will", repository_id, exc_info=True)

    async def _exists(self, repository_id: uuid.UUID) -> bool:
        try:
            async with self._pool.acquire() as connection:
                return await RepositoryStore(connection).get(repository_id) is not None
        except DATABASE_ERRORS:
            return True  # unknown: record the failure as failures are recorded

    @contextlib.asynccontextmanager
    async def held_off(self, repository_id: uuid.UUID) -> AsyncIterator[None]:
        """While the body runs (a delete), no sync of the repository runs in this process: the
        one in progress is stopped and awaited (its checkout restored), and none starts."""
        async with self._starting:
            self._held[repository_id] += 1
            entry = self._running.get(repository_id)
        try:
            if entry is not None:
                log.info("stopping sync %s: repository %s is being deleted", entry[0], repository_id)
                entry[1].cancel()
                await asyncio.gather(entry[1], return_exceptions=True)
                if self._running.get(repository_id) is entry:  # cancelled before it began
                    del self._running[repository_id]
            yield
        finally:
            self._held[repository_id] -= 1
            if not self._held[repository_id]:
                del self._held[repository_id]

    async def _fail(self, sync_id: uuid.UUID, message: str) -> None:
        try:
            async with self._pool.acquire() as connection:
                await SyncStore(connection).fail(sync_id, message)
        except DATABASE_ERRORS:
            # The heartbeat stops with us: the next sync will mark this one abandoned.
            log.exception("could not record the failure of sync %s", sync_id)

    async def _report(self, sync_id: uuid.UUID, progress: SyncProgress) -> None:
        """Copy the sync's phase and counts to its row while it runs, whenever they changed."""
        last: tuple[object, ...] | None = None
        failing = False
        while True:
            await asyncio.sleep(PROGRESS_SECONDS)
            phase, counts = progress.snapshot()
            seen = (phase, msgspec.structs.replace(counts, phase_seconds={}))
            if seen == last:
                continue
            try:
                async with self._pool.acquire() as connection:
                    if await SyncStore(connection).record_progress(sync_id, phase, counts):
                        last = seen
                failing = False
            except DATABASE_ERRORS:
                if not failing:  # once per outage, not four times a second
                    log.warning("progress of sync %s not recorded", sync_id, exc_info=True)
                failing = True

    async def _beat(self, sync_id: uuid.UUID) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            try:
                async with self._pool.acquire() as connection:
                    await SyncStore(connection).heartbeat(sync_id)
            except DATABASE_ERRORS:
                log.warning("heartbeat of sync %s failed", sync_id, exc_info=True)

    async def stop(self) -> None:
        """Cancel the syncs in progress; each records that it was interrupted."""
        self._stopping = True
        tasks = [task for _, task in self._running.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _created(
    syncs: SyncStore, repository_id: uuid.UUID, trigger: SyncTrigger, force_relink: bool
) -> uuid.UUID | None:
    """syncs.create, with a repository deleted since it was looked up named as missing."""
    try:
        return await syncs.create(repository_id, trigger, force_relink)
    except asyncpg.ForeignKeyViolationError:
        raise NotFound(f"repository {repository_id} does not exist") from None


def describe(error: Exception, checkout: Path | None = None) -> str:
    """The message a sync record keeps: the cause in words, never a stack trace. Every reader
    of the repository sees it, so the checkout's place on the server (shown to administrators
    only) becomes "<checkout>"."""
    if isinstance(error, GitError | EmbeddingError):
        message = str(error)
    elif isinstance(error, ServiceError):  # a refusal in words, such as the clone policy's
        message = error.message
    elif isinstance(error, asyncpg.PostgresError):
        message = f"database error: {error}"
    elif not str(error):
        # A timeout says nothing by itself: where it struck is the only clue left.
        message = f"{type(error).__name__} (no message) in {raised_in(error)}"
    else:
        message = f"{type(error).__name__}: {error}"
    return _without_checkout(message, checkout) if checkout is not None else message


def _without_checkout(message: str, checkout: Path) -> str:
    """message with the checkout's path (as given and as resolved) as "<checkout>", where it is a
    whole path: not inside a longer name (/srv/repos-old), and never the root itself."""
    for place in sorted({str(checkout), str(checkout.resolve())}, key=len, reverse=True):
        if place != "/":
            message = re.sub(re.escape(place) + r"(?![^/\s'\":,;)\]])", "<checkout>", message)
    return message


def raised_in(error: Exception) -> str:
    """The innermost function of this service that the error went through (else the innermost
    at all), as module.function: what the sync was doing when it failed."""
    frames = [frame for frame, _ in traceback.walk_tb(error.__traceback__)]
    if not frames:
        return "an unknown place"
    ours = [f for f in frames if str(f.f_globals.get("__name__", "")).startswith(f"{_SERVICE}.")]
    frame = (ours or frames)[-1]
    return f"{frame.f_globals.get('__name__', '?')}.{frame.f_code.co_qualname}"
