"""The server interceptor counts every unary call under the status its caller saw, and answers an
outage's errors UNAVAILABLE."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import grpc
import pytest
from grpc import aio
from prometheus_client import REGISTRY

from cograph_grpc import OUTAGE_KEY, Outage
from cograph_grpc.interceptors import ServerInterceptor

# grpc's classes are generic only in their type stubs.
if TYPE_CHECKING:
    _GenericHandler: TypeAlias = grpc.GenericRpcHandler[bytes, bytes]
else:
    _GenericHandler = grpc.GenericRpcHandler


class _Slow(_GenericHandler):
    """Serves /t.T/Slow, which answers only after a second; every other method is unknown."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        if handler_call_details.method == "/t.T/Refused":

            async def refused(request: bytes, context: aio.ServicerContext[bytes, bytes]) -> bytes:
                raise ConnectionRefusedError("no server on the socket")

            return grpc.unary_unary_rpc_method_handler(refused)
        if handler_call_details.method == "/t.T/Broken":

            async def broken(request: bytes, context: aio.ServicerContext[bytes, bytes]) -> bytes:
                raise ValueError("a bug")

            return grpc.unary_unary_rpc_method_handler(broken)
        if handler_call_details.method != "/t.T/Slow":
            return None

        async def slow(request: bytes, context: aio.ServicerContext[bytes, bytes]) -> bytes:
            self.started.set()
            await asyncio.sleep(1)
            return b"done"

        return grpc.unary_unary_rpc_method_handler(slow)


@asynccontextmanager
async def _serve(service: str) -> AsyncIterator[tuple[aio.Channel, _Slow]]:
    handlers = _Slow()
    outage = Outage(lambda error: isinstance(error, ConnectionRefusedError), "its database cannot be reached")
    server = aio.server(interceptors=[ServerInterceptor(service, [outage])])
    server.add_generic_rpc_handlers([handlers])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield channel, handlers
    finally:
        await channel.close(None)
        await server.stop(0)


def _call(channel: aio.Channel, method: str) -> aio.UnaryUnaryMultiCallable[bytes, bytes]:
    return channel.unary_unary(method, request_serializer=None, response_deserializer=None)


def _count(service: str, method: str, code: str) -> float:
    labels = {"service": service, "method": method, "code": code}
    return REGISTRY.get_sample_value("cograph_rpc_requests_total", labels) or 0.0


def _observed(service: str, method: str) -> float:
    labels = {"service": service, "method": method}
    return REGISTRY.get_sample_value("cograph_rpc_duration_seconds_count", labels) or 0.0


async def _until_counted(service: str, method: str) -> None:
    """The handler learns of the end of the call a moment after its caller does."""
    for _ in range(200):
        if _observed(service, method):
            return
        await asyncio.sleep(0.01)


async def test_a_call_past_its_deadline_is_counted_as_deadline_exceeded() -> None:
    async with _serve("deadline") as (channel, _):
        with pytest.raises(aio.AioRpcError) as raised:
            await _call(channel, "/t.T/Slow")(b"", timeout=0.1)
        assert raised.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
        await _until_counted("deadline", "Slow")
    assert _count("deadline", "Slow", "DEADLINE_EXCEEDED") == 1
    assert _count("deadline", "Slow", "OK") == 0
    assert _observed("deadline", "Slow") == 1


async def test_a_call_its_client_cancels_is_counted_as_cancelled() -> None:
    async with _serve("cancel") as (channel, handlers):
        call = _call(channel, "/t.T/Slow")(b"", timeout=30)
        await handlers.started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await _until_counted("cancel", "Slow")
    assert _count("cancel", "Slow", "CANCELLED") == 1
    assert _count("cancel", "Slow", "OK") == 0


async def test_calls_to_unknown_methods_are_counted_under_one_method_label() -> None:
    async with _serve("unknown") as (channel, _):
        for method in ("/t.T/Missing", "/other.Service/Anything"):
            with pytest.raises(aio.AioRpcError) as raised:
                await _call(channel, method)(b"", timeout=5)
            assert raised.value.code() is grpc.StatusCode.UNIMPLEMENTED
    assert _count("unknown", "unknown", "UNIMPLEMENTED") == 2
    assert _count("unknown", "Missing", "UNIMPLEMENTED") == 0


async def test_a_call_that_finishes_is_still_counted_as_ok() -> None:
    async with _serve("ok") as (channel, _):
        assert await _call(channel, "/t.T/Slow")(b"", timeout=5) == b"done"
    assert _count("ok", "Slow", "OK") == 1


def _metadata(error: aio.AioRpcError) -> list[tuple[str, Any]]:
    """Its trailing metadata: (key, value) pairs in grpc.aio, whatever the stubs say."""
    return list(cast(Iterable[tuple[str, Any]], error.trailing_metadata() or ()))


async def test_an_outage_is_unavailable_with_its_words_and_any_other_error_internal() -> None:
    async with _serve("outage") as (channel, _):
        with pytest.raises(aio.AioRpcError) as refused:
            await _call(channel, "/t.T/Refused")(b"", timeout=5)
        with pytest.raises(aio.AioRpcError) as broken:
            await _call(channel, "/t.T/Broken")(b"", timeout=5)
    assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
    assert refused.value.details() == "its database cannot be reached"
    assert (OUTAGE_KEY, "1") in _metadata(refused.value)
    assert broken.value.code() is grpc.StatusCode.INTERNAL
    assert (broken.value.details() or "").startswith("internal error (trace ")
    assert OUTAGE_KEY not in dict(_metadata(broken.value))
    assert _count("outage", "Refused", "UNAVAILABLE") == 1
    assert _count("outage", "Broken", "INTERNAL") == 1
