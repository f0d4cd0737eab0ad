"""Registering repositories: the checks that need I/O, the row, and the first sync."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import asyncpg
import msgspec

from cograph_errors import InvalidArgument, ServiceError
from cograph_repodocs.checkouts import Checkouts
from cograph_repodocs.domain import rules
from cograph_repodocs.git import GitError
from cograph_repodocs.runner import SyncRunner
from cograph_repodocs.stores.repositories import NewRepository, RepositoryRow, RepositoryStore
from cograph_repodocs.stores.syncs import SyncTrigger

log = logging.getLogger(__name__)


class Registration(msgspec.Struct, frozen=True, kw_only=True):
    host: str
    owner: str
    name: str
    clone_url: str | None = None
    checkout_path: str | None = None
    visibility: rules.Visibility | None = None
    owner_subject: str = ""
    default_branch: str = ""
    web_url: str = ""


class Registry:
    def __init__(self, pool: asyncpg.Pool[Any], checkouts: Checkouts, runner: SyncRunner) -> None:
        self._pool = pool
        self._checkouts = checkouts
        self._runner = runner

    async def register(self, request: Registration) -> RepositoryRow:
        """Validate, record, and queue the first sync (trigger `registration`)."""
        new = await self._checked(request)
        async with self._pool.acquire() as connection:
            store = RepositoryStore(connection)
            repository_id = await store.create(new)
        try:
            await self._runner.sync(repository_id, SyncTrigger.REGISTRATION, force_relink=False, wait=False)
        except ServiceError as error:  # the service is stopping: the schedule will catch up
            log.info("first sync of %s not started: %s", new.ref, error.message)
        async with self._pool.acquire() as connection:
            row = await RepositoryStore(connection).get(repository_id)
        assert row is not None
        return row

    async def _checked(self, request: Registration) -> NewRepository:
        ref = rules.check_ref(request.host, request.owner, request.name)
        visibility = rules.check_visibility(request.visibility)
        owner = rules.check_subject(request.owner_subject)
        branch = rules.check_branch(request.default_branch)
        web_url = rules.check_web_url(request.web_url)
        if (request.clone_url is None) == (request.checkout_path is None):
            raise InvalidArgument("give exactly one of clone_url and checkout_path")
        if request.checkout_path is not None:
            path = rules.check_checkout_path(request.checkout_path)
            if not await asyncio.to_thread(Path(path).is_dir):
                raise InvalidArgument(f"checkout_path {path!r} is not an existing directory")
            return NewRepository(
                ref=ref,
                clone_url=None,
                checkout_path=path,
                visibility=visibility,
                owner_subject=owner,
                default_branch=branch,
                web_url=web_url,
            )
        assert request.clone_url is not None
        url = rules.check_clone_url(request.clone_url)
        try:
            await self._checkouts.probe_remote(url, branch)
        except GitError as error:
            raise InvalidArgument(
                f"clone_url {rules.redact_credentials(url)!r} cannot be read: {error}"
            ) from None
        return NewRepository(
            ref=ref,
            clone_url=url,
            checkout_path=None,
            visibility=visibility,
            owner_subject=owner,
            default_branch=branch,
            web_url=web_url or rules.derive_web_url(url, branch),
        )
