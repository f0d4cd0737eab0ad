"""Hybrid search latency at 100,000 chunks: the collections service against the same SQL run
directly on PostgreSQL, at 1 and 8 concurrent clients, in one run on one store.

    .venv/bin/python bench/search_latency.py [--chunks N] [--data-dir DIR] [--requests N] [--explain]
                                             [--clients 2,4]

The store: the collections schema of an embedded PostgreSQL, migrated by the real migrations,
filled by COPY into md_documents and md_chunks (so the real term-statistics triggers run), then
the real per-dimension HNSW index, VACUUM ANALYZE. Chunk text is real: the SciFact abstracts and
the three markdown corpora, parsed and chunked by the collections chunker; once a corpus runs out,
further chunks are drawn from its own paragraphs, at the lengths its real chunks have. Each corpus
fills a share of the store equal to its share of the real chunks, over 20 collections of unequal
size; each query searches 3 of them, one holding its own corpus.

Vectors: a stratified sample of real chunks (--embed, default 4,000) is embedded with the real
model; those chunks keep their vectors, every other chunk gets a blend of three real vectors of
the same corpus plus a little noise (see `blend`). Embedding all 100,000 would take hours here.

Queries: the 300 SciFact test claims and 200 section headings of the markdown corpora, embedded
once beforehand (query embedding is not measured, except in the search-service row).

Measured, interleaved in rounds so background load hits every mode alike:
- raw:       HybridRetriever.search on an asyncpg pool in this process (the retriever's SQL only,
             its streams at once on two pooled connections, as the stores run it);
- store:     ChunkSearch.search in this process (the retriever, then the hit rows the service reads);
- service:   CollectionsService.SearchChunks over a grpc.aio channel to the collections service,
             running in its own process as `cograph serve collections` runs it (tracing
             configured as there: with no OTLP endpoint, gRPC spans but no SQL spans);
- grpc ping: the standard health Check on the same channel, the fixed cost of a gRPC call;
- search:    SearchService.SearchCollection, which embeds the query itself (a quarter of the
             requests; reported, not part of the ratio).
Then every query once through a recording connection, timing each statement of the two streams,
run one after the other;
--explain adds EXPLAIN (ANALYZE, BUFFERS) of the median and slowest BM25 and HNSW statements.

With --data-dir the store and the vectors are kept, and a later run with the same --chunks,
--embed and --seed measures again without refilling.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import hashlib
import json
import math
import multiprocessing
import random
import re
import sys
import tarfile
import tempfile
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection as Pipe
from pathlib import Path
from typing import Any, cast

import asyncpg
import msgspec
import numpy as np
import numpy.typing as npt
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph.search.v1 import search_service_pb2 as search_pb
from cograph.search.v1 import search_service_pb2_grpc as search_grpc
from cograph_collections.app import MIGRATIONS
from cograph_collections.app import create_service as create_collections
from cograph_collections.application.search import ChunkSearch
from cograph_collections.domain.documents import wiki_key
from cograph_collections.markdown import MarkdownChunker, TooManyChunksError, parse_markdown
from cograph_collections.markdown.links import normalise_source_key
from cograph_collections.stores.chunks import TABLE
from cograph_db import Connection, EmbeddedPostgres, apply_migrations, connect, create_pool
from cograph_embeddings import LocalProvider, create_provider
from cograph_grpc import open_channel
from cograph_retrieval import HybridRetriever, Query, ensure_vector_index
from cograph_search.app import create_service as create_search
from cograph_settings import Settings
from cograph_telemetry import configure_logging, configure_tracing

ROOT = Path(__file__).resolve().parents[1].parent / "shared"
SCIFACT = ROOT / "eval" / "scifact"
CORPORA = ROOT / "corpora"
SOURCES = ("scifact", "astro-docs", "eips", "obsidian-help-en")
COLLECTIONS = 20
SCOPE = 3  # collections per query
LIMIT = 10  # hits per query, the search service's default
HEADING_QUERIES = 200
CLIENTS = (1, 8)  # the client counts; --clients measures others beside them
TARGET_CLIENTS = 8  # the p99 target is at this many
P50_RATIO_TARGET = 1.30
P99_TARGET_MS = 100.0
STORE_VERSION = 2
Vectors = npt.NDArray[np.float32]


# --- the corpora ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    heading_path: tuple[str, ...]
    heading_level: int
    anchor: str
    content: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class Doc:
    key: str
    title: str | None
    content: str
    chunks: tuple[Chunk, ...]


@dataclass
class Source:
    name: str
    docs: list[Doc]
    # (index of the chunk it comes from in `chunks`, text), for chunks beyond the real ones.
    paragraphs: list[tuple[int, str]] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.chunks = [chunk for doc in self.docs for chunk in doc.chunks]
        for index, chunk in enumerate(self.chunks):
            for paragraph in re.split(r"\n\s*\n", chunk.content):
                if paragraph.strip():
                    self.paragraphs.append((index, paragraph.strip()))


def parse(key: str, text: str, chunker: MarkdownChunker) -> Doc | None:
    parsed = parse_markdown(text)
    try:
        drafts = chunker.chunk(parsed)
    except TooManyChunksError:
        return None
    chunks = tuple(
        Chunk(d.heading_path, d.heading_level, d.section_anchor or "", d.content, d.start_line, d.end_line)
        for d in drafts
    )
    return Doc(key, parsed.title, text, chunks) if chunks else None


def read_sources() -> dict[str, Source]:
    chunker = MarkdownChunker()
    found: dict[str, list[Doc]] = {name: [] for name in SOURCES}
    with gzip.open(SCIFACT / "corpus.jsonl.gz", "rt") as lines:
        for line in lines:
            record = json.loads(line)
            doc = parse(f"{record['_id']}.md", f"# {record['title']}\n\n{record['text']}\n", chunker)
            if doc:
                found["scifact"].append(doc)
    for name in SOURCES[1:]:
        with tarfile.open(CORPORA / f"{name}.tar.gz") as archive:
            for member in archive:
                if member.isfile() and member.name.endswith((".md", ".mdx")):
                    extracted = archive.extractfile(member)
                    assert extracted is not None
                    doc = parse(member.name, extracted.read().decode("utf-8", "replace"), chunker)
                    if doc:
                        found[name].append(doc)
    return {name: Source(name, docs) for name, docs in found.items()}


@dataclass(frozen=True)
class BenchQuery:
    text: str
    source: str


def read_queries(sources: dict[str, Source], seed: int) -> list[BenchQuery]:
    """The SciFact test claims, then section headings of the markdown corpora (3 to 12 words)."""
    claims = [json.loads(line)["text"] for line in (SCIFACT / "queries.jsonl").read_text().splitlines()]
    queries = [BenchQuery(text, "scifact") for text in claims]
    headings: dict[str, tuple[str, str]] = {}  # casefolded -> (heading, corpus)
    for name in SOURCES[1:]:
        for chunk in sources[name].chunks:
            heading = chunk.heading_path[-1].strip() if chunk.heading_path else ""
            words = heading.split()
            # Prose headings only: 3 to 12 words, nearly all of them plain words.
            plain = sum(bool(re.fullmatch(r"[A-Za-z][A-Za-z'-]*[,:?]?", word)) for word in words)
            if 3 <= len(words) <= 12 and plain >= len(words) - 1:
                headings.setdefault(heading.casefold(), (heading, name))
    picked = random.Random(seed).sample(sorted(headings.values()), min(HEADING_QUERIES, len(headings)))
    return queries + [BenchQuery(text, name) for text, name in picked]


# --- vectors --------------------------------------------------------------------------------


def embedded_sample(sources: dict[str, Source], count: int, seed: int) -> dict[str, list[int]]:
    """Which real chunks get real vectors: a share per corpus by its size (the store holds the
    corpora in that proportion), at least 50 each. A larger count takes a superset."""
    total = sum(len(source.chunks) for source in sources.values())
    sample = {}
    for name, source in sources.items():
        order = list(range(len(source.chunks)))
        random.Random(f"{seed}-{name}").shuffle(order)
        share = max(50, round(count * len(source.chunks) / total))
        sample[name] = sorted(order[:share])
    return sample


def load_cache(path: Path) -> dict[str, Vectors]:
    if not path.exists():
        return {}
    with np.load(path) as stored:
        keys = [str(key) for key in stored["keys"]]
        return dict(zip(keys, stored["vectors"], strict=True))


def save_cache(path: Path, cache: dict[str, Vectors]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, keys=np.array(list(cache)), vectors=np.stack(list(cache.values())))


async def embed_cached(embedder: LocalProvider, texts: list[str], path: Path) -> Vectors:
    """Vectors of the texts, embedding only those the cache file does not hold yet."""
    cache = load_cache(path)
    keys = [hashlib.sha256(text.encode()).hexdigest() for text in texts]
    missing = sorted({key: text for key, text in zip(keys, texts, strict=True) if key not in cache}.items())
    if missing:
        started = time.perf_counter()
        vectors = await embedder.embed([text for _, text in missing])
        for (key, _), vector in zip(missing, vectors, strict=True):
            cache[key] = np.asarray(vector, dtype=np.float32)
        save_cache(path, cache)
        print(f"  embedded {len(missing)} texts in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return np.stack([cache[key] for key in keys])


def blend(real: Vectors, count: int, rng: np.random.Generator) -> Vectors:
    """`count` vectors near the real ones: each is one real vector plus up to half of two others of
    the same corpus plus isotropic noise of norm ~0.15, normalised; cosine to the main vector is
    0.86 to 0.98 (5th to 95th percentile). They stay where the model's embeddings of that corpus
    lie, unlike random unit vectors, which no model produces and on which HNSW behaves nothing
    like on real embeddings. They are more clustered than real ones, though: at the 100,000-chunk
    scale a vector's nearest neighbour has cosine ~0.91, where real chunk vectors of one corpus
    have ~0.6 to 0.75."""
    picks = rng.integers(0, len(real), size=(count, 3))
    weights = np.column_stack([np.ones(count), rng.uniform(0, 0.5, size=(count, 2))]).astype(np.float32)
    mixed = np.einsum("nk,nkd->nd", weights, real[picks])
    noise = rng.standard_normal(mixed.shape).astype(np.float32) * (0.15 / math.sqrt(real.shape[1]))
    mixed += noise * np.linalg.norm(mixed, axis=1, keepdims=True)
    normalised: Vectors = (mixed / np.linalg.norm(mixed, axis=1, keepdims=True)).astype(np.float32)
    return normalised


# --- the store ------------------------------------------------------------------------------


def collection_sizes(total: int, count: int) -> list[int]:
    """Unequal collections, as real ones are: weights 1/k^0.7, the largest about 8x the smallest."""
    weights = [1 / (k + 1) ** 0.7 for k in range(count)]
    sizes = [max(1, int(total * w / sum(weights))) for w in weights]
    sizes[0] += total - sum(sizes)
    return sizes


@dataclass
class Batch:
    """One collection's rows, ready for COPY."""

    collection_id: uuid.UUID
    documents: list[tuple[Any, ...]]
    chunks: list[tuple[Any, ...]]


class Filler:
    """Each corpus is a stream: its real documents first, then synthetic ones drawn from its
    paragraphs; the collections of a corpus take consecutive documents from its stream."""

    def __init__(
        self,
        sources: dict[str, Source],
        real_vectors: dict[str, Vectors],
        sample: dict[str, list[int]],
        model: str,
        seed: int,
    ) -> None:
        self._sources = sources
        self._real = real_vectors
        self._exact = {name: dict(zip(rows, range(len(rows)), strict=True)) for name, rows in sample.items()}
        self._model = model
        self._rng = random.Random(seed)
        self._np = np.random.default_rng(seed)
        self._next_doc = dict.fromkeys(sources, 0)
        self._chunk_base = dict.fromkeys(sources, 0)  # index in source.chunks of the next real chunk
        self._synthetic = dict.fromkeys(sources, 0)

    def _uuid(self) -> uuid.UUID:
        return uuid.UUID(int=self._rng.getrandbits(128), version=4)

    def _synthetic_doc(self, source: Source) -> Doc:
        rng = self._rng
        number = self._synthetic[source.name]
        self._synthetic[source.name] += 1
        size = len(rng.choice(source.docs).chunks)  # chunks per document as the corpus has them
        chunks = []
        line = 1
        for _ in range(size):
            target = len(rng.choice(source.chunks).content)
            parts: list[str] = []
            length = 0
            origin = source.chunks[0]
            while length < target:
                index, paragraph = rng.choice(source.paragraphs)
                if parts and length + len(paragraph) + 2 > 4000:
                    break
                if not parts:
                    origin = source.chunks[index]
                parts.append(paragraph)
                length += len(paragraph) + 2
            content = "\n\n".join(parts)
            lines = content.count("\n") + 1
            chunks.append(
                Chunk(
                    origin.heading_path, origin.heading_level, origin.anchor, content, line, line + lines - 1
                )
            )
            line += lines + 1
        title = chunks[0].heading_path[0] if chunks[0].heading_path else None
        content = "\n\n".join(chunk.content for chunk in chunks)
        return Doc(f"generated/{number:06d}.md", title, content, tuple(chunks))

    def batch(self, collection_id: uuid.UUID, source_name: str, size: int) -> Batch:
        source = self._sources[source_name]
        documents: list[tuple[Any, ...]] = []
        chunk_rows: list[tuple[Any, ...]] = []
        exact: list[int] = []  # rows of real vectors, -1 where a blend is needed
        while len(chunk_rows) < size:
            base = -1
            if self._next_doc[source_name] < len(source.docs):
                doc = source.docs[self._next_doc[source_name]]
                self._next_doc[source_name] += 1
                base = self._chunk_base[source_name]
                self._chunk_base[source_name] += len(doc.chunks)
            else:
                doc = self._synthetic_doc(source)
            document_id = self._uuid()
            encoded = doc.content.encode()
            documents.append(
                (
                    document_id,
                    collection_id,
                    doc.key,
                    normalise_source_key(doc.key),
                    wiki_key(doc.key),
                    doc.content,
                    hashlib.sha256(encoded).hexdigest(),
                    len(encoded),
                    doc.title,
                    len(doc.content.split()),
                    doc.content.count("\n") + 1,
                )
            )
            for index, chunk in enumerate(doc.chunks[: size - len(chunk_rows)]):
                exact.append(self._exact[source_name].get(base + index, -1) if base >= 0 else -1)
                chunk_rows.append(
                    (
                        self._uuid(),
                        document_id,
                        collection_id,
                        index,
                        list(chunk.heading_path),
                        chunk.heading_level,
                        chunk.anchor,
                        chunk.content,
                        chunk.start_line,
                        chunk.end_line,
                        4000,
                        400,
                        512,
                    )
                )
        real = self._real[source_name]
        vectors = blend(real, len(chunk_rows), self._np)
        for row, index in enumerate(exact):
            if index >= 0:
                vectors[row] = real[index]
        dimension = real.shape[1]
        chunks = [
            (*row, vector, self._model, dimension) for row, vector in zip(chunk_rows, vectors, strict=True)
        ]
        return Batch(collection_id, documents, chunks)


DOCUMENT_COLUMNS = [
    "id", "collection_id", "source_key", "normalised_key", "wiki_key", "content", "content_hash",
    "size_bytes", "title", "word_count", "line_count",
]  # fmt: skip
CHUNK_COLUMNS = [
    "id", "document_id", "collection_id", "chunk_index", "heading_path", "heading_level",
    "section_anchor", "content", "start_line", "end_line", "chunker_max_chars", "chunker_min_chars",
    "chunker_max_chunks", "embedding", "embedding_model", "embedding_dim",
]  # fmt: skip


@dataclass(frozen=True)
class StoreInfo:
    collections: list[tuple[uuid.UUID, str]]  # (id, corpus), largest first


def assign(sources: dict[str, Source], sizes: list[int]) -> list[str]:
    """A corpus per collection, largest collection first, so that each corpus gets a share of the
    store equal to its share of the real chunks (each is then stretched about as much)."""
    real = {name: len(source.chunks) for name, source in sources.items()}
    total = sum(sizes)
    given = dict.fromkeys(real, 0)
    picked = []
    for size in sizes:
        name = max(real, key=lambda n: total * real[n] / sum(real.values()) - given[n])
        given[name] += size
        picked.append(name)
    return picked


async def fill(
    pool: asyncpg.Pool[Any], filler: Filler, sources: dict[str, Source], chunks: int, dimension: int
) -> None:
    sizes = collection_sizes(chunks, COLLECTIONS)
    corpora = assign(sources, sizes)
    ids = []
    async with pool.acquire() as connection:
        for k in range(COLLECTIONS):
            name = f"bench {k:02d} {corpora[k]}"
            ids.append(
                await connection.fetchval(
                    "INSERT INTO md_collections (name, visibility, owner) VALUES ($1, 'public', 'bench')"
                    " RETURNING id",
                    name,
                )
            )
    queue: asyncio.Queue[Batch | None] = asyncio.Queue(maxsize=2)
    started = time.perf_counter()

    async def copy() -> None:
        while (batch := await queue.get()) is not None:
            async with pool.acquire() as connection, connection.transaction():
                await connection.copy_records_to_table(
                    "md_documents", records=batch.documents, columns=DOCUMENT_COLUMNS
                )
                await connection.copy_records_to_table(
                    "md_chunks", records=batch.chunks, columns=CHUNK_COLUMNS
                )

    writers = [asyncio.create_task(copy()) for _ in range(2)]
    for k, (collection_id, size) in enumerate(zip(ids, sizes, strict=True)):
        batch = await asyncio.to_thread(filler.batch, collection_id, corpora[k], size)
        await queue.put(batch)
    for _ in writers:
        await queue.put(None)
    await asyncio.gather(*writers)
    copied = time.perf_counter()
    async with pool.acquire() as connection:
        await connection.execute("SET maintenance_work_mem = '1GB'")
        await ensure_vector_index(connection, TABLE, dimension)
        indexed = time.perf_counter()
        for table in ("md_collections", "md_documents", "md_chunks", "md_term_stats", "md_scope_stats"):
            await connection.execute(f"VACUUM (ANALYZE) {table}")
    print(
        f"  filled {chunks} chunks: COPY {copied - started:.0f} s, HNSW index {indexed - copied:.0f} s,"
        f" VACUUM ANALYZE {time.perf_counter() - indexed:.0f} s",
        file=sys.stderr,
    )


async def store_info(pool: asyncpg.Pool[Any]) -> StoreInfo:
    async with pool.acquire() as connection:
        rows = await connection.fetch(
            "SELECT c.id, c.name FROM md_collections c"
            " JOIN md_scope_stats s ON s.scope_id = c.id ORDER BY c.name"
        )
    return StoreInfo([(row["id"], row["name"].split()[-1]) for row in rows])


async def describe(pool: asyncpg.Pool[Any]) -> list[str]:
    async with pool.acquire() as connection:
        facts = await connection.fetchrow(
            """SELECT count(*) AS chunks, count(DISTINCT document_id) AS documents,
                      avg(length(content))::int AS chars, avg(length(search_text))::int AS lexemes,
                      count(*) FILTER (WHERE embedding IS NOT NULL) AS embedded
               FROM md_chunks"""
        )
        sizes = await connection.fetch(
            """SELECT c.relname, pg_size_pretty(pg_total_relation_size(c.oid)) AS size
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = 'collections'
                 AND c.relname IN ('md_chunks', 'md_chunks_search_text', 'md_chunks_embedding_384',
                                   'md_term_stats', 'md_documents')
               ORDER BY c.relname"""
        )
        scopes = await connection.fetch("SELECT chunks FROM md_scope_stats ORDER BY chunks DESC")
        version = await connection.fetchval("SHOW server_version")
        buffers = await connection.fetchval("SHOW shared_buffers")
    return [
        f"store: {facts['chunks']} chunks ({facts['embedded']} with vectors) in {facts['documents']}"
        f" documents, {len(scopes)} collections of {scopes[0]['chunks']} to {scopes[-1]['chunks']}"
        f" chunks; {facts['chars']} characters and {facts['lexemes']} lexemes per chunk on average",
        "sizes: " + ", ".join(f"{row['relname']} {row['size']}" for row in sizes),
        f"PostgreSQL {version} (embedded), shared_buffers {buffers}",
    ]


# --- measuring ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """One query in every shape a mode needs."""

    query: Query
    chunks_request: pb.SearchChunksRequest
    search_request: search_pb.SearchCollectionRequest


def prepare(
    queries: list[BenchQuery], vectors: Vectors, info: StoreInfo, model: str, settings: Settings, seed: int
) -> list[Prepared]:
    rng = random.Random(seed)
    by_source: dict[str, list[uuid.UUID]] = {}
    for collection_id, source in info.collections:
        by_source.setdefault(source, []).append(collection_id)
    everything = [collection_id for collection_id, _ in info.collections]
    s = settings.search
    prepared = []
    for query, vector in zip(queries, vectors, strict=True):
        own = rng.choice(by_source[query.source])
        scope = [own, *rng.sample([c for c in everything if c != own], SCOPE - 1)]
        embedding = [float(x) for x in vector]
        prepared.append(
            Prepared(
                # As CollectionsServicer.SearchChunks builds it.
                Query(
                    text=query.text,
                    scope=scope,
                    limit=LIMIT,
                    embedding=embedding,
                    model=model,
                    dense_weight=s.dense_weight,
                    text_weight=s.text_weight,
                    rrf_k=s.rrf_k,
                    candidates=max(100, LIMIT),
                ),
                pb.SearchChunksRequest(
                    collection_ids=[str(c) for c in scope],
                    query=query.text,
                    query_embedding=embedding,
                    embedding_model=model,
                    limit=LIMIT,
                    dense_weight=s.dense_weight,
                    text_weight=s.text_weight,
                    rrf_k=s.rrf_k,
                ),
                search_pb.SearchCollectionRequest(query=query.text, collection_id=str(own), limit=LIMIT),
            )
        )
    return prepared


Call = Callable[[Prepared], Awaitable[int]]


async def run_clients(
    call: Call, queries: list[Prepared], clients: int, requests: int, start: int
) -> tuple[float, list[float]]:
    """`requests` calls spread over `clients` concurrent loops; answers the wall time (s) and
    the latency of each call (ms)."""
    per_client = max(1, requests // clients)
    latencies: list[float] = []

    async def client(number: int) -> None:
        for j in range(per_client):
            query = queries[(start + number + j * clients) % len(queries)]
            began = time.perf_counter()
            await call(query)
            latencies.append((time.perf_counter() - began) * 1000)

    began = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    return time.perf_counter() - began, latencies


@dataclass
class Series:
    latencies: list[float] = field(default_factory=list)
    wall: float = 0.0
    handler_seconds: float = 0.0  # service only: time inside the SearchChunks handler
    handler_calls: float = 0.0

    @property
    def mean(self) -> float:
        return sum(self.latencies) / len(self.latencies)

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[max(0, math.ceil(p * len(ordered)) - 1)]

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.wall if self.wall else 0.0


# (seconds, calls) the service has spent in SearchChunks so far, from its own metrics.
Probe = Callable[[], Awaitable[tuple[float, float]]]


async def measure(
    modes: dict[str, Call],
    queries: list[Prepared],
    requests: int,
    rounds: int,
    probe: Probe,
    client_counts: tuple[int, ...],
) -> dict[tuple[str, int], Series]:
    results: dict[tuple[str, int], Series] = {}
    names = list(modes)
    for number in range(rounds):
        for clients in client_counts:
            # Rotate the order each round, so no mode always runs first or last.
            for name in names[number % len(names) :] + names[: number % len(names)]:
                series = results.setdefault((name, clients), Series())
                before = await probe()
                # The search service embeds every query: slow, and not part of the ratio.
                count = requests // rounds // (4 if name == "search" else 1)
                wall, latencies = await run_clients(modes[name], queries, clients, count, number * 7919)
                after = await probe()
                series.latencies.extend(latencies)
                series.wall += wall
                if name == "service":
                    series.handler_seconds += after[0] - before[0]
                    series.handler_calls += after[1] - before[1]
        print(f"  round {number + 1}/{rounds} done", file=sys.stderr)
    return results


# --- statement breakdown and plans ------------------------------------------------------------


class Recorder:
    """Stands in for the connection a stream is given: runs and times each statement, and
    keeps its SQL and arguments, so the plans shown are those of the very statements it runs."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self.statements: list[tuple[str, str, tuple[Any, ...], float]] = []

    async def _run(self, method: str, sql: str, args: tuple[Any, ...]) -> Any:
        began = time.perf_counter()
        result = await getattr(self._connection, method)(sql, *args)
        self.statements.append((label(sql), sql, args, (time.perf_counter() - began) * 1000))
        return result

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._run("fetchval", sql, args)

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        return await self._run("fetchrow", sql, args)

    async def fetch(self, sql: str, *args: Any) -> Any:
        return await self._run("fetch", sql, args)

    async def execute(self, sql: str, *args: Any) -> Any:
        return await self._run("execute", sql, args)

    def transaction(self) -> Any:
        return self._connection.transaction()


VECTOR_LITERAL = re.compile(r"'\[[-0-9.e,]+\]'")


def label(sql: str) -> str:
    if "to_tsvector" in sql:
        return "text: query lexemes"
    if "jsonb_object_agg" in sql:
        return "text: term statistics"
    if "WITH q(lexeme" in sql:
        return "text: BM25 ranking"
    if "<=>" in sql:
        return "dense: HNSW scan"
    return "dense: SET LOCAL"


async def breakdown(
    pool: asyncpg.Pool[Any], retriever: HybridRetriever, queries: list[Prepared]
) -> tuple[dict[str, Series], list[tuple[str, str, tuple[Any, ...], float]]]:
    """Every query once, one client: time per statement the retriever runs."""
    per_label: dict[str, Series] = {}
    statements = []
    async with pool.acquire() as connection:
        for prepared in queries:
            recorder = Recorder(connection)
            began = time.perf_counter()
            for stream in (retriever.dense_stream, retriever.text_stream):
                await stream(cast("Connection", recorder), prepared.query)
            total = (time.perf_counter() - began) * 1000
            sums: dict[str, float] = {}
            for name, _, _, ms in recorder.statements:
                sums[name] = sums.get(name, 0.0) + ms
            sums["both streams in turn"] = total
            for name, ms in sums.items():
                per_label.setdefault(name, Series()).latencies.append(ms)
            statements.extend(recorder.statements)
    return per_label, statements


async def explain(
    pool: asyncpg.Pool[Any], statements: list[tuple[str, str, tuple[Any, ...], float]]
) -> list[str]:
    """EXPLAIN ANALYZE of the median and the slowest BM25 and HNSW statements, as they ran."""
    out = []
    async with pool.acquire() as connection:
        for name in ("text: BM25 ranking", "dense: HNSW scan"):
            runs = sorted((s for s in statements if s[0] == name), key=lambda s: s[3])
            if not runs:
                continue
            for which, (_, sql, args, ms) in (("median", runs[len(runs) // 2]), ("slowest", runs[-1])):
                async with connection.transaction():
                    if name.startswith("dense"):
                        # The retriever's SET LOCALs, as it runs them (see HybridRetriever.dense_stream).
                        candidates = args[3]
                        await connection.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                        await connection.execute(f"SET LOCAL hnsw.ef_search = {max(40, candidates):d}")
                    rows = await connection.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", *args)
                out.append(f"--- {name}, {which} of {len(runs)} ({ms:.1f} ms when measured)")
                out.extend(VECTOR_LITERAL.sub("'[…]'", row[0]) for row in rows)
        plans = await connection.fetch(
            "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
        )
        out.append("--- prepared statements on one pool connection: generic / custom plans so far")
        for row in plans:
            first = " ".join(row["statement"].split())[:90]
            out.append(f"{row['generic_plans']:>6} / {row['custom_plans']:<6} {first}")
    return out


# --- services -------------------------------------------------------------------------------


def serve_collections(dsn: str, pipe: Pipe, tracing: bool) -> None:
    """Child process: the collections service as `cograph serve collections` runs it."""
    asyncio.run(_serve_collections(dsn, pipe, tracing))


async def _serve_collections(dsn: str, pipe: Pipe, tracing: bool) -> None:
    defaults = Settings()
    settings = msgspec.structs.replace(
        defaults, telemetry=msgspec.structs.replace(defaults.telemetry, log_level="WARNING")
    )
    configure_logging(settings.telemetry)
    if tracing:
        configure_tracing("cograph-serve", settings.telemetry)
    host = await create_collections(settings, dsn, create_provider(settings.embedding), with_worker=False)
    await host.start("127.0.0.1", 0, 0)
    pipe.send((host.grpc.port, host.http.port))
    await asyncio.to_thread(pipe.recv)
    await host.stop()


def handler_totals(url: str) -> tuple[float, float]:
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    totals = {}
    for kind in ("sum", "count"):
        found = re.search(
            rf'^cograph_rpc_duration_seconds_{kind}{{[^}}]*method="SearchChunks"[^}}]*}} (\S+)$', text, re.M
        )
        totals[kind] = float(found.group(1)) if found else 0.0
    return totals["sum"], totals["count"]


@contextlib.asynccontextmanager
async def collections_process(dsn: str, tracing: bool) -> AsyncIterator[tuple[str, Probe]]:
    """The service in its own process; answers its gRPC address and a probe of its metrics."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=serve_collections, args=(dsn, theirs, tracing), daemon=True)
    process.start()
    try:
        if not await asyncio.to_thread(ours.poll, 120):
            raise RuntimeError("the collections service did not start")
        grpc_port, http_port = ours.recv()

        async def probe() -> tuple[float, float]:
            return await asyncio.to_thread(handler_totals, f"http://127.0.0.1:{http_port}/metrics")

        yield f"127.0.0.1:{grpc_port}", probe
    finally:
        if process.is_alive():
            ours.send("stop")
            await asyncio.to_thread(process.join, 30)
        if process.is_alive():
            process.terminate()
            process.join()


# --- the run --------------------------------------------------------------------------------


MODE_ORDER = ("raw", "store", "service", "grpc ping", "search")


def report(results: dict[tuple[str, int], Series], client_counts: tuple[int, ...]) -> list[str]:
    lines = [
        f"{'mode':<10}{'clients':>8}{'requests':>10}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}"
        f"{'max ms':>9}{'mean ms':>9}{'req/s':>8}"
    ]
    for (name, clients), series in sorted(
        results.items(), key=lambda item: (item[0][1], MODE_ORDER.index(item[0][0]))
    ):
        lines.append(
            f"{name:<10}{clients:>8}{len(series.latencies):>10}{series.percentile(0.5):>9.1f}"
            f"{series.percentile(0.9):>9.1f}{series.percentile(0.99):>9.1f}{max(series.latencies):>9.1f}"
            f"{series.mean:>9.1f}{series.throughput:>8.0f}"
        )
    lines.append("")
    for clients in client_counts:
        service = results[("service", clients)]
        if service.handler_calls:
            inside = service.handler_seconds / service.handler_calls * 1000
            lines.append(
                f"service, {clients} client{'s' * (clients > 1)}: mean {service.mean:.1f} ms at the client,"
                f" {inside:.1f} ms inside the SearchChunks handler (its own metrics),"
                f" {service.mean - inside:.1f} ms gRPC transport, (de)serialisation and scheduling"
            )
    met = True
    for clients in client_counts:
        raw, service = results[("raw", clients)], results[("service", clients)]
        ratio = service.percentile(0.5) / raw.percentile(0.5)
        ok = ratio <= P50_RATIO_TARGET
        met = met and ok
        lines.append(
            f"service/raw at p50, {clients} client{'s' * (clients > 1)}: {ratio:.2f}"
            f" (target <= {P50_RATIO_TARGET:.2f}: {'met' if ok else 'MISSED'});"
            f" at p99 {service.percentile(0.99) / raw.percentile(0.99):.2f}"
        )
    p99 = results[("service", TARGET_CLIENTS)].percentile(0.99)
    ok = p99 < P99_TARGET_MS
    lines.append(
        f"service p99 at {TARGET_CLIENTS} clients: {p99:.1f} ms"
        f" (target < {P99_TARGET_MS:.0f} ms, query embedding excluded: {'met' if ok else 'MISSED'})"
    )
    lines.append(f"targets: {'all met' if met and ok else 'NOT all met'}")
    return lines


async def run(args: argparse.Namespace, data_dir: Path) -> None:
    started = time.perf_counter()
    print("reading the corpora…", file=sys.stderr)
    sources = await asyncio.to_thread(read_sources)
    queries = read_queries(sources, args.seed)
    sample = embedded_sample(sources, args.embed, args.seed)
    embedder = LocalProvider("all-MiniLM-L6-v2", None, batch_size=64)
    model = await embedder.info()
    print("embedding the sample and the queries (cached in the data directory)…", file=sys.stderr)
    cache = data_dir / "vectors.npz"
    texts = [sources[name].chunks[i].content for name, rows in sample.items() for i in rows]
    everything = await embed_cached(embedder, texts + [q.text for q in queries], cache)
    real_vectors = {}
    start = 0
    for name, rows in sample.items():
        real_vectors[name] = everything[start : start + len(rows)]
        start += len(rows)
    query_vectors = everything[start:]

    embedded = EmbeddedPostgres(data_dir / "postgres")
    dsn = await asyncio.to_thread(embedded.start)
    settings = Settings()
    try:
        connection = await connect(dsn)
        try:
            await apply_migrations(connection, MIGRATIONS)
        finally:
            await connection.close()
        pool = await create_pool(dsn, settings.database, schema=MIGRATIONS.schema)
        try:
            marker = data_dir / "store.json"
            wanted = {"version": STORE_VERSION, "chunks": args.chunks, "embed": args.embed, "seed": args.seed}
            stored = json.loads(marker.read_text()) if marker.exists() else None
            if stored != wanted:
                async with pool.acquire() as c:
                    if await c.fetchval("SELECT count(*) FROM md_collections"):
                        sys.exit(f"{data_dir} holds a store built with {stored}; use another --data-dir")
                print(f"filling the store with {args.chunks} chunks…", file=sys.stderr)
                filler = Filler(sources, real_vectors, sample, model.name, args.seed)
                await fill(pool, filler, sources, args.chunks, model.dimension)
                marker.write_text(json.dumps(wanted))
            info = await store_info(pool)
            facts = await describe(pool)
            prepared = prepare(queries, query_vectors, info, model.name, settings, args.seed)
            await measure_all(args, dsn, pool, settings, embedder, prepared, facts, queries)
        finally:
            await pool.close()
    finally:
        await embedder.close()
        await asyncio.to_thread(embedded.stop)
    print(f"\n(whole run {time.perf_counter() - started:.0f} s)", file=sys.stderr)


async def measure_all(
    args: argparse.Namespace,
    dsn: str,
    pool: asyncpg.Pool[Any],
    settings: Settings,
    embedder: LocalProvider,
    prepared: list[Prepared],
    facts: list[str],
    queries: list[BenchQuery],
) -> None:
    retriever = HybridRetriever(TABLE)
    store = ChunkSearch(pool)

    async def raw(query: Prepared) -> int:
        return len(await retriever.search(pool, query.query))

    async def rows(query: Prepared) -> int:
        return len(await store.search(query.query))

    async with collections_process(dsn, not args.no_tracing) as (target, probe):
        channel = open_channel(target, settings.grpc)
        replace = msgspec.structs.replace
        # SearchCollection never calls repodocs; its readiness check may dial it, so it gets an address.
        search_settings = replace(
            settings,
            collections=replace(settings.collections, target=target),
            repodocs=replace(settings.repodocs, target=target),
        )
        search_host = None if args.no_search_service else await create_search(search_settings, embedder)
        search_channel = None
        try:
            stub = pb_grpc.CollectionsServiceStub(channel)

            async def service(query: Prepared) -> int:
                return len((await stub.SearchChunks(query.chunks_request)).hits)

            health = health_pb2_grpc.HealthStub(channel)

            async def ping(query: Prepared) -> int:
                await health.Check(health_pb2.HealthCheckRequest(service=""))
                return 0

            modes: dict[str, Call] = {"raw": raw, "store": rows, "service": service, "grpc ping": ping}
            if search_host is not None:
                await search_host.start("127.0.0.1", 0, 0)
                search_channel = open_channel(f"127.0.0.1:{search_host.grpc.port}", settings.grpc)
                search_stub = search_grpc.SearchServiceStub(search_channel)

                async def search(query: Prepared) -> int:
                    found = await search_stub.SearchCollection(query.search_request)
                    assert not found.failures, found.failures
                    return len(found.hits)

                modes["search"] = search
            print("warming up…", file=sys.stderr)
            for name, call in modes.items():
                hits = [0]

                async def counted(query: Prepared, call: Call = call, hits: list[int] = hits) -> int:
                    found = await call(query)
                    hits[0] += found
                    return found

                _, calls = await run_clients(counted, prepared, 8, len(prepared), 0)
                print(f"  {name}: {hits[0] / len(calls):.1f} hits per query", file=sys.stderr)
            print(f"measuring {args.requests} requests per mode and client count…", file=sys.stderr)
            results = await measure(modes, prepared, args.requests, args.rounds, probe, args.clients)
        finally:
            await channel.close(None)
            if search_channel is not None:
                await search_channel.close(None)
            if search_host is not None:
                await search_host.stop()
    print("statement breakdown…", file=sys.stderr)
    per_statement, statements = await breakdown(pool, retriever, prepared)
    scifact = sum(q.source == "scifact" for q in queries)
    print(f"\nHybrid search latency, limit {LIMIT}, scope {SCOPE} collections, 100 candidates per stream")
    for line in facts:
        print(line)
    print(f"queries: {len(queries)} ({scifact} SciFact claims, {len(queries) - scifact} corpus headings)")
    print("")
    for line in report(results, args.clients):
        print(line)
    print("\nper statement, 1 client, every query once (raw path):")
    print(f"{'statement':<24}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'mean ms':>9}")
    for name in sorted(per_statement):
        series = per_statement[name]
        mean = sum(series.latencies) / len(series.latencies)
        print(
            f"{name:<24}{series.percentile(0.5):>9.2f}{series.percentile(0.9):>9.2f}"
            f"{series.percentile(0.99):>9.2f}{mean:>9.2f}"
        )
    if args.explain:
        print("")
        for line in await explain(pool, statements):
            print(line)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000, help="chunks in the store (default 100000)")
    parser.add_argument("--data-dir", type=Path, help="state directory, kept (default: a temporary one)")
    parser.add_argument(
        "--requests", type=int, default=1200, help="measured requests per mode and client count"
    )
    parser.add_argument(
        "--clients",
        type=lambda text: tuple(sorted({*CLIENTS, *(int(n) for n in text.split(","))})),
        default=CLIENTS,
        help="concurrent clients to measure at, comma-separated (1 and 8 always are), e.g. 2,4",
    )
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds the requests are split in")
    parser.add_argument("--embed", type=int, default=4000, help="real chunks embedded with the model")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN ANALYZE of the statements")
    parser.add_argument("--no-tracing", action="store_true", help="run the service without tracing")
    parser.add_argument("--no-search-service", action="store_true", help="skip SearchCollection")
    args = parser.parse_args()
    if args.chunks < COLLECTIONS:
        parser.error(f"--chunks must be at least {COLLECTIONS}")
    if args.data_dir:
        asyncio.run(run(args, args.data_dir.resolve()))
    else:
        with tempfile.TemporaryDirectory(prefix="search-latency-") as directory:
            asyncio.run(run(args, Path(directory)))


if __name__ == "__main__":
    main()
