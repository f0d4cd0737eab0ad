"""Starting and stopping services in this process: one, or all four wired together."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import msgspec

from cograph_collections.app import create_service as create_collections
from cograph_collections.app import create_worker
from cograph_db import EmbeddedPostgres
from cograph_embeddings import EmbeddingProvider, create_provider
from cograph_gateway.app import create_service as create_gateway
from cograph_repodocs.app import create_service as create_repodocs
from cograph_search.app import create_service as create_search
from cograph_service import ServiceHost, serving_while_starting
from cograph_settings import Settings

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def database(settings: Settings) -> AsyncIterator[str]:
    """The configured DSN, or the embedded server on the configured data directory."""
    if settings.database.dsn:
        yield settings.database.dsn
        return
    embedded = EmbeddedPostgres(settings.database.data_dir, settings.database.embedded_shared_buffers)
    dsn = await asyncio.to_thread(embedded.start)
    try:
        yield dsn
    finally:
        await asyncio.to_thread(embedded.stop)


@dataclass
class System:
    """All four services in one process, talking over real gRPC on loopback."""

    settings: Settings
    hosts: dict[str, ServiceHost] = field(default_factory=dict)

    @property
    def gateway_url(self) -> str:
        gateway = self.settings.gateway
        return gateway.public_url or f"http://{gateway.bind_host}:{self.hosts['gateway'].http.port}"

    async def stop(self) -> None:
        for name in reversed(list(self.hosts)):
            await self.hosts.pop(name).stop()


async def start_system(settings: Settings, dsn: str, embedder: EmbeddingProvider) -> System:
    """Start the stores, then search (it dials them), then the gateway (it dials all three).

    Each service listens where its settings say; a port of 0 picks a free one, and
    the services started later are told the real address.
    """
    system = System(settings)
    try:
        stores: dict[str, Callable[[], Awaitable[ServiceHost]]] = {
            "collections": lambda: create_collections(settings, dsn, embedder, with_worker=True),
            "repodocs": lambda: create_repodocs(settings, dsn, embedder),
        }
        for name, create in stores.items():
            endpoint = getattr(settings, name)
            host = await create()
            await host.start(endpoint.bind_host, endpoint.grpc_port, endpoint.http_port)
            system.hosts[name] = host
            target = f"{endpoint.bind_host}:{host.grpc.port}"
            settings = msgspec.structs.replace(
                settings, **{name: msgspec.structs.replace(endpoint, target=target)}
            )
        search = await create_search(settings, embedder)
        await search.start(settings.search.bind_host, settings.search.grpc_port, settings.search.http_port)
        system.hosts["search"] = search
        settings = msgspec.structs.replace(
            settings,
            search=msgspec.structs.replace(
                settings.search, target=f"{settings.search.bind_host}:{search.grpc.port}"
            ),
        )
        gateway = await create_gateway(settings)
        await gateway.start(settings.gateway.bind_host, settings.gateway.grpc_port, settings.gateway.port)
        system.hosts["gateway"] = gateway
        system.settings = settings
    except BaseException:
        await system.stop()
        raise
    return system


async def start_service(name: str, settings: Settings, dsn: str) -> ServiceHost:
    """One service, as a pod runs it."""
    if name == "gateway":
        host = await create_gateway(settings)
        await host.start(settings.gateway.bind_host, settings.gateway.grpc_port, settings.gateway.port)
        return host
    embedder = create_provider(settings.embedding)
    # The worker is its own pod on the collections ports, serving health and metrics only.
    endpoint = settings.collections if name == "worker" else getattr(settings, name)
    # Alive while it migrates, however long that takes; ready once it serves.
    async with serving_while_starting(name, endpoint.bind_host, endpoint.http_port):
        if name == "worker":
            host = await create_worker(settings, dsn, embedder)
        elif name == "search":
            host = await create_search(settings, embedder)
        elif name == "collections":
            host = await create_collections(settings, dsn, embedder)
        elif name == "repodocs":
            host = await create_repodocs(settings, dsn, embedder)
        else:
            raise ValueError(f"unknown service {name!r}")
    await host.start(endpoint.bind_host, endpoint.grpc_port, endpoint.http_port)
    return host


async def wait_for_signal() -> None:
    """Until Ctrl-C or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
