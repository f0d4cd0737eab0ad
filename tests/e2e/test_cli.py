"""`cograph up` as a person runs it: prints where it is, serves a healthy system, stops cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from cograph_db import connect
from cograph_db.migrate import LOCK_KEY


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_cograph_up_serves_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    port = _free_port()
    # A runtime directory anyone may write to, as in many containers: a library warned about it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGRAPH_")} | {"XDG_RUNTIME_DIR": "/tmp"}
    cograph = Path(sys.executable).parent / "cograph"
    process = subprocess.Popen(
        [str(cograph), "up", "--port", str(port), "--data-dir", str(tmp_path / "state")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    output: list[str] = []
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            output.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        text = "".join(output)
        assert f"Cograph Document RAG is up at http://127.0.0.1:{port}" in text, text
        assert "Warning" not in text, text  # nothing a person starting it should wonder about
        token = re.search(r"dev token\s+(\S+)", text)
        assert token is not None, text
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
        assert ready.status_code == 200
        assert ready.json()["status"] == "ready"
        listed = httpx.get(
            f"http://127.0.0.1:{port}/api/md-collections",
            headers={"Authorization": f"Bearer {token.group(1)}"},
            timeout=10,
        )
        assert listed.status_code == 200
        assert (tmp_path / "state" / "postgres" / "PG_VERSION").exists()
    finally:
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    assert process.returncode == 0, "".join(output) + rest
    # The embedded PostgreSQL stopped with it.
    assert not (tmp_path / "state" / "postgres" / "postmaster.pid").exists()


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"COGRAPH_EMBEDDING__MODEL_PATH": "/nonexistent/model"},
            "no sentence-transformers model in /nonexistent",
        ),
        (
            {"COGRAPH_EMBEDDING__MODEL": "BAAI/bge-large-en-v1.5"},
            "but no COGRAPH_EMBEDDING__MODEL_PATH is set, and the packaged model is all-MiniLM-L6-v2",
        ),
        ({"COGRAPH_SEARCH__HTTP_PORT": "70000"}, "COGRAPH_SEARCH__HTTP_PORT: Expected `int` <= 65535"),
    ],
)
def test_a_setting_that_cannot_work_stops_cograph_up_with_one_line(
    tmp_path: Path, environ: dict[str, str], message: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGRAPH_")} | environ
    cograph = Path(sys.executable).parent / "cograph"
    finished = subprocess.run(
        [str(cograph), "up", "--port", "0", "--data-dir", str(tmp_path / "state")],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert finished.returncode == 1
    last = finished.stderr.strip().splitlines()[-1]
    assert last.startswith("cograph: "), finished.stderr
    assert message in last
    assert "Traceback" not in finished.stderr


def test_cograph_prepare_makes_the_models_export_once(tmp_path: Path) -> None:
    """What the image's build runs before it leaves PyTorch out: the export is made into
    EXPORT_DIR, and a second run finds it there."""
    exports = tmp_path / "exports"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGRAPH_")}
    env["COGRAPH_EMBEDDING__EXPORT_DIR"] = str(exports)
    cograph = Path(sys.executable).parent / "cograph"

    def prepare(**extra: str) -> str:
        finished = subprocess.run(
            [str(cograph), "prepare"],
            check=True,
            capture_output=True,
            text=True,
            env=env | extra,
            timeout=300,
        )
        return finished.stdout.strip()

    said = f"all-MiniLM-L6-v2 (384 dimensions) is ready on openvino; its export is in {exports}"
    assert prepare() == said
    [made] = list(exports.iterdir())
    made_at = made.stat().st_mtime_ns
    assert prepare() == said
    assert [(p.name, p.stat().st_mtime_ns) for p in exports.iterdir()] == [(made.name, made_at)]
    remote = prepare(COGRAPH_EMBEDDING__PROVIDER="openai", COGRAPH_EMBEDDING__BASE_URL="http://127.0.0.1:9")
    assert remote == "nothing to prepare: the openai provider runs its model elsewhere"


def test_a_database_or_key_file_that_cannot_work_is_one_line(tmp_path: Path, database: str) -> None:
    """A wrong database name in the DSN (the migrate Job's Secret) and a JWKS file that is not
    one (the gateway's) stop the command with one line naming what to fix, not a traceback."""
    cograph = Path(sys.executable).parent / "cograph"
    base = {k: v for k, v in os.environ.items() if not k.startswith("COGRAPH_")}
    no_such_database = re.sub(r"/[^/?]*(\?|$)", r"/no_such_database\1", database.split("://", 1)[1], count=1)
    broken_jwks = tmp_path / "jwks.json"
    broken_jwks.write_text("not json")
    cases = [
        (["migrate"], {"COGRAPH_DATABASE__DSN": "postgresql://" + no_such_database}, "COGRAPH_DATABASE__DSN"),
        (
            ["serve", "gateway"],
            {"COGRAPH_AUTH__JWKS_URL": str(broken_jwks), "COGRAPH_AUTH__JWT_ISSUER": "https://issuer"},
            f"COGRAPH_AUTH__JWKS_URL: {broken_jwks} is not a readable JWKS file",
        ),
    ]
    for argv, environ, message in cases:
        finished = subprocess.run(
            [str(cograph), *argv],
            check=False,
            capture_output=True,
            text=True,
            env=base | environ,
            timeout=120,
        )
        assert finished.returncode == 1, finished.stderr
        last = finished.stderr.strip().splitlines()[-1]
        assert last.startswith("cograph: "), finished.stderr
        assert message in last, last
        assert "Traceback" not in finished.stderr


async def _first_answer(ops: httpx.AsyncClient, path: str, status: int) -> httpx.Response:
    """The first answer of `path` with `status`, asking twice a second for up to a minute."""
    for _ in range(120):
        with contextlib.suppress(httpx.TransportError):
            answer = await ops.get(path)
            if answer.status_code == status:
                return answer
        await asyncio.sleep(0.5)
    raise AssertionError(f"{path} never answered {status}")


def _collections_env(database: str, http_port: int) -> dict[str, str]:
    """The environment of a collections pod (service or worker) on free ports."""
    return {k: v for k, v in os.environ.items() if not k.startswith("COGRAPH_")} | {
        "COGRAPH_DATABASE__DSN": database,
        "COGRAPH_COLLECTIONS__GRPC_PORT": str(_free_port()),
        "COGRAPH_COLLECTIONS__HTTP_PORT": str(http_port),
    }


async def test_a_service_waiting_on_its_migration_is_alive_but_not_ready(database: str) -> None:
    """A migration may run for minutes, or wait for another replica's: meanwhile the ops port
    answers /healthz, or the startup probe kills the pod and its migration is rolled back,
    again and again. Ready only once the service serves."""
    http_port = _free_port()
    env = _collections_env(database, http_port)
    holder = await connect(database)
    await holder.execute("SELECT pg_advisory_lock($1)", LOCK_KEY)  # another replica migrating
    cograph = Path(sys.executable).parent / "cograph"
    process = await asyncio.create_subprocess_exec(
        str(cograph), "serve", "collections", env=env, stdout=asyncio.subprocess.DEVNULL
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{http_port}", timeout=5) as ops:
            await _first_answer(ops, "/healthz", 200)
            starting = await ops.get("/readyz")
            assert starting.status_code == 503
            assert starting.json()["checks"]["startup"].startswith("starting: migrating its schema")
            await holder.execute("SELECT pg_advisory_unlock($1)", LOCK_KEY)
            ready = await _first_answer(ops, "/readyz", 200)
            assert "startup" not in ready.json()["checks"]
    finally:
        await holder.close()
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
    assert process.returncode == 0


async def test_only_a_process_running_a_worker_publishes_the_job_metrics(database: str) -> None:
    """The worker autoscaler reads cograph_jobs_queued (docs/operations.md). A pod that runs no
    worker (the collections service here; the gateway and search alike) knows nothing of the
    queue, and must not report it empty beside the workers that do."""

    async def metrics_of(*command: str) -> str:
        http_port = _free_port()
        cograph = Path(sys.executable).parent / "cograph"
        process = await asyncio.create_subprocess_exec(
            str(cograph),
            *command,
            env=_collections_env(database, http_port),
            stdout=asyncio.subprocess.DEVNULL,
        )
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{http_port}", timeout=5) as ops:
                await _first_answer(ops, "/readyz", 200)
                return (await ops.get("/metrics")).text
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), 60)

    service = await metrics_of("serve", "collections")
    worker = await metrics_of("worker")
    assert "cograph_rpc_requests_total" in service  # its own metrics are there
    assert "cograph_jobs_queued" not in service
    assert "cograph_job_duration_seconds" not in service
    # The worker publishes the queue it reads: empty on this new database.
    assert re.search(r"^cograph_jobs_queued 0\.0$", worker, re.MULTILINE), worker
    assert "# TYPE cograph_job_duration_seconds histogram" in worker
