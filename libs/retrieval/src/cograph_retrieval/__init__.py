"""Hybrid retrieval written once for every store: dense (pgvector) + BM25 full text, fused by RRF."""

from cograph_retrieval.fusion import Fused, reciprocal_rank_fusion
from cograph_retrieval.hybrid import ChunkTable, HybridRetriever, Query, StreamHit

__all__ = [
    "ChunkTable",
    "Fused",
    "HybridRetriever",
    "Query",
    "StreamHit",
    "reciprocal_rank_fusion",
]
