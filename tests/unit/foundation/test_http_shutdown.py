"""Shutting an HTTP server down with requests in flight: they get the drain time to finish, and one
still running after it is answered 503 problem+json (or, if its answer had begun, its connection
is closed), never uvicorn's text/plain 500 with a traceback logged as an error."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated

import httpx
import msgspec
import pytest
from litestar import Litestar, MediaType, get
from litestar.params import PathParameter
from litestar.response import Stream

from cograph_gateway.app import create_service
from cograph_service import HttpServer
from cograph_settings import ApiToken, Settings

SHUTTING_DOWN = {
    "type": "about:blank",
    "title": "Service unavailable",
    "status": 503,
    "detail": "the server is shutting down; try again",
}


class SlowApp:
    """Handlers that take their time, each saying when it has begun."""

    def __init__(self) -> None:
        self.begun = asyncio.Event()

        @get("/slow/{seconds:float}", media_type=MediaType.TEXT)
        async def slow(seconds: Annotated[float, PathParameter()]) -> str:
            self.begun.set()
            await asyncio.sleep(seconds)
            return "done"

        @get("/streaming")
        async def streaming() -> Stream:
            async def body() -> AsyncIterator[bytes]:
                yield b"first part"
                self.begun.set()
                await asyncio.sleep(60)
                yield b"never sent"

            return Stream(body(), media_type=MediaType.TEXT)

        self.app = Litestar([slow, streaming], logging_config=None)


def _client(server: HttpServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=30)


async def _in_flight(app: SlowApp, client: httpx.AsyncClient, path: str) -> asyncio.Task[httpx.Response]:
    request = asyncio.create_task(client.get(path))
    await asyncio.wait_for(app.begun.wait(), 10)
    return request


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_a_request_that_ends_within_the_drain_gets_its_answer(caplog: pytest.LogCaptureFixture) -> None:
    app = SlowApp()
    server = HttpServer("svc", app.app, drain_seconds=10)
    await server.start("127.0.0.1", 0)
    async with _client(server) as client:
        request = await _in_flight(app, client, "/slow/1")
        await server.stop()
        response = await request
    assert (response.status_code, response.text) == (200, "done")
    assert _errors(caplog) == []


async def test_a_request_still_running_after_the_drain_is_answered_503(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """It was cut after a hard-coded 5 s with uvicorn's text/plain 500 "Internal Server Error"
    and "CancelledError: Task cancelled, timeout graceful shutdown exceeded" logged as an error."""
    caplog.set_level(logging.WARNING)
    app = SlowApp()
    server = HttpServer("svc", app.app, drain_seconds=0.5)
    await server.start("127.0.0.1", 0)
    async with _client(server) as client:
        request = await _in_flight(app, client, "/slow/60")
        began = time.monotonic()
        await server.stop()
        stopped_after = time.monotonic() - began
        response = await request
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["connection"] == "close"
    assert response.json() == SHUTTING_DOWN
    assert 0.5 <= stopped_after < 3
    assert _errors(caplog) == []
    assert any("1 request(s) still running after the 0.5 s drain" in r.getMessage() for r in caplog.records)
    (access,) = [r for r in caplog.records if r.name == "cograph_service.access"]
    assert access.getMessage().startswith("GET /slow/60 503 ")


async def test_a_response_cut_off_midway_closes_its_connection_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    app = SlowApp()
    server = HttpServer("svc", app.app, drain_seconds=0.5)
    await server.start("127.0.0.1", 0)
    async with _client(server) as client, client.stream("GET", "/streaming") as response:
        assert response.status_code == 200
        chunks = response.aiter_raw()
        assert await anext(chunks) == b"first part"
        await asyncio.wait_for(app.begun.wait(), 10)
        await server.stop()
        with pytest.raises(httpx.RemoteProtocolError):  # closed before the end of the body
            await anext(chunks)
    assert _errors(caplog) == []


# ---------------------------------------------------------------------------------------------
# For real: a process told SIGTERM while a request is in flight, as Kubernetes stops a pod.

SERVER = textwrap.dedent(
    """
    import asyncio, sys
    from typing import Annotated
    from litestar import Litestar, MediaType, get
    from litestar.params import PathParameter
    from cograph_cli.runtime import wait_for_signal
    from cograph_service import HttpServer
    from cograph_settings import TelemetrySettings
    from cograph_telemetry import configure_logging

    @get("/slow/{seconds:float}", media_type=MediaType.TEXT)
    async def slow(seconds: Annotated[float, PathParameter()]) -> str:
        print("begun", flush=True)
        await asyncio.sleep(seconds)
        return "done"

    async def main() -> None:
        configure_logging(TelemetrySettings())
        server = HttpServer("svc", Litestar([slow], logging_config=None), drain_seconds=float(sys.argv[1]))
        print(await server.start("127.0.0.1", 0), flush=True)
        await wait_for_signal()
        await server.stop()

    asyncio.run(main())
    """
)


@pytest.fixture
def process(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    running = subprocess.Popen(
        [sys.executable, str(script), "1.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    yield running
    if running.poll() is None:
        running.kill()
        running.communicate()


async def test_sigterm_drains_then_answers_503(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    port = int(await asyncio.to_thread(process.stdout.readline))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        quick = asyncio.create_task(client.get("/slow/0.5"))
        stuck = asyncio.create_task(client.get("/slow/60"))
        for _ in range(2):
            assert (await asyncio.to_thread(process.stdout.readline)).strip() == "begun"
        process.send_signal(signal.SIGTERM)
        answered, cut_off = await quick, await stuck
    _, stderr = await asyncio.to_thread(process.communicate, timeout=20)
    assert process.returncode == 0, stderr
    assert (answered.status_code, answered.text) == (200, "done")
    assert cut_off.status_code == 503
    assert cut_off.headers["content-type"] == "application/problem+json"
    assert msgspec.json.decode(cut_off.content) == SHUTTING_DOWN
    assert "Traceback" not in stderr
    assert " ERROR " not in stderr
    assert "svc: 1 request(s) still running after the 1.5 s drain" in stderr


# ---------------------------------------------------------------------------------------------
# The gateway: its whole stack, with a request waiting on a service that never answers.


@pytest.fixture
async def silent_service() -> AsyncIterator[str]:
    """A TCP peer that accepts and never speaks: a gRPC call to it waits for its deadline."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    yield f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
    for writer in held:
        writer.close()
    server.close()
    await server.wait_closed()


def test_the_gateway_drains_for_its_setting() -> None:
    assert Settings().gateway.drain_seconds == Settings().grpc.deadline_seconds


async def test_the_gateway_answers_503_to_a_request_cut_off_by_shutdown(
    silent_service: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    defaults = Settings()
    replace = msgspec.structs.replace
    settings = replace(
        defaults,
        collections=replace(defaults.collections, target=silent_service),
        repodocs=replace(defaults.repodocs, target=silent_service),
        search=replace(defaults.search, target=silent_service),
        gateway=replace(defaults.gateway, port=0, grpc_port=0, drain_seconds=0.5),
        auth=replace(defaults.auth, api_tokens=[ApiToken(token="t", sub="admin", roles=["admin"])]),
        grpc=replace(defaults.grpc, grace_seconds=0.1),
    )
    host = await create_service(settings)
    await host.start("127.0.0.1", 0, 0)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{host.http.port}", timeout=30) as client:
        request = asyncio.create_task(
            client.get("/api/md-collections", headers={"Authorization": "Bearer t"})
        )
        try:
            await asyncio.sleep(1)  # well inside the 30 s deadline of the calls it waits on
            assert not request.done()
        finally:
            began = time.monotonic()
            await host.stop()
            stopped_after = time.monotonic() - began
        response = await request
    assert stopped_after < 5
    assert response.status_code == 503
    assert response.json() == SHUTTING_DOWN
    assert _errors(caplog) == []
