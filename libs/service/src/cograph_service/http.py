"""An ASGI app served by uvicorn inside the current event loop, on a socket we bind ourselves
(so port 0 works and the real port is known before anyone is told where to connect)."""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import math
import socket
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from cograph_service.access import AccessLog

log = logging.getLogger(__name__)

# h11's default limit on a request line plus headers still incomplete after a read; a longer
# head may pass when it arrives in one read, so this is the size callers are told to stay under.
MAX_REQUEST_HEAD_BYTES = 16 * 1024

# On shutdown, how long an ops port's requests may finish: probes and metrics answer in
# milliseconds. The gateway's API takes COGRAPH_GATEWAY__DRAIN_SECONDS instead.
OPS_DRAIN_SECONDS = 5.0
# uvicorn's own cut-off, this long after ours: it cancels what still runs with a traceback
# logged as an error, so it should only ever catch a request that ignored our cancellation.
_BACKSTOP_SECONDS = 5

_SHUTTING_DOWN = json.dumps(
    {
        "type": "about:blank",
        "title": "Service unavailable",
        "status": 503,
        "detail": "the server is shutting down; try again",
    }
).encode()

# Set in a request cut off after its response began: uvicorn can only close its connection,
# and its complaint that the app ended the response unfinished is no error of ours to report.
_cut_off_mid_response: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "cograph_cut_off_mid_response", default=False
)


class _UnlessCutOff(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _cut_off_mid_response.get()


logging.getLogger("uvicorn.error").addFilter(_UnlessCutOff())


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


class _Draining:
    """The ASGI app, with the requests still running when the drain ends cut off politely: one
    not yet answered gets a 503 problem+json (the server is shutting down, try again) and its
    connection closed; one whose response has begun can only have its connection closed.
    Without it, uvicorn cancels them itself: a text/plain 500 and a traceback logged as an error."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.running: set[asyncio.Task[Any]] = set()
        self.cutting_off = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        task = asyncio.current_task()
        if scope["type"] != "http" or task is None:
            await self.app(scope, receive, send)
            return
        started = False

        async def noting_the_start(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        self.running.add(task)
        try:
            await self.app(scope, receive, noting_the_start)
        except asyncio.CancelledError:
            if not self.cutting_off:
                raise
            task.uncancel()  # the cancellation was ours, and is answered here
            if started:
                _cut_off_mid_response.set(True)
                return
            await send(
                {
                    "type": "http.response.start",
                    "status": 503,
                    "headers": [
                        (b"content-type", b"application/problem+json"),
                        (b"content-length", str(len(_SHUTTING_DOWN)).encode()),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": _SHUTTING_DOWN, "more_body": False})
        finally:
            self.running.discard(task)

    def cut_off(self) -> int:
        """Cancel every request still running; answers how many there were."""
        self.cutting_off = True
        running = [task for task in self.running if not task.done()]
        for task in running:
            task.cancel("the server is shutting down")
        return len(running)


class HttpServer:
    def __init__(self, name: str, app: Any, *, drain_seconds: float = OPS_DRAIN_SECONDS) -> None:
        """On stop, requests in flight get `drain_seconds` to finish before they are cut off."""
        self.name = name
        self._draining = _Draining(app)
        self._drain_seconds = drain_seconds
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        # proto=IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY only on connections of
        # a socket that says it is TCP. Without it Nagle held each response's body until the
        # client acknowledged its headers, and a reused connection's delayed ACK made every
        # request after the first take 40 ms more.
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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
            AccessLog(self._draining),  # outside: a request cut off by the drain is logged with its 503
            http=ProblemH11Protocol,
            h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,
            log_config=None,
            access_log=False,
            lifespan="on",
            # Each request's task starts from an empty context. Otherwise it copies the context of
            # the socket's read callback, which a request whose body passed uvicorn's 64 KiB
            # buffer re-registers from inside itself (resuming the paused read): every later
            # request on that connection then began inside that request's span and was logged
            # under its trace id (python/cpython#140947, Kludex/uvicorn#2167).
            reset_contextvars=True,
            timeout_graceful_shutdown=math.ceil(self._drain_seconds) + _BACKSTOP_SECONDS,
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
        """Take no more connections, let the requests in flight finish for the drain time, then
        cut off those still running (see _Draining) and end."""
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            done, _ = await asyncio.wait({self._task}, timeout=self._drain_seconds)
            if not done:
                if cut := self._draining.cut_off():
                    log.warning(
                        "%s: %d request(s) still running after the %g s drain: cut off (503, shutting down)",
                        self.name,
                        cut,
                        self._drain_seconds,
                    )
                await self._task
            self._server = None
