"""The gateway end to end: the real services behind it, reached over real HTTP, with JWTs configured."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import msgspec
import pytest
from e2e.gateway.helpers import JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from cograph_cli.runtime import System, start_system
from cograph_embeddings import EmbeddingProvider
from cograph_settings import Settings

SystemFactory = Callable[..., contextlib.AbstractAsyncContextManager[httpx.AsyncClient]]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The root settings, plus HS256 JWTs from a test issuer for a test audience."""
    replace = msgspec.structs.replace
    return replace(
        settings,
        auth=replace(settings.auth, jwt_issuer=JWT_ISSUER, jwt_audience=JWT_AUDIENCE, jwt_secret=JWT_SECRET),
    )


@pytest.fixture
def system_with(
    settings: Settings, database: str, embedder: EmbeddingProvider, span_exporter: InMemorySpanExporter
) -> SystemFactory:
    """Start the system with other auth settings (anonymous read, hidden existence); yields a client."""

    @contextlib.asynccontextmanager
    async def start(**auth: Any) -> AsyncIterator[httpx.AsyncClient]:
        configured = msgspec.structs.replace(settings, auth=msgspec.structs.replace(settings.auth, **auth))
        running: System = await start_system(configured, database, embedder)
        try:
            await asyncio.wait_for(running.hosts["gateway"].ready.wait(), 30)
            async with httpx.AsyncClient(base_url=running.gateway_url, timeout=60) as client:
                yield client
        finally:
            await running.stop()

    return start
