"""The gateway's Litestar app and its service host: REST, MCP, ops endpoints, identity, policy."""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Request, asgi
from litestar.di import NamedDependency, Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme
from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin
from litestar.plugins.prometheus import PrometheusConfig
from litestar.types import Receive, Scope, Send

from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.bodies import StrictJsonRequest
from cograph_gateway.errors import EXCEPTION_HANDLERS, Problem
from cograph_gateway.head import answering_head
from cograph_gateway.identity import ANONYMOUS, SIGN_IN, Authenticator, Principal
from cograph_gateway.mcp import McpEndpoint
from cograph_gateway.metrics import count_unmatched
from cograph_gateway.openapi import StrictStructSchemaPlugin
from cograph_gateway.operations import Operations
from cograph_gateway.operations.webhooks import WebhookOperations
from cograph_gateway.options import AllowEveryMethod
from cograph_gateway.routes.collections import CollectionsController
from cograph_gateway.routes.common import page
from cograph_gateway.routes.documents import DocumentsController
from cograph_gateway.routes.jobs import JobsController
from cograph_gateway.routes.repos import ReposController
from cograph_gateway.routes.search import SearchController
from cograph_gateway.routes.webhooks import WebhooksController
from cograph_gateway.web import web_face
from cograph_grpc import GrpcServer
from cograph_service import Readiness, ServiceHost, grpc_health_check, ops_handlers
from cograph_settings import Settings

NAME = "gateway"


def create_app(settings: Settings, backends: Backends, readiness: Readiness) -> Litestar:
    authenticator = Authenticator(settings.auth)
    access = Access(
        backends,
        hide_collection_existence=settings.auth.hide_collection_existence,
        lookup_seconds=settings.search.store_deadline_seconds,
    )
    mcp = McpEndpoint(settings, authenticator, backends, access)
    web = web_face(settings, authenticator, backends, access)

    async def principal(request: Request[Any, Any, Any]) -> Principal:
        found = await authenticator.authenticate(request.headers.get("authorization"))
        if found is not None:
            return found
        if settings.auth.anonymous_read:
            return ANONYMOUS
        raise Problem(401, SIGN_IN)

    def operations(principal: NamedDependency[Principal]) -> Operations:
        """The operations for this request's caller."""
        return Operations(backends, access, principal)

    # copy_scope=False: the endpoint hands the SDK the principal on the scope, on purpose.
    @asgi("/mcp", copy_scope=False)
    async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        await mcp(scope, receive, send)

    return Litestar(
        route_handlers=[
            *ops_handlers(NAME, readiness),
            JobsController,
            CollectionsController,
            DocumentsController,
            ReposController,
            SearchController,
            WebhooksController,
            mcp_endpoint,
            *web.route_handlers,
        ],
        dependencies={
            "principal": Provide(principal),
            "ops": Provide(operations, sync_to_thread=False),
            "page": Provide(page, sync_to_thread=False),
            # Webhooks act for no principal: their signature is their authentication.
            "webhooks": Provide(lambda: WebhookOperations(backends), sync_to_thread=False),
            **web.dependencies,
        },
        lifespan=[mcp.lifespan],
        # Request rate, latency and errors per route template (not per raw path: ids would
        # explode the label set), served by /metrics with the gRPC and job metrics.
        middleware=[
            PrometheusConfig(
                app_name="cograph_gateway", prefix="cograph_http", group_path=True, exclude=["/metrics"]
            ).middleware,
            *web.middleware,
        ],
        csrf_config=web.csrf,
        template_config=web.templates,
        before_send=[count_unmatched, AllowEveryMethod()],
        exception_handlers=EXCEPTION_HANDLERS,
        plugins=[OpenTelemetryPlugin(OpenTelemetryConfig()), StrictStructSchemaPlugin()],
        openapi_config=OpenAPIConfig(
            title="Cograph Document RAG",
            version="1.0.0",
            description="Markdown collections and repository documents, retrievable next to code. "
            "Errors are RFC 9457 problem+json. MCP (streamable HTTP) is served at /mcp.",
            path="/api/schema",
            components=Components(
                security_schemes={
                    "bearer": SecurityScheme(
                        type="http",
                        scheme="bearer",
                        description="A static API token or a JWT from the configured issuer.",
                    )
                }
            ),
            security=[{"bearer": []}],
        ),
        request_max_body_size=settings.gateway.max_upload_bytes,
        request_class=StrictJsonRequest,
        # Logging is configured once per process (with trace ids), not by each app.
        logging_config=None,
    )


async def create_service(settings: Settings) -> ServiceHost:
    backends = Backends.connect(settings)
    # The gateway serves whatever part of the system is up (a store that is down is named in
    # failures), so its readiness is its own process; the services it calls are only reported.
    readiness = Readiness(
        NAME, {}, dependencies={name: grpc_health_check(ch) for name, ch in backends.channels.items()}
    )
    app = create_app(settings, backends, readiness)
    # The gateway speaks HTTP to users; its gRPC server carries only the health service,
    # so a cluster can probe every service the same way.
    server = GrpcServer(NAME, settings.grpc)
    return ServiceHost(
        NAME,
        server,
        readiness,
        http_app=answering_head(app),
        http_drain_seconds=settings.gateway.drain_seconds,
        closers=[backends.close],
    )
