"""Reciprocal rank fusion: each stream votes 1 / (k + rank), weighted; ranks are kept to explain a hit."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import msgspec

# Cormack et al.'s k=60 was set for fusing many deep TREC runs; fusing two streams into a
# page of ten, it flattens rank 1 and rank 10 to within 15% of each other. k=10 keeps the top
# ranks apart and was at or near the best on all three relevance benchmarks (bench/scifact.py,
# bench/descriptions.py on astro-docs and obsidian-help-en); every k from 1 to 20 did well.
DEFAULT_RRF_K = 10.0


class Fused(msgspec.Struct, frozen=True):
    key: Hashable
    score: float
    # 1-based rank of the hit in each stream that found it.
    ranks: dict[str, int]


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
    ordered = sorted(scores, key=lambda key: (-scores[key], min(ranks[key].values())))
    return [Fused(key, scores[key], ranks[key]) for key in ordered[:limit]]
