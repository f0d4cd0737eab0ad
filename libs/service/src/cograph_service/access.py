"""One log line per HTTP request: method, path, status and duration, with the request's trace id.

    GET /api/md-collections/0b6e…/documents 404 3.1 ms

The path is the one asked for, never its query string (a search's text, a page token), and no
header is logged (tokens). Probes and metrics scrapes (/healthz, /readyz, /metrics) are logged at
DEBUG, so they do not bury the requests of users; answers of 500 and above at WARNING.
"""

from __future__ import annotations

import logging
import time
import urllib.parse
from typing import Any

from cograph_telemetry import current_trace_id

log = logging.getLogger(__name__)

PROBE_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
# A path longer than this is cut (a request head may be 16 KiB).
_PATH_CHARS = 300
# What stays as it is in a logged path: the characters of a URL's path that are neither control
# characters nor spaces nor beyond ASCII (those are percent-encoded, so a line stays one line).
_SAFE = "/:@!$&'()*+,;=-._~%"


def _path(scope: Any) -> str:
    raw = scope.get("raw_path")
    text = raw.decode("latin-1") if isinstance(raw, bytes) else str(scope.get("path", ""))
    path = urllib.parse.quote(text.partition("?")[0], safe=_SAFE)
    return path if len(path) <= _PATH_CHARS else path[:_PATH_CHARS] + "…"


class AccessLog:
    """The ASGI app, logging each HTTP request once its answer is sent.

    The line is written while the answer's last part is sent, which happens inside the request's
    span, so it carries the trace id like every other line of the request; the trace id is also
    noted as the answer starts, for a line written after the span ended (an answer cut short)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        method, path = str(scope.get("method", "-")), _path(scope)
        status: int | None = None
        trace = "-"
        logged = False

        def write(note: str = "") -> None:
            nonlocal logged
            logged = True
            if path in PROBE_PATHS:
                level = logging.DEBUG
            elif status is None or status >= 500:
                level = logging.WARNING
            else:
                level = logging.INFO
            millis = (time.perf_counter() - began) * 1000
            answer = "-" if status is None else str(status)
            log.log(
                level, "%s %s %s %.1f ms%s", method, path, answer, millis, note, extra={"trace_id": trace}
            )

        async def logging_send(message: Any) -> None:
            nonlocal status, trace
            if message["type"] == "http.response.start":
                status = int(message["status"])
                trace = current_trace_id() if trace == "-" else trace
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False) and not logged:
                write()

        try:
            await self.app(scope, receive, logging_send)
        finally:
            if not logged:
                write(" (no complete answer)")
