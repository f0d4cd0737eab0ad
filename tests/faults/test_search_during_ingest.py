"""Searches while an upload embeds: every query is embedded, none falls back to full text.

Found by the probe (issue 31, item 3): with `cograph up`, a 600-chunk embed job made 5 of 6 routed
searches wait out the embedding deadline and run full text only ("the query was not embedded"),
because a query's vector waited behind ingestion's batches in the one model. Here the batches are
long (64 texts, each as long as the model reads: seconds per forward pass on this machine) and
the embedding deadline short (2 s), so a query that queued behind one batch would fall back.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from faults.conftest import FAULT_TOKENS

from support.cograph_process import cograph_up_running

DOCUMENTS = 160  # one long chunk each: a few ingestion batches of 64
ENVIRONMENT = {
    "COGRAPH_EMBEDDING__BATCH_SIZE": "64",
    "COGRAPH_SEARCH__EMBEDDING_DEADLINE_SECONDS": "2",
}
MAX_SEARCHES = 40
PAUSE_SECONDS = 0.2
WAIT_SECONDS = 600  # the longest the whole upload may take to embed on a busy machine
QUERIES = ("how are glaciers measured", "orchard irrigation in dry summers", "harbour tides")


def _note(n: int) -> str:
    """A note of about 1,400 characters: more than the model reads in one input."""
    words = " ".join(f"glacier{(n * 31 + j) % 997} harbour orchard" for j in range(60))
    return f"# Note {n}\n\nField note {n}: {words}.\n"


def _embed_status(client: httpx.Client, collection: str) -> dict[str, Any]:
    status = client.get(f"/api/md-collections/{collection}/embed-status")
    assert status.status_code == 200, status.text
    return dict(status.json())


def test_searches_during_an_upload_keep_their_dense_stream(tmp_path: Path) -> None:
    with (
        cograph_up_running(tmp_path / "up", FAULT_TOKENS, ENVIRONMENT) as up,
        httpx.Client(base_url=up.url, headers=up.headers("alice"), timeout=60) as client,
    ):
        created = client.post("/api/md-collections", json={"name": "Field notes"})
        assert created.status_code == 201, created.text
        collection = created.json()["id"]
        uploaded = client.post(
            f"/api/md-collections/{collection}/documents/batch",
            json={"documents": [{"source_key": f"n{n}.md", "content": _note(n)} for n in range(DOCUMENTS)]},
        )
        assert uploaded.status_code < 300, uploaded.text[:500]

        during: list[dict[str, Any]] = []
        deadline = time.monotonic() + WAIT_SECONDS
        while len(during) < MAX_SEARCHES and _embed_status(client, collection)["pending_chunks"]:
            assert time.monotonic() < deadline, "the upload was not embedded in time"
            found = client.post("/api/search/route", json={"query": QUERIES[len(during) % len(QUERIES)]})
            assert found.status_code == 200, found.text
            during.append(found.json())
            time.sleep(PAUSE_SECONDS)
        # Each search started while chunks were waiting for the model, and each was embedded.
        assert len(during) >= 5, f"only {len(during)} searches before the upload was embedded"
        fallbacks = [a["failures"] for a in during if any(f["store"] == "embedding" for f in a["failures"])]
        assert fallbacks == [], f"{len(fallbacks)} of {len(during)} searches ran without their query's vector"

        while _embed_status(client, collection)["pending_chunks"]:  # and the upload still completes
            assert time.monotonic() < deadline, "the upload was not embedded in time"
            time.sleep(0.5)
        assert _embed_status(client, collection)["embedded_chunks"] == DOCUMENTS
