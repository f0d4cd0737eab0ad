"""The local model on each runtime, on the same texts in one run: throughput and retrieval quality.

    .venv/bin/python bench/embedding_runtimes.py [--docs N] [--runtimes torch,onnx,onnx-int8,openvino]

Each runtime embeds BEIR SciFact's abstracts (title and text, as the collection chunker keeps
them whole: up to the model's 256 word pieces) and its 300 test queries through LocalProvider,
as ingestion and search call it (bulk lane, batches of COGRAPH_EMBEDDING__BATCH_SIZE's default);
printed: texts per second of the corpus, its ratio to PyTorch, dense-only nDCG@10 over the test
queries (cosine, exact), its difference to PyTorch, and the largest cosine distance between a
text's vector and PyTorch's. Goal (issue 30): at least 2x PyTorch's texts/s with nDCG@10 within
0.005 of it. The ONNX exports are made (once) in a temporary directory, and timed apart.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import get_args

import numpy as np
from scifact import load

from cograph_embeddings import LocalProvider
from cograph_embeddings.local import Runtime
from cograph_settings import EmbeddingSettings

BATCH = EmbeddingSettings().batch_size  # what ingestion hands the provider at a time


def ndcg_at_10(
    corpus_ids: list[str], corpus: np.ndarray, queries: dict[str, np.ndarray], qrels: dict[str, set[str]]
) -> float:
    total = 0.0
    for query_id, vector in queries.items():
        relevant = qrels[query_id]
        top = np.argsort(-(corpus @ vector))[:10]
        gain = sum(1 / math.log2(rank + 2) for rank, i in enumerate(top) if corpus_ids[i] in relevant)
        ideal = sum(1 / math.log2(rank + 2) for rank in range(min(len(relevant), 10)))
        total += gain / ideal
    return total / len(queries)


async def measure(
    runtimes: list[Runtime], export_dir: Path, texts: list[str], questions: list[str]
) -> dict[Runtime, tuple[float, float, np.ndarray, np.ndarray]]:
    """Per runtime: (load seconds, corpus texts/s, corpus vectors, query vectors). The runtimes
    take turns, batch by batch, each starting a round in turn: on a machine shared with other
    work, a burst of it slows them all alike instead of whichever ran then."""
    providers: dict[Runtime, LocalProvider] = {}
    loaded: dict[Runtime, float] = {}
    try:
        for runtime in runtimes:
            print(f"{runtime}: loading", file=sys.stderr)
            provider = LocalProvider("all-MiniLM-L6-v2", None, BATCH, runtime=runtime, export_dir=export_dir)
            providers[runtime] = provider
            started = time.perf_counter()
            await provider.info()
            await provider.embed(texts[:8])  # the ingestion lane's instance is made, and warm
            loaded[runtime] = time.perf_counter() - started
        spent = dict.fromkeys(runtimes, 0.0)
        vectors: dict[Runtime, list[list[float]]] = {runtime: [] for runtime in runtimes}
        for turn, start in enumerate(range(0, len(texts), BATCH)):
            batch = texts[start : start + BATCH]
            for runtime in runtimes[turn % len(runtimes) :] + runtimes[: turn % len(runtimes)]:
                started = time.perf_counter()
                vectors[runtime] += await providers[runtime].embed(batch)
                spent[runtime] += time.perf_counter() - started
        results = {}
        for runtime, provider in providers.items():
            asked = np.array([await provider.embed_query(q) for q in questions], dtype=np.float32)
            corpus = np.array(vectors[runtime], dtype=np.float32)
            results[runtime] = (loaded[runtime], len(texts) / spent[runtime], corpus, asked)
        return results
    finally:
        for provider in providers.values():
            await provider.close()


async def main(limit: int | None, runtimes: list[Runtime]) -> None:
    documents, queries, qrels = load(limit)
    qrels = {q: {d.removesuffix(".md") for d in docs} for q, docs in qrels.items()}
    test_ids = sorted(qrels, key=int)
    texts = [f"{d['title']}\n\n{d['text']}" for d in documents]
    ids = [d["_id"] for d in documents]
    print(f"{len(texts)} SciFact abstracts, {len(test_ids)} test queries; 2 cores shared", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="cograph-onnx-") as exports:
        results = await measure(runtimes, Path(exports), texts, [queries[q] for q in test_ids])
    base = results.get("torch")
    print(f"{'runtime':<11}{'load s':>8}{'texts/s':>9}{'ratio':>7}{'nDCG@10':>9}{'delta':>8}{'max dist':>10}")
    for runtime, (loaded, rate, corpus, asked) in results.items():
        score = ndcg_at_10(ids, corpus, dict(zip(test_ids, asked, strict=True)), qrels)
        if base is None:
            print(f"{runtime:<11}{loaded:>8.1f}{rate:>9.1f}{'':>7}{score:>9.4f}")
            continue
        base_score = ndcg_at_10(ids, base[2], dict(zip(test_ids, base[3], strict=True)), qrels)
        distance = float(1 - np.min(np.sum(corpus * base[2], axis=1)))
        print(
            f"{runtime:<11}{loaded:>8.1f}{rate:>9.1f}{rate / base[1]:>7.2f}{score:>9.4f}"
            f"{score - base_score:>+8.4f}{distance:>10.4f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=0, help="abstracts (0: all 5,183)")
    parser.add_argument("--runtimes", default="torch,onnx,onnx-int8,openvino")
    arguments = parser.parse_args()
    chosen = [r for r in get_args(Runtime) if r in arguments.runtimes.split(",")]
    asyncio.run(main(arguments.docs or None, chosen))
