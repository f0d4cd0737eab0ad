"""An embedding provider that counts what it embeds; the real model still does the work."""

from __future__ import annotations

from collections.abc import Sequence

from cograph_embeddings import EmbeddingProvider, InputWindows, ModelInfo


class CountingProvider(EmbeddingProvider):
    kind = "counting"

    def __init__(self, inner: EmbeddingProvider) -> None:
        super().__init__(inner.batch_size)
        self._inner = inner
        self.calls = 0
        self.texts = 0

    async def info(self) -> ModelInfo:
        return await self._inner.info()

    async def input_windows(self) -> InputWindows | None:
        return await self._inner.input_windows()

    async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts += len(texts)
        return await self._inner.embed(texts)
