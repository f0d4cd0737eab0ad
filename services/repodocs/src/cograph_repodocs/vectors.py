"""Embedding texts with the service's provider."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from pgvector import Vector

from cograph_embeddings import EmbeddingProvider, ModelInfo
from cograph_retrieval import Passage
from cograph_retrieval.passages import windows


class Embedder:
    """Embeds in the provider's batch size and keeps each vector compact (float32) until it is written:
    a first sync of a large repository holds every new vector until its one transaction."""

    def __init__(self, provider: EmbeddingProvider, embedded: Callable[[int], None] | None = None) -> None:
        self.provider = provider
        self.seconds = 0.0
        """Time spent in the provider, for the sync's log line and the benchmark."""
        self._embedded = embedded

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
            if self._embedded is not None:
                self._embedded(len(batch))
        return vectors

    async def windows(self, passages: Sequence[Passage]) -> list[list[str]]:
        """Each passage's window texts (cograph_retrieval.passages): what embed_windows embeds."""
        return await windows(self.provider, passages)

    async def embed_passages(self, passages: Sequence[Passage]) -> list[list[Vector]]:
        """Each passage's window vectors (cograph_retrieval.passages), in order."""
        return await self.embed_windows(await self.windows(passages))

    async def embed_windows(self, texts: Sequence[Sequence[str]]) -> list[list[Vector]]:
        """The vectors of each passage's window texts, grouped as they are."""
        vectors = await self.embed([text for group in texts for text in group])
        grouped: list[list[Vector]] = []
        start = 0
        for group in texts:
            grouped.append(vectors[start : start + len(group)])
            start += len(group)
        return grouped
