"""Runs one service: its gRPC server and ops HTTP, with gRPC health kept in step with readiness
(its own checks; see cograph_service.readiness)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from cograph_grpc import GrpcServer
from cograph_service.http import OPS_DRAIN_SECONDS, HttpServer
from cograph_service.ops import ops_app
from cograph_service.readiness import Readiness

log = logging.getLogger(__name__)


class ServiceHost:
    def __init__(
        self,
        name: str,
        grpc_server: GrpcServer,
        readiness: Readiness,
        *,
        http_app: Any | None = None,
        http_drain_seconds: float = OPS_DRAIN_SECONDS,
        closers: Sequence[Callable[[], Awaitable[None]]] = (),
        recheck_seconds: float = 5.0,
    ) -> None:
        """`http_app` replaces the plain ops app (the gateway serves ops routes beside its API), and
        `http_drain_seconds` is how long its requests in flight may finish on shutdown; `closers`
        release the service's resources after its servers stop, in order."""
        self.name = name
        self.grpc = grpc_server
        self.readiness = readiness
        self.http = HttpServer(
            name,
            http_app if http_app is not None else ops_app(name, readiness),
            drain_seconds=http_drain_seconds,
        )
        self._closers = list(closers)
        self._recheck_seconds = recheck_seconds
        self._watch: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()
        self._failing_dependencies: set[str] = set()

    async def start(self, host: str, grpc_port: int, http_port: int) -> None:
        try:
            await self.grpc.start(host, grpc_port)
            await self.http.start(host, http_port)
        except BaseException:  # a port in use: release what was had, so the error is all one sees
            await self.grpc.stop()
            for close in self._closers:
                await close()
            raise
        await self._refresh()
        self._watch = asyncio.create_task(self._watch_readiness(), name=f"readiness-{self.name}")

    async def _refresh(self) -> None:
        report = await self.readiness.report()
        if report.ready != self.ready.is_set():
            log.info("%s is %s: %s", self.name, report.status, report.checks)
        # Dependencies never change readiness, so their changes are logged on their own.
        failing = {name: result for name, result in report.dependencies.items() if result != "ok"}
        if failing.keys() != self._failing_dependencies:
            if failing:
                log.warning("%s serves without: %s", self.name, failing)
            else:
                log.info("%s: every dependency is usable again", self.name)
            self._failing_dependencies = set(failing)
        await self.grpc.set_serving(report.ready)
        if report.ready:
            self.ready.set()
        else:
            self.ready.clear()

    async def _watch_readiness(self) -> None:
        while True:
            await asyncio.sleep(self._recheck_seconds)
            await self._refresh()

    async def stop(self) -> None:
        self.readiness.stop_serving()  # /readyz answers 503 while gRPC drains its calls
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        await self.grpc.stop()
        await self.http.stop()
        for close in self._closers:
            await close()
