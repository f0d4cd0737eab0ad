"""Errors as RFC 9457 problem+json, with a message a person understands; never a bare 500."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

import grpc
import msgspec
from grpc import aio
from litestar import Request, Response
from litestar.exceptions import HTTPException, SerializationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Send

from cograph_errors import shortened
from cograph_gateway.identity import AuthenticationError, KeySetUnavailableError
from cograph_gateway.options import allowed
from cograph_gateway.schemas import ProblemDetails
from cograph_grpc import OUTAGE_KEY
from cograph_telemetry import current_trace_id

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"

GRPC_TO_HTTP = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}

TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request too large",
    415: "Unsupported media type",
    422: "Unprocessable request",
    429: "Too many requests",
    500: "Internal error",
    501: "Not implemented",
    502: "Bad gateway",
    503: "Service unavailable",
    504: "Gateway timeout",
}


# How long a client is asked to wait before trying a 503 again (a store's database restarting, a
# key set being fetched): the Retry-After of every 503 the gateway answers.
RETRY_AFTER_SECONDS = 5


def retry_after(status: int) -> dict[str, str]:
    """The Retry-After header a 503 carries; none for any other status."""
    return {"Retry-After": str(RETRY_AFTER_SECONDS)} if status == 503 else {}


# How much of a validator's message an answer repeats (msgspec quotes the bad value in it).
_MESSAGE_CHARS = 300


def cut(message: str) -> str:
    """A message built from input (a validator's, a decoder's), cut short when long."""
    return shortened(message, _MESSAGE_CHARS)


class Problem(Exception):
    """An error the gateway itself decides (policy, validation); `extra` adds members to the body."""

    def __init__(self, status: int, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.extra = extra


def problem_body(status: int, detail: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "about:blank",
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        **extra,
    }


def problem(
    status: int, detail: str, headers: Mapping[str, str] | None = None, **extra: Any
) -> Response[dict[str, Any]]:
    sent = {"WWW-Authenticate": "Bearer"} if status == 401 else retry_after(status)
    return Response(
        problem_body(status, detail, **extra),
        status_code=status,
        media_type=PROBLEM_JSON,
        headers={**sent, **(headers or {})},
    )


async def send_json(
    send: Send, status: int, body: bytes, content_type: str, headers: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    """One whole JSON answer, written straight to ASGI (the mounted MCP app is outside Litestar's routing)."""
    all_headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
        *headers,
    ]
    start: HTTPResponseStartEvent = {"type": "http.response.start", "status": status, "headers": all_headers}
    await send(start)
    end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": body, "more_body": False}
    await send(end)


async def send_problem(send: Send, status: int, detail: str) -> None:
    """The same problem, written straight to ASGI."""
    headers = {
        401: ((b"www-authenticate", b"Bearer"),),
        405: ((b"allow", b"POST"),),
        503: ((b"retry-after", str(RETRY_AFTER_SECONDS).encode()),),
    }.get(status, ())
    await send_json(send, status, msgspec.json.encode(problem_body(status, detail)), PROBLEM_JSON, headers)


def handle_problem(request: Request[Any, Any, Any], exc: Problem) -> Response[dict[str, Any]]:
    return problem(exc.status, exc.detail, **exc.extra)


def handle_authentication(
    request: Request[Any, Any, Any], exc: AuthenticationError
) -> Response[dict[str, Any]]:
    return problem(401, str(exc))


def handle_key_set_unavailable(
    request: Request[Any, Any, Any], exc: KeySetUnavailableError
) -> Response[dict[str, Any]]:
    return problem(503, str(exc))


# Litestar's words for a JSON body missing altogether: the KeyError of its `data` argument.
_NO_BODY = [{"message": "'data'", "key": "data", "source": "body"}]


def handle_http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[dict[str, Any]]:
    detail = exc.detail
    if isinstance(exc.__cause__, SerializationException):  # the decoder's words alone name no cause
        sent_as = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if sent_as and not sent_as.endswith(("/json", "+json")):  # a form sent to a JSON endpoint
            return problem(
                400, f"the body is {cut(sent_as)}, not JSON: send a JSON object as application/json"
            )
        return problem(400, f"the body is not valid JSON: {cut(detail)}")
    if exc.extra == _NO_BODY:
        return problem(400, "the request body is empty: send a JSON object")
    extra: dict[str, Any] = {}
    if exc.status_code == 400 and isinstance(exc.extra, list | dict) and exc.extra:
        # Litestar's words repeat the URL, query string included, and each error its key and
        # the bad value: input of any length, cut short here.
        if detail.startswith("Validation failed for "):
            detail = f"Validation failed for {request.method} {cut(request.url.path)}"
        errors = [
            {name: cut(value) if isinstance(value, str) else value for name, value in error.items()}
            if isinstance(error, dict)
            else error
            for error in (exc.extra if isinstance(exc.extra, list) else [exc.extra])
        ]
        extra["errors"] = errors if isinstance(exc.extra, list) else errors[0]
        # "Validation failed for POST /path" alone names no field: say which, and what is wrong.
        reasons = [
            f"{error['key']}: {error['message']}" if error.get("key") else str(error["message"])
            for error in errors
            if isinstance(error, dict) and error.get("message")
        ]
        if reasons:
            detail = f"{detail}: {'; '.join(reasons)}"
    return problem(exc.status_code, detail, _allowing_head(exc.headers), **extra)


def _allowing_head(headers: Mapping[str, str] | None) -> Mapping[str, str] | None:
    """The exception's headers (a 405's Allow, which RFC 9110 requires), HEAD named wherever GET
    is: the app answers it (see head.py), though no route declares it."""
    allow = (headers or {}).get("allow")  # Litestar's name for it
    if allow is None:
        return headers
    return {**(headers or {}), "allow": allowed(frozenset(allow.split(", ")))}


class ServiceCallError(aio.AioRpcError):
    """A failed gRPC call that knows the service it went to, so that the answer can name it."""

    def __init__(self, service: str, error: aio.AioRpcError) -> None:
        super().__init__(
            error.code(),
            error.initial_metadata(),
            cast(aio.Metadata, error.trailing_metadata()),  # typed as a tuple, an aio Metadata
            error.details(),
            error.debug_error_string(),
        )
        self.service = service


@contextmanager
def naming_the_service(service: str) -> Iterator[None]:
    """A gRPC call failing inside this block fails as a ServiceCallError naming service."""
    try:
        yield
    except aio.AioRpcError as error:
        raise ServiceCallError(service, error) from None


def grpc_status(exc: aio.AioRpcError) -> tuple[int, str]:
    """The HTTP status and the message a person reads for a failed gRPC call."""
    code = exc.code()
    status = GRPC_TO_HTTP.get(code, 502)
    service = (
        f"the {exc.service} service" if isinstance(exc, ServiceCallError) else "a service behind the gateway"
    )
    if status == 503:
        # The service's own words when it answered for an outage (its database cannot be reached).
        metadata = cast(Iterable[tuple[str, Any]], exc.trailing_metadata() or ())  # aio: (key, value)s
        outage = any(key == OUTAGE_KEY for key, _ in metadata)
        why = f" ({exc.details()})" if outage and exc.details() else ""
        detail = f"{service} is unavailable{why}; try again in {RETRY_AFTER_SECONDS} s"
    elif status == 504:
        detail = f"{service} did not answer in time"
    elif status == 501:
        # A contract RPC whose service has not built it yet: say so rather than echo gRPC's text.
        detail = "this operation is not available yet: the service behind it does not implement it"
    elif status == 502:
        log.error("upstream error %s: %s", code, exc.details())
        detail = f"a service behind the gateway failed (trace {current_trace_id()})"
    else:
        detail = exc.details() or code.name.lower()
    return status, detail


def handle_grpc(request: Request[Any, Any, Any], exc: aio.AioRpcError) -> Response[dict[str, Any]]:
    return problem(*grpc_status(exc))


def handle_too_deep(request: Request[Any, Any, Any], exc: RecursionError) -> Response[dict[str, Any]]:
    # Only input nests without bound here: a JSON body of thousands of levels, which the
    # decoder reads by recursion. The caller's mistake, not the gateway's failure; logged, so
    # that a recursion of the gateway's own would not pass unseen.
    log.warning("recursion too deep on %s %s: answered 400", request.method, request.url.path)
    return problem(400, "the request body is nested too deeply to read")


def handle_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return problem(500, f"the gateway failed unexpectedly (trace {current_trace_id()})")


def problem_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for the problems an endpoint can answer, besides 400 and 401 (every endpoint)."""
    return {
        status: ResponseSpec(
            data_container=ProblemDetails,
            description=TITLES[status],
            media_type=PROBLEM_JSON,
            generate_examples=False,
        )
        for status in sorted({400, 401, 501, 502, 503, 504, *statuses})
    }


EXCEPTION_HANDLERS: dict[Any, Any] = {
    Problem: handle_problem,
    AuthenticationError: handle_authentication,
    KeySetUnavailableError: handle_key_set_unavailable,
    HTTPException: handle_http,
    aio.AioRpcError: handle_grpc,
    RecursionError: handle_too_deep,
    Exception: handle_unexpected,
}
