"""Each request the HTTP server runs starts from a clean context, whatever came before it on its
connection. A request whose body passed uvicorn's 64 KiB read buffer resumed the paused socket read
from inside its own task, so the read callback, and every request task it started after, copied
that request's context: its OpenTelemetry span (later requests became its children, logged under
its trace id) and any context variable it had set (python/cpython#140947)."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import httpx

from cograph_service import HttpServer

# What the request before set, if it leaks.
_set_by_request: contextvars.ContextVar[str] = contextvars.ContextVar("set_by_request", default="nothing")


async def tell_what_it_inherits(scope: Any, receive: Any, send: Any) -> None:
    """Answers the value it found on arrival, after setting its own (as a span is) and reading its body."""
    if scope["type"] != "http":
        return  # lifespan: nothing to set up
    inherited = _set_by_request.get()
    _set_by_request.set(f"{scope['method']} {scope['path']}")
    while (await receive()).get("more_body", False):
        pass
    body = inherited.encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def test_requests_after_a_large_body_on_one_connection_inherit_nothing() -> None:
    server = HttpServer("test", tell_what_it_inherits)
    port = await server.start("127.0.0.1", 0)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            answers = [(await client.post("/", content=b"x" * 66_000)).text]
            answers += [(await client.get("/")).text for _ in range(3)]
            answers.append((await client.post("/", content=b"x" * 300_000)).text)
            answers.append((await client.get("/")).text)
        assert answers == ["nothing"] * 6
    finally:
        await server.stop()


async def test_pipelined_requests_after_a_large_body_inherit_nothing() -> None:
    """Requests already read when the one before answers are started from the answering task."""
    server = HttpServer("test", tell_what_it_inherits)
    port = await server.start("127.0.0.1", 0)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        large = b"POST / HTTP/1.1\r\nhost: test\r\ncontent-length: 100000\r\n\r\n" + b"x" * 100_000
        writer.write(large + b"GET / HTTP/1.1\r\nhost: test\r\n\r\n" * 2)
        answers = []
        for _ in range(3):
            head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).decode()
            length = int(head.partition("content-length: ")[2].partition("\r\n")[0])
            answers.append((await asyncio.wait_for(reader.readexactly(length), 10)).decode())
        writer.close()
        await writer.wait_closed()
        assert answers == ["nothing"] * 3
    finally:
        await server.stop()
