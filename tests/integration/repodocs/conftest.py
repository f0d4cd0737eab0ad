"""A repodocs service on a fresh database, with the real model behind a probe."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from integration.repodocs.helpers import Running, running_service

from cograph_embeddings import EmbeddingProvider
from cograph_settings import Settings


@pytest.fixture
async def service(settings: Settings, database: str, embedder: EmbeddingProvider) -> AsyncIterator[Running]:
    async with running_service(settings, database, embedder) as running:
        yield running
