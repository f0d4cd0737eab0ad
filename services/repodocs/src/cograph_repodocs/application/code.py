"""Code: a source file's lines as the index knows them. A managed checkout is read at the commit
its last successful sync indexed (its working tree moves to the new tip as soon as a sync starts);
a checkout path, read where it is and never modified, as it is now."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import asyncpg
import msgspec

from cograph_errors import NotFound, Unavailable
from cograph_repodocs.checkouts import Checkouts
from cograph_repodocs.files import FileRange, read_committed_range, read_range
from cograph_repodocs.git import GitError
from cograph_repodocs.stores.repositories import RepositoryStore
from cograph_repodocs.stores.syncs import SyncStore

log = logging.getLogger(__name__)


class SourceLines(msgspec.Struct, frozen=True):
    lines: FileRange
    commit_sha: str
    """The commit the index holds ('' before the first successful sync)."""


class Code:
    def __init__(self, pool: asyncpg.Pool[Any], checkouts: Checkouts, *, max_file_bytes: int) -> None:
        self._pool = pool
        self._checkouts = checkouts
        self._max_file_bytes = max_file_bytes

    async def read_range(
        self, repository_id: uuid.UUID, path: str, start_line: int, end_line: int
    ) -> SourceLines:
        """Lines start..end (1-based, inclusive; 0 = first / last) of the source file at `path`."""
        async with self._pool.acquire() as connection:
            repository = await RepositoryStore(connection).require(repository_id)
            commit = await SyncStore(connection).synced_commit(repository_id)
        root = self._checkouts.root(repository)
        if not await asyncio.to_thread(root.is_dir):
            raise NotFound(f"repository {repository.ref} has no checkout yet: sync it first")
        most = self._max_file_bytes
        if repository.checkout_path is not None or not commit:  # a checkout path is read as it is
            found = await asyncio.to_thread(read_range, root, path, start_line, end_line, most)
            return SourceLines(found, commit)
        try:
            found = await read_committed_range(
                self._checkouts.git, root, commit, path, start_line, end_line, most
            )
        except GitError as error:
            log.warning("reading %s of %s at %s: %s", path, repository.ref, commit, error)
            raise Unavailable(
                f"the checkout of {repository.ref} cannot be read at the indexed commit now: try again"
            ) from None
        return SourceLines(found, commit)
