"""Schemathesis over every operation of the in-process gateway's OpenAPI document: no 5xx, and
every answer one the document states (tests/support/openapi_fuzz.py says how). The fault suite
runs the same against a real `cograph up` (tests/faults/test_openapi_fuzz.py).

Measured on this machine: 525 requests, and 57 s for the test, the system's start included.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from e2e.gateway.test_collections_api import Auth
from schemathesis import GenerationMode

from cograph_cli.runtime import System
from support.openapi_fuzz import Run, fuzz, real_things

RUNS = [
    Run(GenerationMode.POSITIVE, "admin", 6),
    Run(GenerationMode.POSITIVE, "alice", 4),
    Run(GenerationMode.NEGATIVE, "alice", 5),
]


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")
async def test_fuzzing_every_operation_finds_no_server_error_and_no_contract_violation(
    system: System, gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    document = (await gateway.get("/api/schema/openapi.json")).json()
    real = await real_things(gateway, auth, tmp_path)
    failures, sent = await asyncio.to_thread(fuzz, system.gateway_url, document, auth, real, RUNS)
    assert not failures, "\n".join(failures)
    assert sent >= 400  # every operation was called, not skipped by a strategy that gave up
