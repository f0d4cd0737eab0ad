"""Embedding providers: in-process sentence-transformers and OpenAI-compatible HTTP."""

from cograph_embeddings.base import EmbeddingError, EmbeddingProvider, InputWindows, ModelInfo
from cograph_embeddings.factory import create_provider
from cograph_embeddings.local import LocalProvider, default_export_dir
from cograph_embeddings.openai import OpenAIProvider

__all__ = [
    "EmbeddingError",
    "EmbeddingProvider",
    "InputWindows",
    "LocalProvider",
    "ModelInfo",
    "OpenAIProvider",
    "create_provider",
    "default_export_dir",
]
