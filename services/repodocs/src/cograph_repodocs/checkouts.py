"""Where each repository's files are, and bringing a managed checkout to the default branch's tip.

A repository registered by clone URL gets a checkout the service owns, under
`checkout_dir/<repository id>`; one registered by checkout path is read where it is and
never modified. Every git command that reads a clone URL is admitted first (remotes.py), on
each sync too: a name may resolve elsewhere today than at registration.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import uuid
from pathlib import Path
from typing import Protocol

import msgspec

from cograph_repodocs.credentials import Credentials
from cograph_repodocs.domain.clone_urls import ClonePolicy
from cograph_repodocs.domain.discovery import NOTHING_IGNORED, GitIgnored
from cograph_repodocs.domain.rules import Ref, redact_credentials
from cograph_repodocs.git import Git, GitError
from cograph_repodocs.remotes import FetchFailed, Remotes

log = logging.getLogger(__name__)


class Checkout(msgspec.Struct, frozen=True):
    root: Path
    commit_sha: str
    """Empty when the directory is not a git repository (a plain checkout path)."""
    ignored: GitIgnored = NOTHING_IGNORED
    """What git ignores there: only a checkout path has any (a managed one is cleaned)."""


class Source(Protocol):
    """What a checkout is made from: a stored repository (a RepositoryRow), named by its shape so
    that this module, infrastructure, depends on no store."""

    @property
    def id(self) -> uuid.UUID: ...
    @property
    def ref(self) -> Ref: ...
    @property
    def clone_url(self) -> str | None: ...
    @property
    def checkout_path(self) -> str | None: ...
    @property
    def default_branch(self) -> str: ...


class Checkouts:
    def __init__(
        self,
        git: Git,
        checkout_dir: Path,
        remotes: Remotes | None = None,
        credentials: Credentials | None = None,
    ) -> None:
        self.git = git  # also reads files at a commit (files.read_committed_range)
        self._dir = checkout_dir.resolve()
        # Without one given, the default policy: https and ssh to public addresses only.
        self._remotes = remotes or Remotes(ClonePolicy(), git.ssh_command)
        self._credentials = credentials or Credentials("", git.ssh_command)

    def root(self, repository: Source) -> Path:
        if repository.checkout_path is not None:
            return Path(repository.checkout_path)
        return self._dir / str(repository.id)

    async def probe_remote(self, clone_url: str, branch: str) -> None:
        """GitError unless git can read `clone_url` (and its `branch`, when one is named);
        InvalidArgument when the clone policy refuses it."""
        patterns = ["HEAD", f"refs/heads/{branch}"] if branch else ["HEAD"]
        listed = await self._read_remote(clone_url, "ls-remote", "--symref", "--", clone_url, *patterns)
        if branch and f"\trefs/heads/{branch}\n" not in listed + "\n":
            raise GitError(f"{redact_credentials(clone_url)} has no branch {branch!r}")

    async def update(self, repository: Source) -> Checkout:
        """Fetch the default branch's tip into the managed checkout; a checkout path is left as it is."""
        root = self.root(repository)
        if repository.checkout_path is not None:
            if not root.is_dir():
                raise GitError(f"checkout path {root} is not a directory any more")
            return Checkout(root, await self.head(root), await self.ignored(root))
        assert repository.clone_url is not None
        if (root / ".git").is_dir():
            await self._fetch(repository.clone_url, root, repository.default_branch)
        else:
            await self._clone(repository.clone_url, repository.default_branch, root)
        return Checkout(root, await self.head(root))

    async def restore(self, repository: Source, commit_sha: str) -> None:
        """Put a managed checkout back on `commit_sha` after a failed sync, so that files read from it
        match the index again. Best effort: the index is what a failed sync must never damage."""
        if repository.checkout_path is not None or not commit_sha:
            return
        try:
            await self.git.run("-C", str(self.root(repository)), "reset", "--quiet", "--hard", commit_sha)
        except GitError as error:
            log.warning("could not restore the checkout of %s to %s: %s", repository.ref, commit_sha, error)

    async def remove(self, repository: Source) -> None:
        """Delete a managed checkout (a checkout path is never touched). Renamed aside first, so
        that a removal cut short never leaves something that looks like a checkout."""
        if repository.checkout_path is not None:
            return
        root = self.root(repository)
        aside = root.parent / f".{root.name}.{uuid.uuid4().hex[:8]}.deleted"
        try:
            await asyncio.to_thread(root.rename, aside)
        except FileNotFoundError:  # never cloned (its first sync had not fetched it yet)
            return
        await asyncio.to_thread(shutil.rmtree, aside, ignore_errors=True)

    async def listed(self) -> list[tuple[uuid.UUID | None, Path]]:
        """The checkouts in the checkout directory with their repository's id, and (with None)
        what a removal cut short left aside. Clones in progress are not listed."""

        def listed() -> list[tuple[uuid.UUID | None, Path]]:
            found: list[tuple[uuid.UUID | None, Path]] = []
            if not self._dir.is_dir():
                return found
            for entry in self._dir.iterdir():
                if entry.name.startswith(".") and entry.name.endswith(".deleted"):
                    found.append((None, entry))
                    continue
                try:
                    repository_id = uuid.UUID(entry.name)
                except ValueError:
                    continue
                if str(repository_id) == entry.name and entry.is_dir():
                    found.append((repository_id, entry))
            return found

        return await asyncio.to_thread(listed)

    async def remove_path(self, path: Path) -> None:
        """Remove one entry listed() answered."""
        await asyncio.to_thread(shutil.rmtree, path, ignore_errors=True)

    async def head(self, root: Path) -> str:
        try:
            # safe.directory: a checkout path may belong to another user; reading its HEAD is harmless.
            out = await self.git.run("-c", f"safe.directory={root}", "-C", str(root), "rev-parse", "HEAD")
        except GitError:
            return ""
        return out.strip()

    async def ignored(self, root: Path) -> GitIgnored:
        """What git ignores under `root`; nothing when it is not inside a git working tree."""
        try:
            listed = await self.git.run(
                *("-c", f"safe.directory={root}", "-C", str(root), "ls-files", "-z"),
                *("--others", "--ignored", "--exclude-standard", "--directory"),
            )
        except GitError:
            return NOTHING_IGNORED
        return GitIgnored(frozenset(path for path in listed.split("\0") if path))

    async def _clone(self, clone_url: str, branch: str, root: Path) -> None:
        # Cloned beside its final place and renamed: an interrupted clone never looks like a checkout.
        await asyncio.to_thread(root.parent.mkdir, parents=True, exist_ok=True)
        partial = root.parent / f".{root.name}.{uuid.uuid4().hex[:8]}.partial"
        args = ["clone", "--quiet", "--no-tags", "--single-branch", "--depth", "1"]
        if branch:
            args += ["--branch", branch]
        try:
            await self._read_remote(clone_url, *args, "--", clone_url, str(partial))
            await asyncio.to_thread(_replace, partial, root)
        finally:
            with contextlib.suppress(FileNotFoundError):
                await asyncio.to_thread(shutil.rmtree, partial)

    async def _fetch(self, clone_url: str, root: Path, branch: str) -> None:
        where = ["-C", str(root)]
        # The URL admitted, not `origin`: what is checked is what is fetched. HEAD of the remote
        # is its default branch when none was registered.
        await self._read_remote(
            clone_url,
            *where,
            *("fetch", "--quiet", "--no-tags", "--depth", "1", "--", clone_url, branch or "HEAD"),
        )
        await self.git.run(*where, "reset", "--quiet", "--hard", "FETCH_HEAD")
        # -x as well: nothing but the commit's own files may be indexed.
        await self.git.run(*where, "clean", "--quiet", "-ffdx")

    async def _read_remote(self, clone_url: str, *args: str) -> str:
        """`git <args>`, which reads `clone_url`, once the clone policy admits it. A network
        remote's failure is FetchFailed, git's words going to the log only: whoever registered
        the URL would read in them whether a port is open. A local source's failure keeps
        them (only administrators register one, and only they see its sync errors)."""
        admitted = await self._remotes.admit(clone_url)
        try:
            async with self._credentials.applied(admitted) as access:
                return await self.git.run(*access.options, *args, env=access.env)
        except GitError as error:
            if not admitted.network:
                raise
            log.warning("git could not read %s: %s", redact_credentials(clone_url), error)
            raise FetchFailed.of(str(error)) from None


def _replace(source: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    source.rename(target)
