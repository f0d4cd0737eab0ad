"""Routed search while a large embed job runs, against idle, in one run: does one user's upload
degrade everyone's search? And what does the search's priority cost the upload?

    .venv/bin/python bench/search_during_ingest.py [--chunks N] [--searches N] [--pause S]

The system is `cograph up`'s: the four services in one process on an embedded PostgreSQL, one
embedding model shared by the embed worker and the search service, built from the settings
(COGRAPH_EMBEDDING__* apply), driven over REST as a person would.

1. A small collection is uploaded and embedded, so every search has a dense stream to run.
2. Idle: --searches routed searches (POST /api/search/route), one client, --pause between them.
3. Ingestion alone: astro-docs documents, at least --chunks chunks, uploaded through REST into a
   new collection; chunks/s from the first upload to the last chunk embedded.
4. Ingestion with searches: the same documents into another new collection, the same client
   searching until the last chunk is embedded.
5. Idle again (the store now holds both uploads).

Printed: p50 and p99 of each search phase, the searches that fell back to full text (the answer
names the store "embedding" among its failures: the query was not embedded), the ratio of the
busy phase to idle (both idle phases pooled), and the ingestion throughput alone and with searches.
Goal (issue 31): at most 2x idle, no fallback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import msgspec

from cograph_cli.runtime import start_system
from cograph_collections.markdown import MarkdownChunker, TooManyChunksError, parse_markdown
from cograph_db import EmbeddedPostgres
from cograph_embeddings import create_provider
from cograph_settings import ApiToken, Settings, load_settings

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
TOKEN = "bench-token"
UPLOAD_BATCH = 100  # documents per REST batch upload
SEED_DOCUMENTS = 30  # of obsidian-help-en: the collection every search finds dense hits in
DONE_POLL_SECONDS = 0.5
INGEST_TIMEOUT_SECONDS = 3600
QUERIES = (
    "how do I link to a heading in another note",
    "configure a custom domain for deployment",
    "what is a content collection schema",
    "sync my vault between devices",
    "server side rendering with an adapter",
    "embed an image in a note",
    "environment variables at build time",
    "keyboard shortcuts for the command palette",
    "add a sitemap to the site",
    "graph view filters",
    "migrate from an older version",
    "how are tags different from properties",
)


def settings_for(data_dir: Path) -> Settings:
    base = load_settings()
    replace = msgspec.structs.replace
    return replace(
        base,
        auth=replace(base.auth, api_tokens=[ApiToken(token=TOKEN, sub="bench", roles=["admin"])]),
        collections=replace(base.collections, grpc_port=0, http_port=0),
        repodocs=replace(
            base.repodocs,
            grpc_port=0,
            http_port=0,
            sync_interval_seconds=0,
            checkout_dir=str(data_dir / "checkouts"),
        ),
        search=replace(base.search, grpc_port=0, http_port=0),
        gateway=replace(base.gateway, port=0, grpc_port=0),
    )


def read_documents(corpus: str, chunks: int) -> tuple[list[dict[str, str]], int]:
    """The corpus's first documents, in archive order, until they hold `chunks` chunks (0: all);
    and how many chunks they hold, as the collections chunker cuts them."""
    chunker = MarkdownChunker()
    documents: list[dict[str, str]] = []
    counted = 0
    with tarfile.open(CORPORA / f"{corpus}.tar.gz") as archive:
        for member in archive:
            if not (member.isfile() and member.name.endswith((".md", ".mdx"))):
                continue
            extracted = archive.extractfile(member)
            assert extracted is not None
            text = extracted.read().decode("utf-8", "replace")
            try:
                cut = len(chunker.chunk(parse_markdown(text)))
            except TooManyChunksError:
                continue
            if cut:
                documents.append({"source_key": member.name, "content": text})
                counted += cut
            if chunks and counted >= chunks:
                break
    return documents, counted


@dataclass
class Searches:
    seconds: list[float] = field(default_factory=list)
    fallbacks: int = 0
    other_failures: list[str] = field(default_factory=list)

    def add(self, other: Searches) -> None:
        self.seconds += other.seconds
        self.fallbacks += other.fallbacks
        self.other_failures += other.other_failures

    def p(self, quantile: float) -> float:
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, round(quantile * (len(ordered) - 1)))] * 1000


async def search_once(client: httpx.AsyncClient, query: str, into: Searches) -> None:
    started = time.perf_counter()
    response = await client.post("/api/search/route", json={"query": query}, timeout=120)
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    into.seconds.append(elapsed)
    for failure in response.json()["failures"]:
        if failure["store"] == "embedding":
            into.fallbacks += 1
        else:
            into.other_failures.append(f"{failure['store']}: {failure['message']}")


async def search_loop(
    client: httpx.AsyncClient, pause: float, *, count: int | None = None, until: asyncio.Event | None = None
) -> Searches:
    """One client: a search, a pause, the next; `count` of them, or until `until` is set."""
    found = Searches()
    number = 0
    while (count is None or number < count) and not (until is not None and until.is_set()):
        await search_once(client, QUERIES[number % len(QUERIES)], found)
        number += 1
        if until is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(until.wait(), pause)
        else:
            await asyncio.sleep(pause)
    return found


async def ingest(client: httpx.AsyncClient, name: str, documents: list[dict[str, str]]) -> tuple[int, float]:
    """Upload into a new collection and wait until every chunk is embedded: (chunks, seconds)."""
    created = (await client.post("/api/md-collections", json={"name": name})).raise_for_status()
    collection = created.json()["id"]
    started = time.perf_counter()
    for start in range(0, len(documents), UPLOAD_BATCH):
        batch = {"documents": documents[start : start + UPLOAD_BATCH]}
        response = await client.post(
            f"/api/md-collections/{collection}/documents/batch", json=batch, timeout=600
        )
        counts = response.raise_for_status().json()["counts"]
        if counts["failed"]:
            sys.exit(f"{name}: the upload refused {counts['failed']} documents")
    while time.perf_counter() - started < INGEST_TIMEOUT_SECONDS:
        status = (
            (await client.get(f"/api/md-collections/{collection}/embed-status")).raise_for_status().json()
        )
        if status["total_chunks"] and status["pending_chunks"] == 0:
            return int(status["total_chunks"]), time.perf_counter() - started
        await asyncio.sleep(DONE_POLL_SECONDS)
    sys.exit(f"{name}: not embedded after {INGEST_TIMEOUT_SECONDS} s")


async def main(chunks: int, searches: int, pause: float) -> None:
    logging.disable(logging.INFO)  # one access log line per request would drown the figures
    seed, _ = read_documents("obsidian-help-en", 0)
    documents, counted = read_documents("astro-docs", chunks)
    print(f"ingesting {len(documents)} astro-docs documents, {counted} chunks, twice", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="cograph-search-ingest-") as tmp:
        data_dir = Path(tmp)
        embedded = EmbeddedPostgres(data_dir / "postgres")
        dsn = embedded.start()
        settings = settings_for(data_dir)
        embedder = create_provider(settings.embedding)
        await embedder.info()
        system = await start_system(settings, dsn, embedder)
        headers = {"authorization": f"Bearer {TOKEN}"}
        try:
            async with httpx.AsyncClient(base_url=system.gateway_url, headers=headers) as client:
                await ingest(client, "seed", seed[:SEED_DOCUMENTS])
                await search_loop(client, 0.0, count=len(QUERIES))  # warm up every query
                print("idle searches", file=sys.stderr)
                before = await search_loop(client, pause, count=searches)
                print("ingestion alone", file=sys.stderr)
                alone_chunks, alone_seconds = await ingest(client, "alone", documents)
                print("ingestion with searches", file=sys.stderr)
                done = asyncio.Event()
                searching = asyncio.ensure_future(search_loop(client, pause, until=done))
                try:
                    busy_chunks, busy_seconds = await ingest(client, "busy", documents)
                finally:
                    done.set()
                busy = await searching
                print("idle searches again", file=sys.stderr)
                after = await search_loop(client, pause, count=searches)
        finally:
            await system.stop()
            await embedder.close()
            embedded.stop()
    idle = Searches()
    idle.add(before)
    idle.add(after)
    print(f"routed search (POST /api/search/route), one client, {pause:g} s between searches; ms")
    print(f"{'phase':<26}{'searches':>9}{'p50':>9}{'p99':>9}{'fallbacks':>11}")
    for title, phase in (
        ("idle, before", before),
        ("during ingestion", busy),
        ("idle, after", after),
        ("idle, both", idle),
    ):
        print(
            f"{title:<26}{len(phase.seconds):>9}{phase.p(0.5):>9.0f}{phase.p(0.99):>9.0f}{phase.fallbacks:>11}"
        )
    print(
        f"during / idle: p50 {busy.p(0.5) / idle.p(0.5):.2f}x, p99 {busy.p(0.99) / idle.p(0.99):.2f}x;"
        f" {busy.fallbacks} of {len(busy.seconds)} searches fell back to full text (goal: <= 2x, none)"
    )
    alone_rate = alone_chunks / alone_seconds
    busy_rate = busy_chunks / busy_seconds
    print(
        f"ingestion, upload to all embedded: alone {alone_chunks} chunks in {alone_seconds:.1f} s"
        f" ({alone_rate:.1f} chunks/s); with searches {busy_chunks} in {busy_seconds:.1f} s"
        f" ({busy_rate:.1f} chunks/s, {busy_rate / alone_rate:.2f} of alone)"
    )
    failures = sorted(set(before.other_failures + busy.other_failures + after.other_failures))
    if failures:
        print(f"other store failures: {failures[:5]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=1000, help="chunks per ingestion (at least)")
    parser.add_argument("--searches", type=int, default=40, help="searches in each idle phase")
    parser.add_argument("--pause", type=float, default=0.5, help="seconds between one client's searches")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.chunks, arguments.searches, arguments.pause))
