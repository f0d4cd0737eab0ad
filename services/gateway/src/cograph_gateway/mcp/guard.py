"""What the MCP endpoint checks before the SDK reads a request, and how it answers in its stead.

The SDK answers some mistakes in plain text (a wrong Content-Type, Host or Origin), some with a
pydantic dump (a batch, a missing method), takes a malformed id for a notification (202, no
answer), and an unknown tool for a failed call. Here the body is read once, bounded however it
is sent (Content-Length or chunked), judged as JSON-RPC, and replayed to the SDK; its plain-text
refusals become problem+json like every other refusal of the gateway. The SDK's transport checks
(Host and Origin against DNS rebinding, Content-Type, Accept) run here first, before anything
about the request is answered.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import msgspec
from litestar.types import HTTPRequestEvent, Message, Receive, ReceiveMessage, Scope, Send
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request

from cograph_errors import shown
from cograph_gateway.errors import send_json, send_problem

# JSON-RPC 2.0 error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


class BodyTooLarge(Exception):
    """The request body went past the limit."""


class ClientGone(Exception):
    """The client disconnected before its body was whole: there is no request to answer."""


async def read_body(receive: Receive, limit: int) -> bytes:
    """The whole request body; BodyTooLarge as soon as it passes limit bytes, ClientGone when
    the client leaves before the end of it."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def transport_refusal(scope: Scope, security: TransportSecurityMiddleware) -> tuple[int, str] | None:
    """(status, reason) when the SDK would refuse this POST for its headers alone: a Host or
    Origin a DNS-rebinding page sends, a body that is not JSON, an answer the client won't take.
    Checked before the body is judged, so such a request learns nothing about the server."""
    request = Request(scope)  # type: ignore[arg-type]  # headers only: the body is not read
    refused = await security.validate_request(request, is_post=True)
    if refused is not None:
        return refused.status_code, bytes(refused.body).decode()
    accepts_json, _ = check_accept_headers(request)
    if not accepts_json:
        return 406, "Not Acceptable: Client must accept application/json"
    return None


def replaying(body: bytes, receive: Receive) -> Receive:
    """A receive that hands the SDK the body already read, then whatever the client sends next."""
    pending = [body]

    async def replay() -> ReceiveMessage:
        if pending:
            event: HTTPRequestEvent = {"type": "http.request", "body": pending.pop(), "more_body": False}
            return event
        return await receive()

    return replay


class Refusal(msgspec.Struct, frozen=True):
    """A JSON-RPC error answered in the SDK's stead."""

    status: int
    id: str | int | None
    code: int
    message: str

    def body(self) -> bytes:
        error = {"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}}
        return msgspec.json.encode(error)


def judge(body: bytes, tools: Collection[str]) -> Refusal | None:
    """Why the SDK should not see this body, or None. Unreadable JSON is left to the SDK, whose
    parse error (-32700) is right; so is everything this does not know to be wrong."""
    try:
        message: Any = json.loads(body)
    except ValueError:
        return None
    except RecursionError:  # thousands of nested arrays: the decoder recurses
        return Refusal(400, None, PARSE_ERROR, "the body is nested too deeply to read")
    if isinstance(message, list):
        return Refusal(
            400, None, INVALID_REQUEST, "batch requests are not supported: send one JSON-RPC message"
        )
    if not isinstance(message, dict):
        return Refusal(400, None, INVALID_REQUEST, "a JSON-RPC message is a JSON object")
    if message.get("jsonrpc") != "2.0":
        return Refusal(400, None, INVALID_REQUEST, 'a JSON-RPC message has "jsonrpc": "2.0"')
    request_id = message.get("id")
    if "id" in message and (isinstance(request_id, bool) or not isinstance(request_id, str | int)):
        return Refusal(400, None, INVALID_REQUEST, "a request id is a string or an integer")
    method = message.get("method")
    if "method" in message and not isinstance(method, str):
        return Refusal(400, request_id, INVALID_REQUEST, "a JSON-RPC method is a string")
    if method is None and "result" not in message and "error" not in message:
        return Refusal(400, request_id, INVALID_REQUEST, "a JSON-RPC request names its method")
    params = message.get("params")
    if method is not None and params is not None and not isinstance(params, dict):
        # JSON-RPC allows an array too, but every MCP method names its parameters.
        return Refusal(400, request_id, INVALID_REQUEST, f'"params" is a JSON object, not {_kind(params)}')
    if "id" not in message:
        return None  # a notification: never answered
    if method == "tools/call":
        return _judge_tool_call(request_id, params or {}, tools)
    if method == "prompts/get":
        return Refusal(200, request_id, INVALID_PARAMS, "this server has no prompts")
    return None


def _judge_tool_call(
    request_id: str | int | None,
    params: dict[str, Any],
    tools: Collection[str],
) -> Refusal | None:
    """Why a tools/call should not reach the SDK, which answers a bare "Invalid request parameters"
    for a call that names no tool or whose arguments are not an object."""
    name = params.get("name")
    known = ", ".join(sorted(tools))
    if not isinstance(name, str):
        return Refusal(
            200, request_id, INVALID_PARAMS, f'a tools/call names its tool in "name": the tools are {known}'
        )
    if name not in tools:
        return Refusal(200, request_id, INVALID_PARAMS, f"unknown tool {shown(name)}: the tools are {known}")
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        return Refusal(
            200,
            request_id,
            INVALID_PARAMS,
            f'the "arguments" of {name} are a JSON object of names and values, not {_kind(arguments)}',
        )
    return None


def _kind(value: object) -> str:
    """What a JSON value is, in words."""
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "true or false"
    return "a number"


async def send_refusal(send: Send, refusal: Refusal) -> None:
    await send_json(send, refusal.status, refusal.body(), "application/json")


def problems_for_plain_text(send: Send) -> Send:
    """A send that turns the SDK's plain-text refusals (4xx, 5xx) into problem+json, their text
    the detail; JSON answers and successes pass unchanged."""
    held: dict[str, Any] = {}

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = {key.lower(): value for key, value in message.get("headers", [])}
            if message["status"] >= 400 and not headers.get(b"content-type", b"").startswith(b"application/"):
                held["start"] = message
                held["body"] = b""
                return
            await send(message)
            return
        if message["type"] == "http.response.body" and "start" in held:
            held["body"] += message.get("body", b"")
            if not message.get("more_body", False):
                detail = held.pop("body").decode(errors="replace").strip()
                await send_problem(send, held.pop("start")["status"], detail or "the MCP request was refused")
            return
        await send(message)

    return wrapped
