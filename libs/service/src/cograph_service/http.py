"""An ASGI app served by uvicorn inside the current event loop, on a socket we bind ourselves
(so port 0 works and the real port is known before anyone is told where to connect)."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import uvicorn

log = logging.getLogger(__name__)


class HttpServer:
    def __init__(self, name: str, app: Any) -> None:
        self.name = name
        self._app = app
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            raise OSError(f"{self.name}: cannot listen on {host}:{port}: {exc.strerror}") from None
        sock.listen(1024)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=5
        )
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]), name=f"http-{self.name}")
        while not self._server.started:
            if self._task.done():
                self._task.result()  # surfaces the startup error
                raise RuntimeError(f"{self.name}: HTTP server stopped during startup")
            await asyncio.sleep(0.01)
        log.info("%s HTTP listening on %s:%d", self.name, host, self.port)
        return self.port

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
            self._server = None
