"""The provider the settings name."""

from __future__ import annotations

from cograph_embeddings.base import EmbeddingProvider
from cograph_embeddings.local import LocalProvider
from cograph_embeddings.openai import OpenAIProvider
from cograph_settings import EmbeddingSettings


def create_provider(settings: EmbeddingSettings) -> EmbeddingProvider:
    if settings.provider == "openai":
        return OpenAIProvider(
            base_url=settings.base_url,
            model=settings.model,
            api_key=settings.api_key,
            batch_size=settings.batch_size,
            timeout_seconds=settings.timeout_seconds,
            dimensions=settings.dimensions,
        )
    return LocalProvider(
        settings.model,
        settings.model_path or None,
        settings.batch_size,
        runtime=settings.runtime,
        export_dir=settings.export_dir or None,
    )
