"""A real `cograph up` in a subprocess, as a person runs it: on a free port and a data directory of
its own, stopped with Ctrl-C. The browser tests and the fault suite share it.

`start_cograph_up` waits until /readyz answers 200 (failing with the process's output if it exits
first); `RunningCograph.stop` sends SIGINT and fails when the process or its embedded PostgreSQL
outlives it; `RunningCograph.kill` is the crash (SIGKILL, nothing cleaned up).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import msgspec
import pytest

from cograph_settings import ApiToken

READY_SECONDS = 180  # the embedded PostgreSQL's first start and the model's load, on a busy machine
STOP_SECONDS = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(log: Path, lines: int = 80) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError as error:
        return f"(no output: {error})"
    return "\n".join(text.splitlines()[-lines:])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def postmaster_pid(pgdata: Path) -> int | None:
    """The pid of the PostgreSQL running on `pgdata`, or None (no server, or a stale pid file)."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split()[0])
        command = Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, ValueError, IndexError):
        return None
    return pid if command == "postgres" else None


def stop_postgres(pgdata: Path) -> bool:
    """Stop a PostgreSQL left running on `pgdata` (fast shutdown, then immediate); answers whether
    one was."""
    pid = postmaster_pid(pgdata)
    if pid is None:
        return False
    for signum in (signal.SIGINT, signal.SIGQUIT):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)
        deadline = time.monotonic() + 30
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not alive(pid):
            break
    return True


@dataclass
class RunningCograph:
    """A `cograph up` started by `start_cograph_up`: where it serves, its state, its log."""

    process: subprocess.Popen[bytes]
    url: str
    data_dir: Path
    log: Path
    tokens: Mapping[str, str] = field(default_factory=dict)

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "postgres"

    def headers(self, sub: str) -> dict[str, str]:
        """The Authorization header of the principal `sub`."""
        return {"Authorization": f"Bearer {self.tokens[sub]}"}

    def output(self) -> str:
        return tail(self.log)

    def kill(self) -> None:
        """The crash: SIGKILL, so nothing of its own cleans up."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self) -> None:
        """Ctrl-C, as a person stops it; SIGKILL only if it does not stop. Its embedded PostgreSQL
        must be gone too: stopped here if it was not, and the test fails either way."""
        killed = False
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
                killed = True
        postgres_left = stop_postgres(self.pgdata)
        problems = []
        if killed:
            problems.append(f"did not stop within {STOP_SECONDS} s of SIGINT, and was killed")
        elif self.process.returncode != 0:
            problems.append(f"exited with {self.process.returncode}")
        if postgres_left:
            problems.append("left its embedded PostgreSQL running (stopped now)")
        if problems:
            pytest.fail(f"cograph up {'; '.join(problems)}; its output:\n{self.output()}", pytrace=False)


def _wait_ready(running: RunningCograph) -> None:
    """Until /readyz answers 200; fails with the process's output if it exits or the wait runs out."""
    deadline = time.monotonic() + READY_SECONDS
    last = "no answer"
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            pytest.fail(
                f"cograph up exited with {running.process.returncode} before it was ready; "
                f"its output:\n{running.output()}",
                pytrace=False,
            )
        try:
            answer = httpx.get(f"{running.url}/readyz", timeout=5)
        except httpx.TransportError as error:
            last = repr(error)
        else:
            if answer.status_code == 200:
                return
            last = f"{answer.status_code} {answer.text[:500]}"
        time.sleep(0.25)
    pytest.fail(
        f"cograph up was not ready after {READY_SECONDS} s (last /readyz: {last}); "
        f"its output:\n{running.output()}",
        pytrace=False,
    )


def launch_cograph_up(
    root: Path,
    tokens: Sequence[ApiToken],
    environment: Mapping[str, str] | None = None,
    port: int | None = None,
) -> RunningCograph:
    """Start `cograph up` with state in root/state and output in root/cograph-up.log, and wait
    until it is ready. Only `environment`'s COGRAPH_ variables reach it, besides the tokens."""
    root.mkdir(parents=True, exist_ok=True)
    data_dir = root / "state"
    log = root / "cograph-up.log"
    port = free_port() if port is None else port
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGRAPH_")} | {
        "COGRAPH_AUTH__API_TOKENS": msgspec.json.encode(list(tokens)).decode(),
        **(environment or {}),
    }
    cograph = Path(sys.executable).parent / "cograph"
    with log.open("ab") as output:  # a file, not a pipe: nothing reads it while the tests run
        process = subprocess.Popen(
            [str(cograph), "up", "--port", str(port), "--data-dir", str(data_dir)],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
        )
    running = RunningCograph(
        process=process,
        url=f"http://127.0.0.1:{port}",
        data_dir=data_dir,
        log=log,
        tokens={t.sub: t.token for t in tokens},
    )
    try:
        _wait_ready(running)
    except BaseException:
        running.kill()
        stop_postgres(running.pgdata)
        raise
    return running


@contextlib.contextmanager
def cograph_up_running(
    root: Path, tokens: Sequence[ApiToken], environment: Mapping[str, str] | None = None
) -> Iterator[RunningCograph]:
    """`launch_cograph_up`, stopped with Ctrl-C (and checked to stop) when the block ends."""
    running = launch_cograph_up(root, tokens, environment)
    try:
        yield running
    finally:
        running.stop()
