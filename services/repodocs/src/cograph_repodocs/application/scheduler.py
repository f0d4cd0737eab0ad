"""Scheduled syncs: every repository once per interval (its own, else the service's), inside the
service process.

Due-ness comes from repo_syncs (the newest sync's start), so a restart does not
re-sync everything at once and replicas agree on what is due; one scheduled sync
runs at a time per process, which bounds the load a schedule adds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import asyncpg

from cograph_errors import ServiceError
from cograph_repodocs.application.syncs import Syncs
from cograph_repodocs.stores.repositories import RepositoryStore
from cograph_repodocs.stores.syncs import SyncTrigger

log = logging.getLogger(__name__)

# The longest the scheduler sleeps between looks, so that a new repository is not forgotten for an hour.
MAX_POLL_SECONDS = 60.0


def interval_in_force(interval: float, webhook_interval: float, webhooks_on: bool) -> float:
    """The schedule's interval: with push webhooks on (a [[webhooks]] secret in the credentials
    file) the schedule is only the safety net, and runs every `webhook_interval` when that is
    longer; 0 (no schedule) stays 0."""
    if interval > 0 and webhook_interval > 0 and webhooks_on:
        return max(interval, webhook_interval)
    return interval


class Scheduler:
    def __init__(
        self,
        pool: asyncpg.Pool[Any],
        syncs: Syncs,
        interval_seconds: float,
        *,
        webhook_interval_seconds: float = 0.0,
        webhooks_on: Callable[[], bool] = lambda: False,
    ) -> None:
        self._pool = pool
        self._syncs = syncs
        self._base_interval = interval_seconds
        self._webhook_interval = webhook_interval_seconds
        self._webhooks_on = webhooks_on
        self._task: asyncio.Task[None] | None = None

    @property
    def _interval(self) -> float:
        return interval_in_force(self._base_interval, self._webhook_interval, self._webhooks_on())

    def start(self) -> None:
        """Begin scheduling. An interval of 0 schedules only the repositories that set their own."""
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="repodocs-scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        while True:
            try:
                await self.run_due()
            except Exception:
                # Nothing may end the schedule (a database hiccup, a bug): the next look retries.
                log.exception("scheduled syncs failed; trying again in %.0f s", self._poll_seconds)
            await asyncio.sleep(self._poll_seconds)

    @property
    def _poll_seconds(self) -> float:
        # A repository's own interval is at least a minute: looking once a minute serves it.
        return min(self._interval, MAX_POLL_SECONDS) if self._interval > 0 else MAX_POLL_SECONDS

    async def run_due(self) -> int:
        """Sync every repository that is due, one after the other; answers how many were synced."""
        async with self._pool.acquire() as connection:
            due = await RepositoryStore(connection).due(self._interval)
        done = 0
        for repository_id in due:
            try:
                row = await self._syncs.sync(
                    repository_id, SyncTrigger.SCHEDULE, force_relink=False, wait=True
                )
            except ServiceError as error:  # removed meanwhile, or the service is stopping
                log.info("scheduled sync of %s not run: %s", repository_id, error.message)
                continue
            done += 1
            log.info("scheduled sync of %s ended: %s", repository_id, row.status)
        return done
