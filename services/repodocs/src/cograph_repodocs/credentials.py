"""Git credentials from the file an administrator names (COGRAPH_REPODOCS__CREDENTIALS_FILE), and
handing one to a single git command without it ever being on a command line, in a URL or in the
environment.

The file is looked at (stat) on every use and read again when its modification time, size or
inode changed: a rotated Secret is used by the next git command, without a restart. A file that
cannot be read or parsed then keeps the last good credentials, and says why in the log.

For one git command the matching secret is written into a private temporary directory (0700,
files 0600) and removed when the command ends:
- https: git asks a credential helper named on its command line by the path of that file only
  (`-c credential.helper=` first, so that no helper of the server's own config stores the token);
- ssh: `GIT_SSH_COMMAND` gets the key file, the known_hosts file, `StrictHostKeyChecking=yes`
  and no other known hosts, ahead of its own options (ssh takes the first value of an option).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from cograph_repodocs.domain.credentials import (
    EMPTY,
    Credential,
    CredentialsError,
    CredentialsFile,
    HttpsCredential,
    parse,
)
from cograph_repodocs.remotes import Access

log = logging.getLogger(__name__)

_Stamp = tuple[int, int, int]


class Credentials:
    def __init__(self, path: str, ssh_command: str) -> None:
        """Reads the file now: one that exists but cannot be used stops the service at start
        (CredentialsError). A file not there yet (an optional Secret) means no credentials until
        it appears. An empty path: no credentials at all."""
        self._path = Path(path) if path else None
        self._ssh_command = ssh_command
        self._stamp: _Stamp | None = None
        self._current = EMPTY
        if self._path is not None:
            stamp = _stamp(self._path)
            if stamp is None:
                log.warning("the credentials file %s does not exist: git uses no credentials", self._path)
            else:
                self._current = self._read(self._path)
                self._stamp = stamp

    def current(self) -> CredentialsFile:
        """The credentials as the file holds them now (read again when it changed)."""
        if self._path is None:
            return EMPTY
        stamp = _stamp(self._path)
        if stamp is None or stamp == self._stamp:
            return self._current
        try:
            self._current = self._read(self._path)
        except (CredentialsError, OSError) as error:
            # The last good credentials stay; the next use reads again (a rotation in progress).
            log.error(
                "the credentials file %s changed and cannot be used, keeping the last: %s", self._path, error
            )
            return self._current
        self._stamp = stamp
        log.info("the credentials file %s changed: read again", self._path)
        return self._current

    @staticmethod
    def _read(path: Path) -> CredentialsFile:
        try:
            return parse(path.read_text(encoding="utf-8"))
        except CredentialsError as error:
            raise CredentialsError(f"the credentials file {path}: {error}") from None

    @contextlib.asynccontextmanager
    async def applied(self, access: Access) -> AsyncIterator[Access]:
        """`access` with the credential its remote matches (if any) handed to git, for one command."""
        if access.remote is None:
            yield access
            return
        credential = (await asyncio.to_thread(self.current)).match(access.remote)
        if credential is None:
            yield access
            return
        directory = await asyncio.to_thread(_private_directory)
        try:
            yield await asyncio.to_thread(self._handed, access, credential, directory)
        finally:
            await asyncio.to_thread(shutil.rmtree, directory, True)

    def _handed(self, access: Access, credential: Credential, directory: Path) -> Access:
        if isinstance(credential, HttpsCredential):
            secret = directory / "credential"
            _write_private(secret, f"username={credential.username}\npassword={credential.token.reveal()}\n")
            # A helper is a shell snippet when it starts with '!': it prints the file on `get`
            # and ignores `store` and `erase`. Only its path is on the command line.
            helper = f'!f() {{ test "$1" = get && cat {shlex.quote(str(secret))}; }}; f'
            options = (*access.options, "-c", "credential.helper=", "-c", f"credential.helper={helper}")
            return Access(network=access.network, options=options, env=access.env, remote=access.remote)
        key, known_hosts = directory / "key", directory / "known_hosts"
        _write_private(key, credential.private_key.reveal())
        _write_private(known_hosts, credential.known_hosts)
        ours = [
            *("-o", "IdentitiesOnly=yes", "-o", f"IdentityFile={key}", "-o", "IdentityAgent=none"),
            *("-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={known_hosts}"),
            *("-o", "GlobalKnownHostsFile=/dev/null"),
        ]
        program, *rest = shlex.split(access.env.get("GIT_SSH_COMMAND", self._ssh_command))
        env = {**access.env, "GIT_SSH_COMMAND": shlex.join([program, *ours, *rest])}
        return Access(network=access.network, options=access.options, env=env, remote=access.remote)


def _stamp(path: Path) -> _Stamp | None:
    """What tells a changed file: a Secret's update swaps a symlink (a new inode), an editor may
    keep the size. None when it is not there."""
    try:
        stat = path.stat()
    except OSError:  # not there (yet, or during a swap), or not ours to read
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


def _private_directory() -> Path:
    return Path(tempfile.mkdtemp(prefix="cograph-git-"))  # 0700, this process's user only


def _write_private(path: Path, text: str) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
