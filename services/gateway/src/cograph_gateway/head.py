"""HEAD answered as GET without the body (RFC 9110 9.3.2: a general-purpose server supports
both). Litestar routes each method apart, so a GET endpoint answered HEAD with 405."""

from __future__ import annotations

from typing import cast

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

# MCP's GET opens an event stream: HEAD there stays the MCP transport's to answer.
_EVENT_STREAM_PATHS = ("/mcp",)


def answering_head(app: ASGIApp) -> ASGIApp:
    """app, with a HEAD request served as its GET: the same status and headers, no body."""

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != ScopeType.HTTP
            or scope.get("method") != "HEAD"
            or scope["path"].startswith(_EVENT_STREAM_PATHS)
        ):
            await app(scope, receive, send)
            return
        ended = False

        async def without_body(message: Message) -> None:
            nonlocal ended
            if message["type"] == "http.response.body":
                if ended:
                    return
                ended = True
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await app(cast(Scope, {**scope, "method": "GET"}), receive, without_body)

    return serve
