"""Fusing ranked streams into one ranking. Prose (doc and collection chunks) is fused by the streams'
scores, a convex combination; code nodes, whose symbol stream has ranks and no scores, by
reciprocal rank fusion. Either keeps each hit's rank in every stream that found it, to explain it."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import NamedTuple

import msgspec

# Cormack et al.'s k=60 was set for fusing many deep TREC runs; fusing a few streams into a page
# of ten, it flattens rank 1 and rank 10 to within 15% of each other. k=10 keeps the top ranks
# apart; when prose was fused by rank it was at or near the best on all three relevance benchmarks
# of the time (bench/scifact.py, bench/descriptions.py on astro-docs and obsidian-help-en).
DEFAULT_RRF_K = 10.0


class Fused(msgspec.Struct, frozen=True):
    key: Hashable
    score: float
    # 1-based rank of the hit in each stream that found it.
    ranks: dict[str, int]


class Scored(NamedTuple):
    """A stream's keys, best first, with their scores, and the score it gives a key it did not return
    (for BM25 0, what a chunk without the query's words scores; for cosine similarity the lowest it
    returned, which a key beyond its candidates is at most)."""

    keys: Sequence[Hashable]
    scores: Sequence[float]
    floor: float


def reciprocal_rank_fusion(
    streams: Mapping[str, Sequence[Hashable]],
    weights: Mapping[str, float],
    k: float,
    limit: int,
) -> list[Fused]:
    """Fuse ranked lists of keys; ties break on the best single rank, then on stream order."""
    scores: dict[Hashable, float] = {}
    ranks: dict[Hashable, dict[str, int]] = {}
    for stream, keys in streams.items():
        weight = weights.get(stream, 1.0)
        if weight <= 0:
            continue
        for rank, key in enumerate(keys, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            ranks.setdefault(key, {})[stream] = rank
    return _ordered(scores, ranks, limit)


def convex_combination(
    streams: Mapping[str, Scored], weights: Mapping[str, float], limit: int
) -> list[Fused]:
    """Fuse scored streams: each key's score in each stream as a share of that stream's best (its
    floor where it did not return the key), weighted and summed. A hit first in every stream scores
    the sum of the weights.

    Rank fusion hands rank 2 the same vote whether it is as good as rank 1 or far behind it; the
    scores say which. Measured through the product on the four relevance benchmarks with the same
    streams and coverage-trusted weights (bench/scifact.py, bench/descriptions.py,
    bench/astro_questions.py), against reciprocal rank fusion at k=10: SciFact nDCG@10 0.731 against
    0.727, astro-docs descriptions 0.851 against 0.838, obsidian-help-en 0.892 against 0.880,
    astro paraphrases recall@5 0.783 against 0.733, keyword and question queries equal."""
    scores: dict[Hashable, float] = {}
    ranks: dict[Hashable, dict[str, int]] = {}
    running = {name: stream for name, stream in streams.items() if weights.get(name, 1.0) > 0 and stream.keys}
    for name, stream in running.items():
        for rank, key in enumerate(stream.keys, start=1):
            ranks.setdefault(key, {})[name] = rank
    for name, stream in running.items():
        weight, best = weights.get(name, 1.0), max(stream.scores)
        # Scores as shares of the best; a stream whose best is not above zero keeps its own scale.
        scale = weight / best if best > 0 else weight
        own = dict(zip(stream.keys, stream.scores, strict=True))
        for key in ranks:
            scores[key] = scores.get(key, 0.0) + scale * own.get(key, stream.floor)
    return _ordered(scores, ranks, limit)


def _ordered(scores: dict[Hashable, float], ranks: dict[Hashable, dict[str, int]], limit: int) -> list[Fused]:
    """Best score first; ties break on the best single rank, then on stream order."""
    ordered = sorted(scores, key=lambda key: (-scores[key], min(ranks[key].values())))
    return [Fused(key, scores[key], ranks[key]) for key in ordered[:limit]]
