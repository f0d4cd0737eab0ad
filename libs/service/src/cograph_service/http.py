"""An ASGI app served by uvicorn inside the current event loop, on a socket we bind ourselves
(so port 0 works and the real port is known before anyone is told where to connect)."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

# h11's default limit on a request line plus headers still incomplete after a read; a longer
# head may pass when it arrives in one read, so this is the size callers are told to stay under.
MAX_REQUEST_HEAD_BYTES = 16 * 1024


class ProblemH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, except that a request h11 cannot read (malformed, or a request
    line and headers past MAX_REQUEST_HEAD_BYTES) is refused as problem+json like every other
    error, not as uvicorn's text/plain. The application never sees such a request."""

    def send_400_response(self, msg: str) -> None:
        detail = (
            "The request could not be read: it is not valid HTTP/1.1, or its request line and "
            f"headers are too long (keep them under {MAX_REQUEST_HEAD_BYTES // 1024} KiB)."
        )
        body = json.dumps({"type": "about:blank", "title": "Bad Request", "status": 400, "detail": detail})
        headers = [(b"content-type", b"application/problem+json"), (b"connection", b"close")]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=body.encode()),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()


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
            self._app,
            http=ProblemH11Protocol,
            h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,
            log_config=None,
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=5,
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
