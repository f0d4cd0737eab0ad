"""A worker SIGKILLed mid-embed: its job resumes by itself, and every chunk ends embedded.

Found by the probe (issue 31, item 4): a job whose worker died was marked error by the sweep, and
its chunks stayed pending (embed-status counting them) until someone retried it by hand. Here a
`cograph up` that runs no jobs itself (COGRAPH_COLLECTIONS__WORKER_CONCURRENCY=0; it still sweeps)
shares its embedded PostgreSQL with `cograph worker` processes, as a deployment runs them: the
first worker is killed while it embeds, the sweep requeues the job, and a second worker finishes
it, embedding only what was left. Short heartbeat, stale and backoff settings keep it quick.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from faults.conftest import FAULT_TOKENS

from support.cograph_process import RunningCograph, cograph_up_running, tail
from support.embedded_postgres import embedded_dsn

DOCUMENTS = 160  # one chunk each, embedded 8 at a time: 20 batches, seconds of work
JOBS = {
    "COGRAPH_COLLECTIONS__HEARTBEAT_SECONDS": "0.5",
    "COGRAPH_COLLECTIONS__STALE_AFTER_SECONDS": "2",
    "COGRAPH_COLLECTIONS__JOB_BACKOFF_SECONDS": "1",
    "COGRAPH_EMBEDDING__BATCH_SIZE": "8",
}
KILLED_AFTER = 16  # chunks embedded (two batches) when the first worker is killed
WAIT_SECONDS = 240  # the longest any one wait below may take on a busy machine


def _note(n: int) -> str:
    """A note of 140 to 230 word pieces: one window, and a batch of them slow enough that the worker
    is still embedding when the test, reading progress written each heartbeat, kills it."""
    words = " ".join(f"w{(n * 31 + j) % 997}" for j in range(60))
    return f"# Note {n}\n\nField note {n} on harbours, glaciers and orchards: {words}.\n"


def _until(what: str, check: Callable[[], Any], seconds: float = WAIT_SECONDS) -> Any:
    """check() until it answers something true, which is answered; fails after `seconds`."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {seconds} s (last: {last})")


@contextmanager
def _worker(running: RunningCograph, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A `cograph worker` on cograph up's database; killed (SIGKILL) if still running after."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGRAPH_")} | JOBS
    env |= {
        "COGRAPH_DATABASE__DSN": embedded_dsn(running.pgdata),
        "COGRAPH_COLLECTIONS__GRPC_PORT": "0",
        "COGRAPH_COLLECTIONS__HTTP_PORT": "0",
    }
    with log.open("ab") as output:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "cograph"), "worker"],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def test_a_job_whose_worker_is_killed_mid_embed_resumes_and_embeds_every_chunk(tmp_path: Path) -> None:
    environment = JOBS | {"COGRAPH_COLLECTIONS__WORKER_CONCURRENCY": "0"}
    with (
        cograph_up_running(tmp_path / "up", FAULT_TOKENS, environment) as up,
        httpx.Client(base_url=up.url, headers=up.headers("alice"), timeout=60) as client,
    ):
        # Public: the job monitor (administrators) lists the jobs of public collections.
        created = client.post("/api/md-collections", json={"name": "Field notes", "visibility": "public"})
        assert created.status_code == 201, created.text
        collection = created.json()["id"]
        uploaded = client.post(
            f"/api/md-collections/{collection}/documents/batch",
            json={"documents": [{"source_key": f"n{n}.md", "content": _note(n)} for n in range(DOCUMENTS)]},
        )
        assert uploaded.status_code < 300, uploaded.text[:500]

        def embed_job() -> dict[str, Any]:
            jobs = client.get(f"/api/md-collections/{collection}/jobs", params={"kind": "embed"})
            assert jobs.status_code == 200, jobs.text
            [job] = jobs.json()["items"]
            return dict(job)

        time.sleep(1.5)  # several sweeps and claim polls of cograph up: it runs no job itself
        assert embed_job()["status"] == "queued"

        first_log, second_log = tmp_path / "worker-1.log", tmp_path / "worker-2.log"
        with _worker(up, first_log) as first:
            running = _until(
                f"the first worker embedding ({tail(first_log)})",
                lambda: (job := embed_job())["progress_done"] >= KILLED_AFTER and job,
            )
            first.kill()  # SIGKILL: nothing of it records anything
            first.wait(10)
        # The job's total was there before its work (and, here, before two batches of it).
        assert (running["status"], running["progress_total"]) == ("running", DOCUMENTS)
        killed_at = time.monotonic()

        requeued = _until(
            "the sweep requeueing the job", lambda: (job := embed_job())["interruptions"] and job
        )
        assert time.monotonic() - killed_at < 20  # stale after 2 s, swept every 0.5 s
        assert requeued["status"] == "queued"  # no worker runs: cograph up claims nothing
        [interruption] = requeued["interruptions"]
        assert interruption["reason"].startswith("no heartbeat for ")
        assert interruption["worker"]
        assert interruption["progress_done"] >= KILLED_AFTER
        pending = client.get(f"/api/md-collections/{collection}/embed-status").json()
        assert 0 < pending["pending_chunks"] <= DOCUMENTS - KILLED_AFTER

        with _worker(up, second_log) as second:
            done = _until(
                f"the second worker finishing the job ({tail(second_log)})",
                lambda: (job := embed_job())["status"] in ("success", "error") and job,
            )
            second.terminate()
            assert second.wait(30) == 0, tail(second_log)
        assert (done["status"], done["error"]) == ("success", None), done
        assert (done["attempts"], done["max_attempts"], len(done["interruptions"])) == (2, 3, 1)
        # The second run embedded what was left, not everything again.
        assert done["progress_done"] == done["progress_total"] == pending["pending_chunks"]

        status = client.get(f"/api/md-collections/{collection}/embed-status").json()
        assert status["total_chunks"] == status["embedded_chunks"] == DOCUMENTS, status
        assert (status["pending_chunks"], status["stale_chunks"]) == (0, 0), status
        assert "attempt 2 of 3" in _job_monitor(up, "embed"), "the job monitor shows no attempts"


def _job_monitor(running: RunningCograph, kind: str) -> str:
    """The job monitor page of the jobs of `kind`, as an administrator signed in sees it."""
    with httpx.Client(base_url=running.url, timeout=60) as browser:
        form = browser.get("/sign-in")
        csrf = re.search(r'name="_csrf_token" value="([^"]+)"', form.text)
        assert csrf is not None, form.text
        token = running.tokens["admin"]
        signed_in = browser.post("/sign-in", data={"token": token, "next": "/docs", "_csrf_token": csrf[1]})
        assert signed_in.status_code == 303, signed_in.text
        page = browser.get("/docs/jobs", params={"kind": kind})
        assert page.status_code == 200, page.text
        return page.text
