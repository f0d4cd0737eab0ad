"""The ops port while a service starts: migrating its schema may take minutes (or wait for
another replica's migration), and a process that does not answer /healthz meanwhile is killed
by its startup probe, its migration rolled back, for good."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from cograph_service.http import HttpServer
from cograph_service.ops import ops_app
from cograph_service.readiness import Readiness


async def _starting() -> str:
    return "starting: migrating its schema, opening its database or loading its model"


@contextlib.asynccontextmanager
async def serving_while_starting(service: str, host: str, port: int) -> AsyncIterator[None]:
    """/healthz 200 (alive) and /readyz 503 (starting) on the ops port until the block ends,
    then the port is free for the service's own ops server."""
    server = HttpServer(service, ops_app(service, Readiness(service, {"startup": _starting})))
    await server.start(host, port)
    try:
        yield
    finally:
        await server.stop()
