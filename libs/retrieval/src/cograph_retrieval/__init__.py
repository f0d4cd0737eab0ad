"""Hybrid retrieval written once for every store: dense (pgvector) + BM25 full text, fused by their scores
(prose) or by reciprocal rank fusion (code, with its symbol stream)."""

from cograph_retrieval.fusion import DEFAULT_RRF_K, Fused, Scored, convex_combination, reciprocal_rank_fusion
from cograph_retrieval.hybrid import (
    ChunkTable,
    HybridRetriever,
    Query,
    Stream,
    StreamHit,
    ensure_vector_index,
    skips_dense,
)
from cograph_retrieval.passages import RECIPE, Passage, embed_passages

__all__ = [
    "DEFAULT_RRF_K",
    "RECIPE",
    "ChunkTable",
    "Fused",
    "HybridRetriever",
    "Passage",
    "Query",
    "Scored",
    "Stream",
    "StreamHit",
    "convex_combination",
    "embed_passages",
    "ensure_vector_index",
    "reciprocal_rank_fusion",
    "skips_dense",
]
