"""The embedded PostgreSQL applies Cograph's server settings when it starts, owns its data
directory alone, and takes over the server a crashed owner left running."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from cograph_db import DataDirectoryInUse, EmbeddedPostgres, connect
from support.cograph_process import postmaster_pid, stop_postgres

# Another process that starts the server with 128MB, creates a table, says so, and waits to be killed.
_OWNER = """
import asyncio, sys, time
from cograph_db import EmbeddedPostgres, connect

async def mark(dsn):
    connection = await connect(dsn)
    await connection.execute("CREATE TABLE before_the_crash (id int)")
    await connection.close()

server = EmbeddedPostgres(sys.argv[1], shared_buffers="128MB")
asyncio.run(mark(server.start()))
print("ready", flush=True)
time.sleep(120)
"""


async def _fetch(dsn: str, query: str) -> str:
    connection = await connect(dsn)
    try:
        return str(await connection.fetchval(query))
    finally:
        await connection.close()


async def _shared_buffers(dsn: str) -> str:
    return await _fetch(dsn, "SHOW shared_buffers")


def _running(pid: int) -> bool:
    """Whether pid runs (a zombie waiting for init to reap it has stopped)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process running the embedded server on tmp_path/pg, ready; killed and its server
    stopped after the test, whatever the test left."""
    process = subprocess.Popen(
        [sys.executable, "-c", _OWNER, str(tmp_path / "pg")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # bounded: the process sleeps at most 120 s
        assert line.strip() == "ready", f"the owner did not start: {line}{process.stdout.read()}"
        yield process
    finally:
        process.kill()
        process.wait(10)
        stop_postgres(tmp_path / "pg")


async def test_session_server_runs_with_the_default_cache(postgres: str) -> None:
    assert await _shared_buffers(postgres) == "1GB"


async def test_configured_cache_applies_and_survives_a_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "pg"
    with EmbeddedPostgres(data_dir, shared_buffers="160MB") as server:
        assert await _shared_buffers(server.dsn) == "160MB"
    # A changed setting is rewritten, not appended: the newest value wins.
    with EmbeddedPostgres(data_dir, shared_buffers="192MB") as server:
        assert await _shared_buffers(server.dsn) == "192MB"
    assert (data_dir / "postgresql.conf").read_text().count("include_if_exists = 'cograph.conf'") == 1
    assert postmaster_pid(data_dir) is None


async def test_a_second_process_on_the_directory_is_refused_and_the_first_keeps_its_server(
    tmp_path: Path, owner: subprocess.Popen[str]
) -> None:
    data_dir = tmp_path / "pg"
    running = postmaster_pid(data_dir)
    with pytest.raises(DataDirectoryInUse, match=rf"in use by another process \(pid {owner.pid}\)"):
        EmbeddedPostgres(data_dir).start()
    assert postmaster_pid(data_dir) == running
    assert owner.poll() is None


async def test_a_server_left_by_a_crash_is_restarted_as_ours_and_stopped_with_us(
    tmp_path: Path, owner: subprocess.Popen[str]
) -> None:
    data_dir = tmp_path / "pg"
    owner.kill()
    owner.wait(10)
    orphan = postmaster_pid(data_dir)
    assert orphan is not None, "the crash took the server with it: nothing left to take over"

    server = EmbeddedPostgres(data_dir, shared_buffers="160MB")
    dsn = server.start()
    try:
        # Started again, not joined: this start's settings hold, the data is still there.
        assert await _shared_buffers(dsn) == "160MB"
        assert await _fetch(dsn, "SELECT to_regclass('before_the_crash')") == "before_the_crash"
        assert postmaster_pid(data_dir) != orphan
        assert not _running(orphan)
    finally:
        server.stop()
    assert postmaster_pid(data_dir) is None


async def test_a_pid_file_naming_another_live_program_does_not_stop_the_start(tmp_path: Path) -> None:
    # After a reboot or in a container the pid of the last server can belong to anything; here,
    # to this very test process.
    data_dir = tmp_path / "pg"
    with EmbeddedPostgres(data_dir, shared_buffers="128MB"):
        _, rest = (data_dir / "postmaster.pid").read_text().split("\n", 1)
    (data_dir / "postmaster.pid").write_text(f"{os.getpid()}\n{rest}")

    with EmbeddedPostgres(data_dir, shared_buffers="128MB") as server:
        assert await _fetch(server.dsn, "SELECT 1") == "1"
        assert postmaster_pid(data_dir) not in (None, os.getpid())
    assert postmaster_pid(data_dir) is None
