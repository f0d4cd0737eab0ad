"""Every HTTP request to the gateway leaves one log line (method, path, status, duration) carrying
its trace id, so a 4xx leaves a trace and the operations guide's "take the trace id from the
gateway's log line" can be done. Query strings and headers (tokens) are never logged.

The gateway wrote none: uvicorn's access log is off, for "our own middleware", which did not exist."""

from __future__ import annotations

import logging
import secrets
import uuid
from collections.abc import Callable

import httpx
import pytest

from cograph_telemetry.logging import TEXT_FORMAT, TraceIdFilter

Lines = Callable[[str], list[logging.LogRecord]]


def _traced(trace: str) -> dict[str, str]:
    """A W3C traceparent header: the gateway's span joins this trace."""
    return {"traceparent": f"00-{trace}-{secrets.token_hex(8)}-01"}


@pytest.fixture
def lines(caplog: pytest.LogCaptureFixture) -> Lines:
    """The access lines of one trace, as the process's log handler sees them (with its trace filter)."""
    caplog.set_level(logging.DEBUG, logger="cograph_service.access")
    caplog.handler.addFilter(TraceIdFilter())

    def of(trace: str) -> list[logging.LogRecord]:
        return [
            record
            for record in caplog.records
            if record.name == "cograph_service.access" and getattr(record, "trace_id", None) == trace
        ]

    return of


def _one(lines: Lines, trace: str) -> logging.LogRecord:
    found = lines(trace)
    assert len(found) == 1, [record.getMessage() for record in found]
    return found[0]


async def test_a_request_leaves_one_line_with_its_status_and_trace_id(
    gateway: httpx.AsyncClient, auth: dict[str, dict[str, str]], lines: Lines
) -> None:
    trace = secrets.token_hex(16)
    response = await gateway.get(
        "/api/md-collections",
        params={"q": "secret words", "page_size": 5},
        headers={**auth["admin"], **_traced(trace)},
    )
    assert response.status_code == 200
    record = _one(lines, trace)
    assert record.levelno == logging.INFO
    method, path, status, millis, unit = record.getMessage().split(" ")
    assert (method, path, status, unit) == ("GET", "/api/md-collections", "200", "ms")
    assert float(millis) >= 0
    text = logging.Formatter(TEXT_FORMAT).format(record)
    assert f"trace={trace} GET /api/md-collections 200 " in text
    # Neither the query string nor the token.
    assert "secret" not in text
    assert "page_size" not in text
    assert auth["admin"]["Authorization"].removeprefix("Bearer ") not in text


async def test_a_404_and_a_401_leave_their_lines_too(
    gateway: httpx.AsyncClient, auth: dict[str, dict[str, str]], lines: Lines
) -> None:
    for path in (
        f"/api/md-collections/{uuid.uuid4()}",  # a collection that does not exist
        "/api/no-such-endpoint",  # a path no route has
    ):
        trace = secrets.token_hex(16)
        response = await gateway.get(path, headers={**auth["admin"], **_traced(trace)})
        assert response.status_code == 404
        record = _one(lines, trace)
        assert record.levelno == logging.INFO
        assert record.getMessage().startswith(f"GET {path} 404 "), record.getMessage()
    trace = secrets.token_hex(16)
    response = await gateway.post("/api/md-collections", json={"name": "x"}, headers=_traced(trace))
    assert response.status_code == 401
    assert _one(lines, trace).getMessage().startswith("POST /api/md-collections 401 ")


async def test_a_path_is_logged_on_one_line_and_cut_when_long(
    gateway: httpx.AsyncClient, lines: Lines
) -> None:
    trace = secrets.token_hex(16)
    response = await gateway.get("/api/%0Aforged%20line/" + "x" * 1000, headers=_traced(trace))
    assert response.status_code == 404
    message = _one(lines, trace).getMessage()
    assert "\n" not in message
    assert message.startswith("GET /api/%0Aforged%20line/xxx")
    assert len(message) < 400


async def test_probes_are_logged_at_debug(gateway: httpx.AsyncClient, lines: Lines) -> None:
    for path in ("/healthz", "/readyz", "/metrics"):
        trace = secrets.token_hex(16)
        response = await gateway.get(path, headers=_traced(trace))
        assert response.status_code == 200
        record = _one(lines, trace)
        assert record.levelno == logging.DEBUG
        assert record.getMessage().startswith(f"GET {path} 200 ")
