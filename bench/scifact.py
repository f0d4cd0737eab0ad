"""BEIR SciFact through the real system: upload the corpus as a markdown collection, wait for
embedding, run the 300 test queries through collection search, print nDCG@10 and recall@100
for full text alone, dense alone and hybrid.

    .venv/bin/python bench/scifact.py [--data-dir DIR] [--docs N]

Starts its own embedded PostgreSQL and the four services (as `cograph up` does).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import math
import sys
import tempfile
import time
from pathlib import Path

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

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "scifact"
BATCH = 500


def load(limit: int | None) -> tuple[list[dict[str, str]], dict[str, str], dict[str, set[str]]]:
    with gzip.open(EVAL / "corpus.jsonl.gz", "rt") as lines:
        corpus = [json.loads(line) for line in lines]
    queries = {
        q["_id"]: q["text"] for q in map(json.loads, (EVAL / "queries.jsonl").read_text().splitlines())
    }
    qrels: dict[str, set[str]] = {}
    for line in (EVAL / "qrels-test.tsv").read_text().splitlines()[1:]:
        query_id, doc_id, _ = line.split("\t")
        qrels.setdefault(query_id, set()).add(doc_id)
    if limit:
        relevant = {d for docs in qrels.values() for d in docs}
        corpus = [d for d in corpus if d["_id"] in relevant] + [d for d in corpus if d["_id"] not in relevant]
        corpus = corpus[:limit]
    return corpus, queries, qrels


def ndcg_at_10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, doc in enumerate(ranked[:10]) if doc in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return dcg / ideal


def recall_at_100(ranked: list[str], relevant: set[str]) -> float:
    return len(set(ranked[:100]) & relevant) / len(relevant)


def documents(hits: list[pb.ChunkHit]) -> list[str]:
    """Chunk hits to corpus ids, best rank kept (a long abstract may have two chunks)."""
    seen: list[str] = []
    for hit in hits:
        doc = hit.chunk.source_key.removesuffix(".md")
        if doc not in seen:
            seen.append(doc)
    return seen


async def run(data_dir: Path, limit: int | None) -> None:
    corpus, queries, qrels = load(limit)
    embedded = EmbeddedPostgres(data_dir / "postgres")
    dsn = embedded.start()
    embedder = LocalProvider("all-MiniLM-L6-v2", None, batch_size=256)
    await embedder.info()
    defaults = Settings()
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
        stub = pb_grpc.CollectionsServiceStub(channel)
        search = search_grpc.SearchServiceStub(search_channel)
        collection = (
            await stub.CreateCollection(
                pb.CreateCollectionRequest(name="SciFact", visibility=pb.VISIBILITY_PUBLIC, owner="bench")
            )
        ).collection
        started = time.perf_counter()
        for start in range(0, len(corpus), BATCH):
            batch = [
                pb.DocumentContent(
                    source_key=f"{d['_id']}.md", content=f"# {d['title']}\n\n{d['text']}\n".encode()
                )
                for d in corpus[start : start + BATCH]
            ]
            response = await stub.UploadDocuments(
                pb.UploadDocumentsRequest(collection_id=collection.id, documents=batch, requested_by="bench"),
                timeout=600,
            )
            assert response.counts.failed == 0, response
        uploaded = time.perf_counter()
        while True:
            status = await stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
            if status.total_chunks and status.embedded_chunks == status.total_chunks:
                break
            await asyncio.sleep(2)
        embedded_at = time.perf_counter()
        print(
            f"corpus: {len(corpus)} documents, {status.total_chunks} chunks;"
            f" upload {uploaded - started:.1f} s, embedding {embedded_at - uploaded:.1f} s",
            file=sys.stderr,
        )

        model = (await embedder.info()).name
        test_ids = sorted(qrels, key=int)
        vectors = await embedder.embed([queries[q] for q in test_ids])
        modes = {"full text": (0.0, 1.0), "dense": (1.0, 0.0), "hybrid": (1.0, 1.0)}
        results: dict[str, tuple[float, float, float]] = {}
        for mode, (dense, text) in modes.items():
            ndcg, recall, latency = [], [], []
            for query_id, vector in zip(test_ids, vectors, strict=True):
                began = time.perf_counter()
                hits = await stub.SearchChunks(
                    pb.SearchChunksRequest(
                        collection_ids=[collection.id],
                        query=queries[query_id],
                        query_embedding=vector,
                        embedding_model=model,
                        limit=100,
                        dense_weight=dense,
                        text_weight=text,
                        rrf_k=settings.search.rrf_k,
                    )
                )
                latency.append(time.perf_counter() - began)
                ranked = documents(list(hits.hits))
                ndcg.append(ndcg_at_10(ranked, qrels[query_id]))
                recall.append(recall_at_100(ranked, qrels[query_id]))
            results[mode] = (
                sum(ndcg) / len(ndcg),
                sum(recall) / len(recall),
                sorted(latency)[len(latency) // 2],
            )
        # The same hybrid ranking through the search service, which embeds the query itself.
        service_ndcg = []
        for query_id in test_ids:
            found = await search.SearchCollection(
                search_pb.SearchCollectionRequest(
                    query=queries[query_id], collection_id=collection.id, limit=10
                )
            )
            service_ndcg.append(ndcg_at_10(documents(list(found.hits)), qrels[query_id]))
        print(f"\nBEIR SciFact, {len(test_ids)} test queries, {len(corpus)} documents")
        print(f"{'stream':<28}{'nDCG@10':>10}{'recall@100':>12}{'p50 ms':>10}")
        for mode, (ndcg_value, recall_value, p50) in results.items():
            print(f"{mode:<28}{ndcg_value:>10.4f}{recall_value:>12.4f}{p50 * 1000:>10.1f}")
        print(f"{'hybrid via search service':<28}{sum(service_ndcg) / len(service_ndcg):>10.4f}")
        print("reference: BM25 0.665, all-MiniLM-L6-v2 0.645 (0.650 measured here)")
    finally:
        await channel.close(None)
        await search_channel.close(None)
        await system.stop()
        await embedder.close()
        embedded.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, help="state directory (default: a temporary one)")
    parser.add_argument(
        "--docs", type=int, help="use only N documents (the relevant ones first), for a quick run"
    )
    args = parser.parse_args()
    if args.data_dir:
        asyncio.run(run(args.data_dir, args.docs))
    else:
        with tempfile.TemporaryDirectory(prefix="scifact-") as directory:
            asyncio.run(run(Path(directory), args.docs))


if __name__ == "__main__":
    main()
