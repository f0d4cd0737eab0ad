"""What the relevance benchmarks share: the running system, a collection uploaded through the
real upload path and embedded by the real worker, the real collection-search call, the metrics.

A benchmark gives documents (source_key, markdown) and queries with their relevant source
keys; `evaluate` prints nDCG@10 and recall@100 for full text alone, dense alone and hybrid,
and hybrid (the streams' scores fused, full text weighed by its coverage), through collection
search and through the search service.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph.search.v1 import search_service_pb2 as search_pb
from cograph.search.v1 import search_service_pb2_grpc as search_grpc
from cograph_cli.runtime import start_system
from cograph_db import EmbeddedPostgres
from cograph_embeddings import LocalProvider
from cograph_grpc import open_channel
from cograph_settings import Settings

BATCH = 500


def ndcg_at_10(ranked: Sequence[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, doc in enumerate(ranked[:10]) if doc in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return dcg / ideal


def recall_at_100(ranked: Sequence[str], relevant: set[str]) -> float:
    return len(set(ranked[:100]) & relevant) / len(relevant)


def documents(hits: Sequence[pb.ChunkHit]) -> list[str]:
    """Chunk hits to source keys, best rank kept (a long document has several chunks)."""
    return list(dict.fromkeys(hit.chunk.source_key for hit in hits))


@dataclass
class Bench:
    settings: Settings
    embedder: LocalProvider
    collections: pb_grpc.CollectionsServiceAsyncStub
    search: search_grpc.SearchServiceAsyncStub
    data_dir: Path


@asynccontextmanager
async def running_system(data_dir: Path) -> AsyncIterator[Bench]:
    """Embedded PostgreSQL and the four services, as `cograph up` runs them: the packaged model on
    the runtime the settings name (COGRAPH_EMBEDDING__RUNTIME, default openvino)."""
    embedded = EmbeddedPostgres(data_dir / "postgres")
    dsn = embedded.start()
    defaults = Settings()
    embedder = LocalProvider("all-MiniLM-L6-v2", None, batch_size=256, runtime=defaults.embedding.runtime)
    await embedder.info()
    replace = msgspec.structs.replace
    settings = replace(
        defaults,
        collections=replace(defaults.collections, grpc_port=0, http_port=0, max_batch_documents=BATCH),
        repodocs=replace(
            defaults.repodocs, grpc_port=0, http_port=0, checkout_dir=str(data_dir / "checkouts")
        ),
        search=replace(defaults.search, grpc_port=0, http_port=0),
        gateway=replace(defaults.gateway, port=0, grpc_port=0),
    )
    system = await start_system(settings, dsn, embedder)
    channel = open_channel(system.settings.collections.target, settings.grpc)
    search_channel = open_channel(system.settings.search.target, settings.grpc)
    try:
        yield Bench(
            settings,
            embedder,
            pb_grpc.CollectionsServiceStub(channel),
            search_grpc.SearchServiceStub(search_channel),
            data_dir,
        )
    finally:
        await channel.close(None)
        await search_channel.close(None)
        await system.stop()
        await embedder.close()
        embedded.stop()


async def uploaded_collection(bench: Bench, name: str, docs: Sequence[tuple[str, str]]) -> str:
    """The collection holding the documents, uploaded and embedded. With a kept data directory
    a later run finds it again: the upload is then all "unchanged" and nothing is re-embedded."""
    stub = bench.collections
    remembered = bench.data_dir / f"{name}.collection-id"
    if remembered.exists():
        request = pb.GetCollectionRequest(collection_id=remembered.read_text().strip())
        collection = (await stub.GetCollection(request)).collection
    else:
        create = pb.CreateCollectionRequest(name=name, visibility=pb.VISIBILITY_PUBLIC, owner="bench")
        collection = (await stub.CreateCollection(create)).collection
        remembered.write_text(collection.id)
    started = time.perf_counter()
    for start in range(0, len(docs), BATCH):
        batch = [
            pb.DocumentContent(source_key=key, content=text.encode())
            for key, text in docs[start : start + BATCH]
        ]
        response = await stub.UploadDocuments(
            pb.UploadDocumentsRequest(collection_id=collection.id, documents=batch, requested_by="bench"),
            timeout=600,
        )
        if response.counts.failed:
            refused = [(r.source_key, r.error.message) for r in response.results if r.HasField("error")]
            sys.exit(f"upload refused documents: {refused[:3]}")
    uploaded = time.perf_counter()
    while True:
        status = await stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
        if status.total_chunks and status.embedded_chunks == status.total_chunks:
            break
        await asyncio.sleep(2)
    print(
        f"{name}: {len(docs)} documents, {status.total_chunks} chunks;"
        f" upload {uploaded - started:.1f} s, embedding {time.perf_counter() - uploaded:.1f} s",
        file=sys.stderr,
    )
    return str(collection.id)


async def evaluate(
    bench: Bench,
    title: str,
    collection_id: str,
    queries: Mapping[str, str],
    relevant: Mapping[str, set[str]],
) -> None:
    """Prints the metrics of every stream over the queries (query id -> text)."""
    stub = bench.collections
    model = (await bench.embedder.info()).name
    ids = list(queries)
    vectors = await bench.embedder.embed([queries[q] for q in ids])

    async def ranked(query_id: str, vector: Sequence[float], dense: float, text: float) -> list[str]:
        request = pb.SearchChunksRequest(
            collection_ids=[collection_id],
            query=queries[query_id],
            query_embedding=vector,
            embedding_model=model,
            limit=100,
            dense_weight=dense,
            text_weight=text,
        )
        return documents(list((await stub.SearchChunks(request)).hits))

    rows = []
    modes = {"full text": (0.0, 1.0), "dense": (1.0, 0.0), "hybrid": (1.0, 1.0)}
    for mode, (dense, text) in modes.items():
        ndcg, recall, latency = [], [], []
        for query_id, vector in zip(ids, vectors, strict=True):
            began = time.perf_counter()
            found = await ranked(query_id, vector, dense, text)
            latency.append(time.perf_counter() - began)
            ndcg.append(ndcg_at_10(found, relevant[query_id]))
            recall.append(recall_at_100(found, relevant[query_id]))
        p50 = sorted(latency)[len(latency) // 2] * 1000
        rows.append(f"{mode:<30}{sum(ndcg) / len(ndcg):>10.4f}{sum(recall) / len(recall):>12.4f}{p50:>10.1f}")

    # The default hybrid ranking through the search service, which embeds the query itself.
    service_ndcg = []
    for query_id in ids:
        request = search_pb.SearchCollectionRequest(
            query=queries[query_id], collection_id=collection_id, limit=10
        )
        answer = await bench.search.SearchCollection(request)
        service_ndcg.append(ndcg_at_10(documents(list(answer.hits)), relevant[query_id]))

    print(f"\n{title}")
    print(f"{'stream':<30}{'nDCG@10':>10}{'recall@100':>12}{'p50 ms':>10}")
    print("\n".join(rows))
    print(f"{'hybrid via search service':<30}{sum(service_ndcg) / len(service_ndcg):>10.4f}")


def corpora_main(
    doc: str | None, name: str, run: Callable[[Path, Path, Path], Coroutine[Any, Any, None]]
) -> None:
    """The command line of a benchmark over ../shared/corpora: run(data_dir, corpora, scratch),
    with the state kept in --data-dir or in a temporary directory."""
    default_corpora = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, help="state directory, kept (default: a temporary one)")
    parser.add_argument("--corpora", type=Path, default=default_corpora)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix=f"{name}-") as scratch:
        if args.data_dir:
            asyncio.run(run(args.data_dir, args.corpora, Path(scratch)))
        else:
            with tempfile.TemporaryDirectory(prefix=f"{name}-store-") as directory:
                asyncio.run(run(Path(directory), args.corpora, Path(scratch)))
