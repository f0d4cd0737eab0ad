"""Hand-written questions over real product documentation, in three styles: keyword (the words
a reader types into a search box), question (a full sentence, mostly in the page's words) and
paraphrase (a question that avoids the page's distinctive words). Each names its answer pages.
Where SciFact and the description benchmark have one style of query each, this one shows how
full text, dense and the fusion of both fare as the query moves away from the page's words.

    .venv/bin/python bench/astro_questions.py [--data-dir DIR] [--corpora ../shared/corpora]

Corpus: the English pages of astro-docs (../shared/corpora), uploaded through the real upload
path and embedded by the real worker, keyed as `cograph collection upload` keys a directory
(the path inside src/content/docs/en). The collection is the one bench/descriptions.py uploads,
so a kept --data-dir serves both. Questions: bench/astro_questions.json. Prints recall@5 and
MRR@10 (by page: a page's best chunk counts) per style for full text alone, dense alone,
hybrid through collection search and hybrid through the search service.
"""

from __future__ import annotations

import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path

import msgspec
from relevance import Bench, corpora_main, documents, running_system, uploaded_collection

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.search.v1 import search_service_pb2 as search_pb

FOLDER = "astro-docs/src/content/docs/en"
QUESTIONS = Path(__file__).with_suffix(".json")
STYLES = ("keyword", "question", "paraphrase")


class Question(msgspec.Struct, frozen=True):
    style: str
    query: str
    answers: list[str]


def recall_at_5(ranked: Sequence[str], relevant: set[str]) -> float:
    return len(set(ranked[:5]) & relevant) / len(relevant)


def mrr_at_10(ranked: Sequence[str], relevant: set[str]) -> float:
    return next((1 / rank for rank, doc in enumerate(ranked[:10], start=1) if doc in relevant), 0.0)


def pages(root: Path) -> list[tuple[str, str]]:
    return [
        (path.relative_to(root).as_posix(), path.read_text("utf-8"))
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".md", ".mdx"))
    ]


def load(keys: set[str]) -> list[Question]:
    questions = msgspec.json.decode(QUESTIONS.read_bytes(), type=list[Question])
    unknown = [(q.query, a) for q in questions for a in q.answers if a not in keys]
    styles = {q.style for q in questions} - set(STYLES)
    if unknown or styles or any(not q.answers for q in questions):
        sys.exit(f"bad questions: answers not in the corpus {unknown[:5]}, unknown styles {styles}")
    return questions


async def ranked_pages(
    bench: Bench, collection_id: str, question: Question, vector: Sequence[float], mode: str
) -> list[str]:
    if mode == "search service":
        routed = search_pb.SearchCollectionRequest(
            query=question.query, collection_id=collection_id, limit=30
        )
        return documents(list((await bench.search.SearchCollection(routed)).hits))
    dense, text = {"full text": (0.0, 1.0), "dense": (1.0, 0.0), "hybrid": (1.0, 1.0)}[mode]
    request = pb.SearchChunksRequest(
        collection_ids=[collection_id],
        query=question.query,
        query_embedding=vector,
        embedding_model=(await bench.embedder.info()).name,
        limit=30,  # chunks; pages are fewer
        dense_weight=dense,
        text_weight=text,
    )
    return documents(list((await bench.collections.SearchChunks(request)).hits))


async def run(data_dir: Path, corpora: Path, scratch: Path) -> None:
    with tarfile.open(corpora / "astro-docs.tar.gz") as archive:
        archive.extractall(scratch, filter="data")
    docs = pages(scratch / FOLDER)
    questions = load({key for key, _ in docs})
    async with running_system(data_dir) as bench:
        collection_id = await uploaded_collection(bench, "astro-docs", docs)
        vectors = await bench.embedder.embed([q.query for q in questions])
        modes = ("full text", "dense", "hybrid", "search service")
        scores: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for mode in modes:
            for question, vector in zip(questions, vectors, strict=True):
                found = await ranked_pages(bench, collection_id, question, vector, mode)
                relevant = set(question.answers)
                score = (recall_at_5(found, relevant), mrr_at_10(found, relevant))
                scores.setdefault((question.style, mode), []).append(score)
                scores.setdefault(("all", mode), []).append(score)
    print(f"\nastro-docs: {len(questions)} questions over {len(docs)} pages, recall@5 / MRR@10")
    print(f"{'style':<12}" + "".join(f"{mode:>22}" for mode in modes))
    for style in (*(s for s in STYLES if (s, modes[0]) in scores), "all"):
        cells = []
        for mode in modes:
            rows = scores[(style, mode)]
            recall = sum(r for r, _ in rows) / len(rows)
            mrr = sum(m for _, m in rows) / len(rows)
            cells.append(f"{recall:.3f} / {mrr:.3f}")
        count = len(scores[(style, modes[0])])
        print(f"{f'{style} ({count})':<12}" + "".join(f"{cell:>22}" for cell in cells))


def main() -> None:
    corpora_main(__doc__, "astro-questions", run)


if __name__ == "__main__":
    main()
