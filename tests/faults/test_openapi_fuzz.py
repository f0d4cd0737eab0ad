"""Schemathesis over every operation of a real `cograph up`: no 5xx, and every answer one the
OpenAPI document states (its status, its content type, a body its schema allows).

The probe (issue 31) sent 6,154 schemathesis cases and met no 5xx, but checked nothing else; this
keeps that so and checks the contract too, through the process a person runs (its HTTP server,
its embedded PostgreSQL, its default settings). tests/support/openapi_fuzz.py says how; the
gateway's end-to-end suite runs the same, with more examples, in-process. Measured on this
machine: at most 280 requests (8 per operation), and 50 s for the module, `cograph up`'s start
included.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from schemathesis import GenerationMode

from support.cograph_process import RunningCograph
from support.openapi_fuzz import Run, fuzz, real_things

RUNS = [
    Run(GenerationMode.POSITIVE, "admin", 3),
    Run(GenerationMode.POSITIVE, "alice", 2),
    Run(GenerationMode.NEGATIVE, "alice", 3),
]


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")
async def test_fuzzing_cograph_up_finds_no_server_error_and_no_contract_violation(
    cograph_up: RunningCograph, tmp_path: Path
) -> None:
    headers = {caller: cograph_up.headers(caller) for caller in ("admin", "alice")}
    async with httpx.AsyncClient(base_url=cograph_up.url, timeout=30) as gateway:
        document = (await gateway.get("/api/schema/openapi.json")).json()
        real = await real_things(gateway, headers, tmp_path)
    failures, sent = await asyncio.to_thread(fuzz, cograph_up.url, document, headers, real, RUNS)
    assert not failures, "\n".join(failures)
    assert sent >= 200  # every operation was called, not skipped by a strategy that gave up
