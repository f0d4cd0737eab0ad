"""A grpc.aio server with the standard health service, reflection and interceptors.

Health starts NOT_SERVING and is flipped to SERVING by the owner once its
dependencies are ready, and back before shutdown, so probes never lie.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from grpc import aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from opentelemetry.instrumentation.grpc import aio_server_interceptor

from cograph_grpc.errors import Outage
from cograph_grpc.interceptors import ServerInterceptor
from cograph_settings import GrpcSettings

log = logging.getLogger(__name__)

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class GrpcServer:
    def __init__(
        self,
        name: str,
        settings: GrpcSettings,
        *,
        service_names: Sequence[str] = (),
        register: Sequence[Callable[[aio.Server], Any]] = (),
        outages: Sequence[Outage] = (),
    ) -> None:
        """`register` adds the servicers (`lambda s: add_XServicer_to_server(servicer, s)`);
        `service_names` are their full names, for health and reflection; `outages` the errors
        answered UNAVAILABLE (a database that cannot be reached)."""
        self.name = name
        self._settings = settings
        self._service_names = list(service_names)
        self.health = health.aio.HealthServicer()  # type: ignore[attr-defined]
        self.server = aio.server(
            interceptors=[aio_server_interceptor(), ServerInterceptor(name, outages)],  # type: ignore[no-untyped-call]
            options=[
                ("grpc.max_send_message_length", settings.max_message_bytes),
                ("grpc.max_receive_message_length", settings.max_message_bytes),
                # Clients reconnect now and then, so new replicas get their share of calls;
                # a call in flight (a waited sync can take many minutes) may finish first.
                ("grpc.max_connection_age_ms", 300_000),
                ("grpc.max_connection_age_grace_ms", 3_600_000),
                # Accept the clients' 30 s keepalive pings during long calls instead of
                # answering GOAWAY "too many pings".
                ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
                ("grpc.http2.max_ping_strikes", 0),
                # grpcio shares a port already bound (SO_REUSEPORT): a second process on it would
                # silently take half the calls. A port in use must be an error instead.
                ("grpc.so_reuseport", 0),
            ],
        )
        for add in register:
            add(self.server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        if settings.reflection:
            reflection.enable_server_reflection(
                [*self._service_names, health.SERVICE_NAME, reflection.SERVICE_NAME], self.server
            )
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        """Listen (port 0 picks a free one) and answer the port bound."""
        try:
            self.port = self.server.add_insecure_port(f"{host}:{port}")
        except RuntimeError:  # grpcio's "Failed to bind": the port is taken or not ours
            self.port = 0
        if self.port == 0:
            raise OSError(
                f"{self.name}: cannot listen on {host}:{port} (gRPC): the address is in use or unavailable"
            )
        await self.server.start()
        await self.set_serving(False)
        log.info("%s gRPC listening on %s:%d", self.name, host, self.port)
        return self.port

    async def set_serving(self, serving: bool) -> None:
        status = SERVING if serving else NOT_SERVING
        for service in ["", *self._service_names]:
            await self.health.set(service, status)

    async def stop(self) -> None:
        """Refuse new work first (health NOT_SERVING), then let in-flight calls finish."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(self._settings.grace_seconds)
