"""Running git: argument vectors only (never a shell string), a timeout on every command, no prompts."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from pathlib import Path

from cograph_repodocs.domain.rules import redact_credentials

# Enough of git's stderr to say what went wrong without flooding a sync record.
MAX_MESSAGE_CHARS = 2000


class GitError(RuntimeError):
    """A git command failed or timed out; the message is git's own explanation."""


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    # A remote asking for credentials must fail at once, not wait on a terminal nobody watches.
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_ASKPASS"] = "true"
    env["SSH_ASKPASS"] = "true"
    env["GIT_SSH_COMMAND"] = env.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    # Clone URLs come from users: local paths and file:// only, never a remote helper such as
    # ext::, which runs a command. A command that reaches the network names the one protocol
    # its admitted URL uses (remotes.py), so nothing unchecked leaves the host.
    env["GIT_ALLOW_PROTOCOL"] = "file"
    # Messages in English, so that errors read the same everywhere.
    env["LC_ALL"] = "C"
    return env


class Git:
    def __init__(self, timeout_seconds: float) -> None:
        self.timeout_seconds = timeout_seconds
        self._env = _environment()

    @property
    def ssh_command(self) -> str:
        """The ssh command git runs (GIT_SSH_COMMAND), which a pinned remote extends."""
        return self._env["GIT_SSH_COMMAND"]

    async def run(self, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> str:
        """stdout of `git <args>`, with `env` over git's environment; GitError with git's stderr
        when it fails or runs too long."""
        process = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=cwd,
            env={**self._env, **env} if env else self._env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # Its own process group: a timeout kills git's helpers too (ssh, git-remote-https),
            # which would otherwise hold the pipes open and the caller waiting.
            start_new_session=True,
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), self.timeout_seconds)
        except TimeoutError:
            await _kill(process)
            raise GitError(f"git {_command(args)} took longer than {self.timeout_seconds:g} s") from None
        except asyncio.CancelledError:
            await _kill(process)
            raise
        if process.returncode != 0:
            message = redact_credentials(stderr.decode(errors="replace").strip())
            message = message or f"exit status {process.returncode}"
            raise GitError(f"git {_command(args)} failed: {message[-MAX_MESSAGE_CHARS:]}")
        return stdout.decode(errors="replace")


def _command(args: tuple[str, ...]) -> str:
    """The subcommand, for messages: `-c k=v` options and `-C dir` come first and say little."""
    rest = list(args)
    while rest and rest[0] in ("-c", "-C"):
        rest = rest[2:]
    return rest[0] if rest else ""


async def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()
