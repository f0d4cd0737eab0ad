"""What every provider does: embed texts in batches and say which model made the vectors."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TypeVar

import msgspec

from cograph_telemetry.metrics import EMBEDDING_BATCH_SIZE, EMBEDDING_CALLS

_Vectors = TypeVar("_Vectors", list[float], list[list[float]])


class EmbeddingError(RuntimeError):
    """The provider could not embed; the message says why in terms a person can act on."""


class ModelInfo(msgspec.Struct, frozen=True):
    """Stored with every vector: query and chunk vectors must come from the same model."""

    name: str
    dimension: int


class InputWindows(abc.ABC):
    """How much text the model reads: a longer text is cut into windows that each fit."""

    max_tokens: int
    """Word pieces of text one input holds (the model's special tokens not counted)."""

    @abc.abstractmethod
    def spans(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """Each text's word pieces as (start, end) character offsets, in order. Blocking."""


class EmbeddingProvider(abc.ABC):
    kind: str = "provider"
    # Remote: the model runs behind an endpoint, so its outage is a dependency's, not the caller's.
    remote: bool = False

    def __init__(self, batch_size: int) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = batch_size

    @abc.abstractmethod
    async def info(self) -> ModelInfo:
        """The model's name and dimension."""

    @abc.abstractmethod
    async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        """One request to the provider, at most batch_size texts."""

    async def _embed_query(self, text: str) -> list[float]:
        """One query's vector. A provider whose model also serves ingestion answers it first."""
        return (await self._embed_batch([text]))[0]

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed any number of texts, batch_size at a time, in order."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            vectors.extend(await self._counted(len(batch), partial(self._embed_batch, batch)))
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        """The vector of a query someone is waiting for: it never queues behind ingestion."""
        return await self._counted(1, partial(self._embed_query, text))

    async def _counted(self, texts: int, call: Callable[[], Awaitable[_Vectors]]) -> _Vectors:
        model = (await self.info()).name
        EMBEDDING_BATCH_SIZE.labels(self.kind, model).observe(texts)
        try:
            vectors = await call()
        except EmbeddingError:
            EMBEDDING_CALLS.labels(self.kind, model, "error").inc()
            raise
        EMBEDDING_CALLS.labels(self.kind, model, "ok").inc()
        return vectors

    async def input_windows(self) -> InputWindows | None:
        """The model's tokenizer and input length, where the provider knows them; None when it
        does not (a remote model reads what it reads, and truncates the rest itself)."""
        return None

    async def check_alive(self) -> None:
        """Raise EmbeddingError unless the provider can embed now. An in-process model can once it
        has loaded (this waits for the load); a remote provider must ask its endpoint."""
        await self.info()

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the provider holds."""
