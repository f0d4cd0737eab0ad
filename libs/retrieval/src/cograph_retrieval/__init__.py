"""Hybrid retrieval written once for every store: dense (pgvector) + BM25 full text, fused by RRF."""

from cograph_retrieval.fusion import DEFAULT_RRF_K, Fused, reciprocal_rank_fusion
from cograph_retrieval.hybrid import (
    ChunkTable,
    HybridRetriever,
    Query,
    Stream,
    StreamHit,
    ensure_vector_index,
    skips_dense,
)

__all__ = [
    "DEFAULT_RRF_K",
    "ChunkTable",
    "Fused",
    "HybridRetriever",
    "Query",
    "Stream",
    "StreamHit",
    "ensure_vector_index",
    "reciprocal_rank_fusion",
    "skips_dense",
]
