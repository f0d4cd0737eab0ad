"""Repositories: registering one (the checks that need I/O, the row, the first sync), finding one
by id or by name, listing them, their access facts and their group grants; changing one (a new
branch is synced) and deleting one with everything kept of it."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import asyncpg
import msgspec

from cograph_db import Connection
from cograph_errors import InvalidArgument, NotFound, ServiceError
from cograph_repodocs.application.syncs import Syncs
from cograph_repodocs.checkouts import Checkouts
from cograph_repodocs.domain import clone_urls, rules
from cograph_repodocs.git import GitError
from cograph_repodocs.remotes import FetchFailed
from cograph_repodocs.stores.repositories import AccessRow, NewRepository, RepositoryRow, RepositoryStore
from cograph_repodocs.stores.syncs import SyncRow, SyncStore, SyncTrigger

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


class Change(msgspec.Struct, frozen=True, kw_only=True):
    """What an update changes: the fields given (UNSET leaves one as it is). A sync interval of
    None is the service's."""

    visibility: rules.Visibility | msgspec.UnsetType | None = msgspec.UNSET  # None: not one of the two
    default_branch: str | msgspec.UnsetType = msgspec.UNSET
    sync_interval_seconds: int | msgspec.UnsetType | None = msgspec.UNSET


class Repository(msgspec.Struct, frozen=True):
    """A repository as callers see it: its row and its newest sync (None before the first)."""

    row: RepositoryRow
    last_sync: SyncRow | None


async def _with_last_sync(connection: Connection, rows: Sequence[RepositoryRow]) -> list[Repository]:
    last = await SyncStore(connection).last([row.id for row in rows])
    return [Repository(row, last.get(row.id)) for row in rows]


class Repositories:
    def __init__(self, pool: asyncpg.Pool[Any], checkouts: Checkouts, syncs: Syncs) -> None:
        self._pool = pool
        self._checkouts = checkouts
        self._syncs = syncs

    async def register(self, request: Registration) -> Repository:
        """Validate, record, and queue the first sync (trigger `registration`)."""
        new = await self._checked(request)
        async with self._pool.acquire() as connection:
            repository_id = await RepositoryStore(connection).create(new)
        try:
            await self._syncs.sync(repository_id, SyncTrigger.REGISTRATION, force_relink=False, wait=False)
        except ServiceError as error:  # the service is stopping: the schedule will catch up
            log.info("first sync of %s not started: %s", new.ref, error.message)
        return await self.get(repository_id)

    async def get(self, repository_id: uuid.UUID) -> Repository:
        async with self._pool.acquire() as connection:
            row = await RepositoryStore(connection).require(repository_id)
            return (await _with_last_sync(connection, [row]))[0]

    async def get_by_name(self, host: str, owner: str, name: str) -> Repository:
        """The repository named host/owner/name in any letter case, or NotFound."""
        ref = rules.check_ref(host, owner, name)
        async with self._pool.acquire() as connection:
            store = RepositoryStore(connection)
            repository_id = await store.id_of(ref)
            if repository_id is None:
                raise NotFound(f"repository {ref} is not registered")
            row = await store.require(repository_id)
            return (await _with_last_sync(connection, [row]))[0]

    async def find(
        self, repository_ids: list[uuid.UUID], *, limit: int, after: Sequence[str | None]
    ) -> list[Repository]:
        """Those of repository_ids that exist, ordered by (host, owner, name, id), after that key."""
        async with self._pool.acquire() as connection:
            rows = await RepositoryStore(connection).find(repository_ids, limit=limit, after=after)
            return await _with_last_sync(connection, rows)

    async def access(self, repository_ids: Sequence[uuid.UUID]) -> list[AccessRow]:
        """The access facts of these repositories; of every one when none is named."""
        async with self._pool.acquire() as connection:
            return await RepositoryStore(connection).access(repository_ids or None)

    async def access_of(self, host: str, owner: str, name: str) -> AccessRow | None:
        """The access facts of the repository named host/owner/name in any letter case; None when
        there is none. A name no repository can have is refused as get_by_name refuses it."""
        ref = rules.check_ref(host, owner, name)
        async with self._pool.acquire() as connection:
            return await RepositoryStore(connection).access_of(ref)

    async def add_grant(self, repository_id: uuid.UUID, group: str) -> Repository:
        group = rules.check_group(group)
        async with self._pool.acquire() as connection, connection.transaction():
            store = RepositoryStore(connection)
            await store.require(repository_id)
            await store.add_grant(repository_id, group)
            row = await store.require(repository_id)
            return (await _with_last_sync(connection, [row]))[0]

    async def remove_grant(self, repository_id: uuid.UUID, group: str) -> Repository:
        async with self._pool.acquire() as connection, connection.transaction():
            store = RepositoryStore(connection)
            # A missing repository is named before a bad group, as it always was.
            await store.require(repository_id)
            await store.remove_grant(repository_id, rules.check_group(group))
            row = await store.require(repository_id)
            return (await _with_last_sync(connection, [row]))[0]

    async def update(self, repository_id: uuid.UUID, change: Change) -> Repository:
        """Change what `change` gives; a new branch is checked on the remote first, then synced."""
        if all(value is msgspec.UNSET for value in msgspec.structs.astuple(change)):
            raise InvalidArgument(
                "nothing to change: give at least one of visibility, default_branch and sync_interval_seconds"
            )
        visibility = change.visibility
        if visibility is not msgspec.UNSET:
            visibility = rules.check_visibility(visibility)
        interval = change.sync_interval_seconds
        if isinstance(interval, int):
            interval = rules.check_sync_interval(interval)
        branch = change.default_branch
        if branch is not msgspec.UNSET:
            branch = rules.check_branch(branch)
            async with self._pool.acquire() as connection:
                before = await RepositoryStore(connection).require(repository_id)
            if branch != before.default_branch:
                await self._check_branch(before, branch)
        async with self._pool.acquire() as connection, connection.transaction():
            store = RepositoryStore(connection)
            row = await store.lock(repository_id)
            changed = row
            if visibility is not msgspec.UNSET:
                changed = msgspec.structs.replace(changed, visibility=visibility)
            if interval is not msgspec.UNSET:
                changed = msgspec.structs.replace(changed, sync_interval_seconds=interval)
            if branch is not msgspec.UNSET and branch != row.default_branch:
                changed = msgspec.structs.replace(
                    changed, default_branch=branch, web_url=_web_url_for(row, branch)
                )
            await store.update(changed)
        if changed.default_branch != row.default_branch:
            try:
                await self._syncs.sync(repository_id, SyncTrigger.MANUAL, force_relink=False, wait=False)
            except ServiceError as error:  # the service is stopping: the schedule will catch up
                log.info("sync of %s's new branch not started: %s", row.ref, error.message)
        return await self.get(repository_id)

    async def delete(self, repository_id: uuid.UUID) -> None:
        """Delete the repository and every row of it in one transaction, after stopping its sync
        here; then its managed checkout. A search reading a hit's rows after the commit finds none."""
        async with self._syncs.held_off(repository_id):
            async with self._pool.acquire() as connection, connection.transaction():
                store = RepositoryStore(connection)
                row = await store.require(repository_id)
                if not await store.delete(repository_id):
                    raise NotFound(f"repository {repository_id} does not exist")
            await self._checkouts.remove(row)
        log.info("deleted repository %s (%s)", row.ref, repository_id)

    async def prune_checkouts(self) -> int:
        """Remove the checkouts of repositories that no longer exist: deleted through another
        replica that shares the directory, or left by a removal cut short. Listed before the
        repositories are read: a checkout is cloned only after its repository's row exists."""
        listed = await self._checkouts.listed()
        ids = [repository_id for repository_id, _ in listed if repository_id is not None]
        if not listed:
            return 0
        async with self._pool.acquire() as connection:
            # access(None) would list them all: ask for the listed ones only (none: a nil id).
            existing = {row.id for row in await RepositoryStore(connection).access(ids or [uuid.UUID(int=0)])}
        gone = [path for repository_id, path in listed if repository_id not in existing]
        for path in gone:
            await self._checkouts.remove_path(path)
        if gone:
            log.info("removed %d checkout(s) of deleted repositories: %s", len(gone), [p.name for p in gone])
        return len(gone)

    async def _check_branch(self, repository: RepositoryRow, branch: str) -> None:
        """A branch to track: only a clone URL's, and only one the remote has."""
        if repository.clone_url is None:
            raise InvalidArgument(
                f"repository {repository.ref} is read from a checkout path, as its directory is:"
                " it tracks no branch"
            )
        try:
            await self._checkouts.probe_remote(repository.clone_url, branch)
        except FetchFailed as error:
            raise InvalidArgument(str(error)) from None
        except GitError as error:
            raise InvalidArgument(f"default_branch {branch!r} cannot be tracked: {error}") from None

    async def _checked(self, request: Registration) -> NewRepository:
        ref = rules.check_ref(request.host, request.owner, request.name)
        visibility = rules.check_visibility(request.visibility)
        owner = rules.check_subject(request.owner_subject)
        branch = rules.check_branch(request.default_branch)
        web_url = rules.check_web_url(request.web_url)
        if (request.clone_url is None) == (request.checkout_path is None):
            raise InvalidArgument("give exactly one of clone_url and checkout_path")
        url: str | None = None
        path: str | None = None
        if request.checkout_path is not None:
            path = rules.check_checkout_path(request.checkout_path)
            if not await asyncio.to_thread(Path(path).is_dir):
                raise InvalidArgument(f"checkout_path {path!r} is not an existing directory")
        else:
            assert request.clone_url is not None
            url = rules.check_clone_url(request.clone_url)
            remote = clone_urls.parse_remote(url)
            if remote is not None:
                clone_urls.check_no_credentials(remote)
            try:
                await self._checkouts.probe_remote(url, branch)
            except FetchFailed as error:  # its fixed words: git's would say whether a port is open
                raise InvalidArgument(str(error)) from None
            except GitError as error:
                raise InvalidArgument(
                    f"clone_url {rules.redact_credentials(url)!r} cannot be read: {error}"
                ) from None
            web_url = web_url or rules.derive_web_url(url, branch)
        return NewRepository(
            ref=ref,
            clone_url=url,
            checkout_path=path,
            visibility=visibility,
            owner_subject=owner,
            default_branch=branch,
            web_url=web_url,
        )


def _web_url_for(repository: RepositoryRow, branch: str) -> str:
    """The web URL after a branch change: derived again when it was derived from the old branch,
    as given otherwise."""
    url = repository.clone_url or ""
    if repository.web_url and repository.web_url == rules.derive_web_url(url, repository.default_branch):
        return rules.derive_web_url(url, branch)
    return repository.web_url
