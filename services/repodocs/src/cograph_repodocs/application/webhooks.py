"""Push webhooks: a verified push to the tracked branch of registered repositories queues one sync
of each; everything else is answered without work, or refused.

The order is the same for every host (domain/webhooks.py reads and verifies): the payload names
the repository and so its host; no [[webhooks]] secret for that host is forbidden; a missing or
wrong signature is unauthenticated; a delivery id seen within the replay window, or a push the host
dates outside it, is not acted on; then the branch and the repositories.

Bursts coalesce: while a repository's webhook sync is queued or running, further pushes mark it
pending, and one more sync follows the running one (which may have fetched before they landed).
Delivery ids are remembered in this process (repodocs runs one replica) for the window.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import asyncpg
import msgspec

from cograph_errors import ServiceError
from cograph_repodocs.application.syncs import Syncs
from cograph_repodocs.credentials import Credentials
from cograph_repodocs.domain.webhooks import (
    Delivery,
    Provider,
    Refused,
    Verdict,
    check_fresh,
    is_push,
    location,
    read,
    verify,
)
from cograph_repodocs.stores.repositories import RepositoryStore
from cograph_repodocs.stores.syncs import SyncTrigger

log = logging.getLogger(__name__)

# Delivery ids remembered at most: a flood of verified deliveries cannot grow the process.
MAX_REMEMBERED = 10_000


class Outcome(msgspec.Struct, frozen=True):
    verdict: Verdict
    reason: str
    queued: int = 0


class Webhooks:
    def __init__(
        self,
        pool: asyncpg.Pool[Any],
        syncs: Syncs,
        credentials: Credentials,
        window_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._pool = pool
        self._syncs = syncs
        self._credentials = credentials
        self._window = window_seconds
        self._clock = clock
        self._seen: OrderedDict[tuple[Provider, str], float] = OrderedDict()
        self._pending: set[uuid.UUID] = set()
        self._drains: dict[uuid.UUID, asyncio.Task[None]] = {}

    async def deliver(self, provider: Provider, headers: Mapping[str, str], body: bytes) -> Outcome:
        """What becomes of one delivery (headers with lower-case names, the body as received)."""
        try:
            delivery = read(provider, headers, body)
            await self._authenticate(delivery, headers, body)
            return await self._act(delivery)
        except Refused as refused:
            log.info("%s webhook %s: %s", provider, refused.verdict, refused.reason)
            return Outcome(refused.verdict, refused.reason)

    async def _authenticate(self, delivery: Delivery, headers: Mapping[str, str], body: bytes) -> None:
        host = delivery.host
        if host is None:
            if not is_push(delivery):
                raise Refused(Verdict.IGNORED, f"event {delivery.event or '(none)'}: nothing to do")
            raise Refused(Verdict.IGNORED, "the push names no repository URL: nothing to do")
        secret = (await asyncio.to_thread(self._credentials.current)).webhook_secret(host)
        if secret is None:
            raise Refused(
                Verdict.FORBIDDEN,
                f"no webhook secret for host {host}: an administrator adds one to the credentials file"
                " ([[webhooks]], COGRAPH_REPODOCS__CREDENTIALS_FILE)",
            )
        verify(delivery.provider, headers, body, secret.reveal())

    async def _act(self, delivery: Delivery) -> Outcome:
        if not is_push(delivery):
            raise Refused(Verdict.IGNORED, f"event {delivery.event or '(none)'}: nothing to do")
        if not delivery.delivery_id:
            raise Refused(Verdict.FORBIDDEN, "the delivery has no id: a replay could not be told apart")
        now = self._clock()
        check_fresh(delivery, now, self._window)
        if self._seen_before(delivery, now):
            raise Refused(Verdict.IGNORED, f"delivery {delivery.delivery_id} was received before")
        branch = delivery.branch
        if branch is None:
            raise Refused(Verdict.IGNORED, f"{delivery.ref or 'no ref'} is not a branch: nothing to do")
        targets = await self._tracking(delivery, branch)
        if not targets:
            raise Refused(Verdict.IGNORED, f"no registered repository tracks {branch} of this repository")
        for repository_id in targets:
            self._queue(repository_id)
        log.info("%s push to %s queued the sync of %d repositories", delivery.provider, branch, len(targets))
        return Outcome(Verdict.QUEUED, f"a sync of {len(targets)} repositories queued", len(targets))

    def _seen_before(self, delivery: Delivery, now: float) -> bool:
        while self._seen and (
            len(self._seen) >= MAX_REMEMBERED or next(iter(self._seen.values())) < now - self._window
        ):
            self._seen.popitem(last=False)
        key = (delivery.provider, delivery.delivery_id)
        if key in self._seen:
            return True
        self._seen[key] = now
        return False

    async def _tracking(self, delivery: Delivery, branch: str) -> list[uuid.UUID]:
        """The registered repositories the push is about whose tracked branch it is (an empty
        default branch tracks the remote's default, which the payload names)."""
        async with self._pool.acquire() as connection:
            cloned = await RepositoryStore(connection).cloned()
        places = set(delivery.locations)
        return [
            row.id
            for row in cloned
            if location(row.clone_url) in places and (row.default_branch or delivery.default_branch) == branch
        ]

    def _queue(self, repository_id: uuid.UUID) -> None:
        self._pending.add(repository_id)
        if repository_id not in self._drains:
            self._drains[repository_id] = asyncio.create_task(
                self._drain(repository_id), name=f"webhook-sync-{repository_id}"
            )

    async def _drain(self, repository_id: uuid.UUID) -> None:
        """Sync while pushes are pending: one sync for every burst that arrived before it began."""
        try:
            while repository_id in self._pending:
                self._pending.discard(repository_id)
                try:
                    row = await self._syncs.sync(
                        repository_id, SyncTrigger.WEBHOOK, force_relink=False, wait=True
                    )
                except ServiceError as error:  # removed meanwhile, or the service is stopping
                    log.info("webhook sync of %s not run: %s", repository_id, error.message)
                    return
                if row.trigger is not SyncTrigger.WEBHOOK:
                    # It joined a sync begun otherwise, which may have fetched before the push.
                    self._pending.add(repository_id)
        except Exception:
            log.exception("webhook sync of %s failed", repository_id)
        finally:
            self._pending.discard(repository_id)
            self._drains.pop(repository_id, None)

    async def stop(self) -> None:
        tasks = list(self._drains.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
