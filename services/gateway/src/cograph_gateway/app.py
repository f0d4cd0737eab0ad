"""The gateway's Litestar app and its service host: REST, ops endpoints, identity, policy."""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Request
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin

from cograph_gateway.access import CollectionGuard
from cograph_gateway.backends import Backends
from cograph_gateway.errors import EXCEPTION_HANDLERS, Problem
from cograph_gateway.identity import ANONYMOUS, Authenticator, Principal
from cograph_gateway.routes.collections import CollectionsController
from cograph_grpc import GrpcServer
from cograph_service import Readiness, ServiceHost, grpc_health_check, ops_handlers
from cograph_settings import Settings

NAME = "gateway"


def create_app(settings: Settings, backends: Backends, readiness: Readiness) -> Litestar:
    authenticator = Authenticator(settings.auth)
    guard = CollectionGuard(backends, hide_existence=settings.auth.hide_collection_existence)

    def principal(request: Request[Any, Any, Any]) -> Principal:
        found = authenticator.authenticate(request.headers.get("authorization"))
        if found is not None:
            return found
        if settings.auth.anonymous_read:
            return ANONYMOUS
        raise Problem(401, "sign in: send 'Authorization: Bearer <token>'")

    return Litestar(
        route_handlers=[*ops_handlers(NAME, readiness), CollectionsController],
        dependencies={
            "principal": Provide(principal, sync_to_thread=False),
            "backends": Provide(lambda: backends, use_cache=True, sync_to_thread=False),
            "guard": Provide(lambda: guard, use_cache=True, sync_to_thread=False),
        },
        exception_handlers=EXCEPTION_HANDLERS,
        plugins=[OpenTelemetryPlugin(OpenTelemetryConfig())],
        openapi_config=OpenAPIConfig(
            title="Cograph Document RAG",
            version="1.0.0",
            description="Markdown collections and repository documents, retrievable next to code.",
            path="/api/schema",
        ),
        request_max_body_size=settings.gateway.max_upload_bytes,
        # Logging is configured once per process (with trace ids), not by each app.
        logging_config=None,
    )


async def create_service(settings: Settings) -> ServiceHost:
    backends = Backends.connect(settings)
    readiness = Readiness(NAME, {name: grpc_health_check(ch) for name, ch in backends.channels.items()})
    app = create_app(settings, backends, readiness)
    # The gateway speaks HTTP to users; its gRPC server carries only the health service,
    # so a cluster can probe every service the same way.
    server = GrpcServer(NAME, settings.grpc)
    return ServiceHost(NAME, server, readiness, http_app=app, closers=[backends.close])
