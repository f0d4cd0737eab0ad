"""The MCP endpoint at /mcp (streamable HTTP, official SDK): the ASGI app that guards the transport
and authenticates the HTTP request's bearer token like REST before the SDK sees it; the tools then
authorize through the same operations as REST."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

from litestar import Litestar
from litestar.types import Receive, Scope, Send
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings

from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.errors import send_problem
from cograph_gateway.identity import (
    ANONYMOUS,
    SIGN_IN,
    AuthenticationError,
    Authenticator,
    KeySetUnavailableError,
)
from cograph_gateway.mcp.guard import (
    BodyTooLarge,
    ClientGone,
    judge,
    problems_for_plain_text,
    read_body,
    replaying,
    send_refusal,
    transport_refusal,
)
from cograph_gateway.mcp.server import create_mcp_server
from cograph_gateway.mcp.tools import PRINCIPAL_KEY, TOOL_DESCRIPTIONS
from cograph_settings import Settings


def _transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection for a gateway on loopback (a browser page must not reach it); behind
    an ingress the Host is the ingress's business and the bearer token is the protection."""
    loopback = settings.gateway.bind_host in ("127.0.0.1", "localhost", "::1")
    if not loopback:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    # A client of a gateway on port 80 sends the name alone ("Host: localhost").
    loopback_names = ["127.0.0.1", "localhost", "[::1]"]
    hosts = [*loopback_names, *(f"{name}:*" for name in loopback_names)]
    origins = [f"http://{host}" for host in hosts]
    if settings.gateway.public_url:
        public = urlsplit(settings.gateway.public_url)
        hosts.append(public.netloc)
        origins.append(f"{public.scheme}://{public.netloc}")
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


MAX_MCP_BODY = 1024 * 1024  # a tool call is a query and a few ids, never a document


class McpEndpoint:
    """The ASGI app mounted at /mcp: authenticates like REST, then hands over to the SDK."""

    def __init__(
        self, settings: Settings, authenticator: Authenticator, backends: Backends, access: Access
    ) -> None:
        self._anonymous_read = settings.auth.anonymous_read
        self._authenticator = authenticator
        self.server = create_mcp_server(backends, access)
        security = _transport_security(settings)
        self._security = TransportSecurityMiddleware(security)
        # Stateless, JSON responses: any gateway replica answers any request (no sticky sessions),
        # and the tools never call back into the client, so nothing needs a session.
        self.server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=True,
            json_response=True,
            transport_security=security,
            max_request_body_size=MAX_MCP_BODY,
        )
        self.session_manager: StreamableHTTPSessionManager = self.server.session_manager

    @asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        """The SDK's session manager (its task group) runs for as long as the gateway app does."""
        async with self.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if scope.get("method") != "POST":  # stateless: no event stream to open, no session to end
            await send_problem(send, 405, "the MCP endpoint answers POST requests only (stateless, JSON)")
            return
        if (refused := await transport_refusal(scope, self._security)) is not None:
            await send_problem(send, *refused)
            return
        too_large = f"an MCP request may be at most {MAX_MCP_BODY // 1024} KiB"
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_MCP_BODY:
            await send_problem(send, 413, too_large)
            return
        try:
            principal = await self._authenticator.authenticate(headers.get("authorization"))
        except AuthenticationError as error:
            await send_problem(send, 401, str(error))
            return
        except KeySetUnavailableError as error:
            await send_problem(send, 503, str(error))
            return
        if principal is None:
            if not self._anonymous_read:
                await send_problem(send, 401, SIGN_IN)
                return
            principal = ANONYMOUS
        try:  # a chunked body has no length to refuse it by: counted as it comes
            body = await read_body(receive, MAX_MCP_BODY)
        except BodyTooLarge:
            await send_problem(send, 413, too_large)
            return
        except ClientGone:
            return
        if (refusal := judge(body, TOOL_DESCRIPTIONS)) is not None:
            await send_refusal(send, refusal)
            return
        # The SDK builds its request object on this same scope; the tools read the principal from it.
        scope[PRINCIPAL_KEY] = principal  # type: ignore[literal-required]
        await self.session_manager.handle_request(
            scope,  # type: ignore[arg-type]
            replaying(body, receive),  # type: ignore[arg-type]
            problems_for_plain_text(send),  # type: ignore[arg-type]
        )
