"""Embedding texts with the service's provider, and the vector indexes the stored vectors need."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence

import asyncpg
from pgvector import Vector

from cograph_db import Connection
from cograph_embeddings import EmbeddingProvider, ModelInfo

# Vectors are stored untyped; an HNSW index needs one dimension, so there is one per dimension.
INDEXED_TABLES = ("repo_document_chunks", "code_nodes")


class Embedder:
    """Embeds in the provider's batch size and keeps each vector compact (float32) until it is written:
    a first sync of a large repository holds every new vector until its one transaction."""

    def __init__(self, provider: EmbeddingProvider) -> None:
        self.provider = provider
        self.seconds = 0.0
        """Time spent in the provider, for the sync's log line and the benchmark."""

    async def model(self) -> ModelInfo:
        return await self.provider.info()

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        vectors: list[Vector] = []
        size = self.provider.batch_size
        for start in range(0, len(texts), size):
            began = time.perf_counter()
            batch = await self.provider.embed(texts[start : start + size])
            self.seconds += time.perf_counter() - began
            vectors.extend(Vector(v) for v in batch)
        return vectors


async def ensure_vector_indexes(connection: Connection, dimension: int) -> None:
    """HNSW cosine indexes over the rows of this dimension; created once, outside any sync transaction."""
    for table in INDEXED_TABLES:
        # IF NOT EXISTS is not race-free: another replica may create the index at the same moment.
        with contextlib.suppress(asyncpg.DuplicateTableError, asyncpg.UniqueViolationError):
            await connection.execute(
                f"CREATE INDEX IF NOT EXISTS {table}_embedding_{dimension:d} ON {table}"
                f" USING hnsw ((embedding::vector({dimension:d})) vector_cosine_ops)"
                f" WHERE embedding_dim = {dimension:d}"
            )
