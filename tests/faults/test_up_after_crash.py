"""`cograph up` SIGKILLed and started again: Ctrl-C still stops everything, the database included.

The crash leaves the embedded PostgreSQL running (nothing of the killed process cleans up); the
next `cograph up` on the same data directory must take that server over, keep its data, and stop
it on Ctrl-C. A `cograph up` started beside a live one on the same directory is refused, and the
live one keeps its database.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
from faults.conftest import FAULT_TOKENS

from support.cograph_process import free_port, launch_cograph_up, postmaster_pid, stop_postgres

REFUSAL_SECONDS = 60  # imports, settings, then the lock: no server, no model


def _cograph_up_beside(data_dir: Path) -> subprocess.CompletedProcess[str]:
    """A second `cograph up` on `data_dir`, run to its end."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGRAPH_")}
    cograph = Path(sys.executable).parent / "cograph"
    return subprocess.run(
        [str(cograph), "up", "--port", str(free_port()), "--data-dir", str(data_dir)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=REFUSAL_SECONDS,
        check=False,
    )


def test_ctrl_c_stops_the_database_after_a_crash(tmp_path: Path) -> None:
    pgdata = tmp_path / "state" / "postgres"
    try:
        first = launch_cograph_up(tmp_path, FAULT_TOKENS)
        try:
            name = f"before the crash {uuid.uuid4().hex[:6]}"
            created = httpx.post(
                f"{first.url}/api/md-collections", json={"name": name}, headers=first.headers("admin")
            )
            assert created.status_code == 201, created.text
        finally:
            first.kill()
        orphan = postmaster_pid(pgdata)
        assert orphan is not None, "the crash took PostgreSQL with it: nothing here tests a takeover"

        second = launch_cograph_up(tmp_path, FAULT_TOKENS)
        try:
            listed = httpx.get(f"{second.url}/api/md-collections", headers=second.headers("admin"))
            assert listed.status_code == 200, listed.text
            assert created.json()["id"] in [c["id"] for c in listed.json()["items"]]

            beside = _cograph_up_beside(second.data_dir)
            assert beside.returncode == 1, beside.stdout + beside.stderr
            assert f"in use by another process (pid {second.process.pid})" in beside.stderr
            still = httpx.get(f"{second.url}/api/md-collections", headers=second.headers("admin"))
            assert still.status_code == 200, still.text
        finally:
            second.stop()  # Ctrl-C; fails the test if PostgreSQL outlives it
    finally:
        stop_postgres(pgdata)  # whatever a failure above left running; nothing when it passed
