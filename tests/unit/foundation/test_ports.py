"""A port already in use is an error with one clear line, never a port shared with another process."""

from __future__ import annotations

import socket

import pytest

from cograph_grpc import GrpcServer
from cograph_service import Readiness, ServiceHost
from cograph_settings import Settings

GRPC = Settings().grpc


async def test_a_grpc_port_in_use_is_refused_not_shared() -> None:
    """grpcio binds with SO_REUSEPORT by default: a second server on the port took half the calls."""
    first = GrpcServer("first", GRPC, service_names=[], register=[])
    second = GrpcServer("second", GRPC, service_names=[], register=[])
    port = await first.start("127.0.0.1", 0)
    try:
        with pytest.raises(OSError, match=f"second: cannot listen on 127.0.0.1:{port}"):
            await second.start("127.0.0.1", port)
    finally:
        await second.stop()
        await first.stop()


async def test_an_http_port_in_use_releases_the_grpc_port_and_closes_the_service() -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    closed: list[str] = []

    async def close() -> None:
        closed.append("pool")

    grpc_server = GrpcServer("svc", GRPC, service_names=[], register=[])
    host = ServiceHost("svc", grpc_server, Readiness("svc", {}), closers=[close])
    try:
        with pytest.raises(OSError, match=r"(?i)address already in use"):
            await host.start("127.0.0.1", 0, taken.getsockname()[1])
    finally:
        taken.close()
    assert closed == ["pool"]
    again = GrpcServer("again", GRPC, service_names=[], register=[])
    try:  # the gRPC port the failed start had is free again
        assert await again.start("127.0.0.1", grpc_server.port) == grpc_server.port
    finally:
        await again.stop()
