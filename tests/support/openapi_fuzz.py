"""Schemathesis over every operation of a running gateway's OpenAPI document: no 5xx, and every
answer one the document states (a documented status, its content type, a body its schema allows).
The gateway's end-to-end suite runs it in-process, the fault suite against a real `cograph up`.

The path parameters of valid requests name real things (`real_things`: a collection with a
document, its chunk and upload job; a repository synced from a local checkout, its document, page,
file and code symbol), so generated requests run past the lookups into the handlers; invalid
requests choose their own. Valid requests go as an administrator, who may call every operation,
and as alice, who may not; invalid ones as alice. Bounded in examples per operation, mode and
caller, and in time (BUDGET_SECONDS).

Schemathesis is synchronous (requests): `fuzz` runs in a worker thread, so an in-process gateway
keeps serving on the event loop.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import hypothesis
import requests
import schemathesis
from hypothesis import HealthCheck, Phase
from schemathesis import GenerationMode
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

Headers = dict[str, str]


@dataclass(frozen=True)
class Run:
    """One pass over every operation: this many examples of one mode, sent as one caller."""

    mode: GenerationMode
    caller: str  # "admin" or "alice"
    examples: int


# Operations whose valid requests must not name the real things: they would delete them from
# under the operations after them.
DESTRUCTIVE = frozenset(
    {
        "DELETE /api/md-collections/{collection_id}",
        "DELETE /api/md-collections/{collection_id}/documents/{document_id}",
    }
)
BUDGET_SECONDS = 240  # a whole fuzzing, far above what one takes: a bound, not an estimate


def no_server_error(ctx: Any, response: schemathesis.Response, case: Any) -> bool | None:
    if response.status_code >= 500:
        label = f"{case.operation.method.upper()} {case.operation.path}"
        raise AssertionError(f"{label} answered {response.status_code}: {response.text[:500]}")
    return None


CHECKS = [no_server_error, response_schema_conformance, status_code_conformance, content_type_conformance]


@dataclass
class _Fuzzer:
    base_url: str
    headers: dict[str, Headers]
    session: requests.Session
    deadline: float
    sent: int = 0

    def run(self, operation: Any, run: Run, fixed: dict[str, str] | None) -> None:
        """Raises what the checks found, for one operation, mode and caller."""
        headers = self.headers[run.caller]

        @hypothesis.settings(
            max_examples=run.examples,
            deadline=None,
            derandomize=True,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @hypothesis.given(case=operation.as_strategy(generation_mode=run.mode, path_parameters=fixed))
        def call(case: Any) -> None:
            assert time.monotonic() < self.deadline, f"the fuzzing ran past its {BUDGET_SECONDS} s budget"
            self.sent += 1
            response = case.call(base_url=self.base_url, session=self.session, headers=headers, timeout=30)
            case.validate_response(response, checks=CHECKS)

        call()


def _named(path: str, real: dict[str, str]) -> dict[str, str]:
    """The real values of the path's parameters (a repository's document_id is its own)."""
    names = re.findall(r"\{([^}]+)\}", path)
    if path.startswith("/api/repos/"):
        real = {**real, "document_id": real["repo_document_id"]}
    return {name: real[name] for name in names if name in real}


def fuzz(
    base_url: str,
    document: dict[str, Any],
    headers: dict[str, Headers],
    real: dict[str, str],
    runs: list[Run],
) -> tuple[list[str], int]:
    """Every operation of `document`, each run of `runs`; answers the failures and the requests sent."""
    schema = schemathesis.openapi.from_dict(document)
    fuzzer = _Fuzzer(base_url, headers, requests.Session(), time.monotonic() + BUDGET_SECONDS)
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations() if isinstance(result, Ok)]
    assert len(operations) == sum(
        1 for methods in document["paths"].values() for method in methods if method != "parameters"
    ), "an operation of the document could not be read"
    for operation in operations:
        label = f"{operation.method.upper()} {operation.path}"
        for run in runs:
            valid = run.mode is GenerationMode.POSITIVE and label not in DESTRUCTIVE
            try:
                fuzzer.run(operation, run, (_named(operation.path, real) if valid else {}) or None)
            except (Exception, BaseExceptionGroup) as error:  # schemathesis reports a FailureGroup
                message = re.sub(r"\s+", " ", str(error))[:800]
                failures.append(f"{label} [{run.mode.value} as {run.caller}]: {message}")
    return failures, fuzzer.sent


def _checkout(root: Path) -> Path:
    checkout = root / "fuzzed"
    (checkout / "docs").mkdir(parents=True)
    (checkout / "README.md").write_text("# Fuzzed\n\nCall `parse_config` to read the settings.\n")
    (checkout / "docs" / "usage.md").write_text("# Usage\n\nRun `fuzzed.parse_config()` first.\n")
    (checkout / "fuzzed.py").write_text(
        'def parse_config(path):\n    """Read the settings."""\n    return {}\n'
    )
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"],
    ):
        subprocess.run(["git", *args], cwd=checkout, check=True, capture_output=True)
    return checkout


async def real_things(gateway: httpx.AsyncClient, headers: dict[str, Headers], root: Path) -> dict[str, str]:
    """A collection of alice's with a document, and a public repository an administrator synced
    from a checkout in `root`; answers the path parameters that name them."""
    alice, admin = headers["alice"], headers["admin"]
    created = await gateway.post("/api/md-collections", json={"name": "Fuzzed"}, headers=alice)
    assert created.status_code == 201, created.text
    collection = created.json()["id"]
    uploaded = await gateway.post(
        f"/api/md-collections/{collection}/documents/batch",
        json={"documents": [{"source_key": "a.md", "content": "# A\n\n## B\n\ntext\n"}]},
        headers=alice,
    )
    assert uploaded.status_code == 201, uploaded.text
    document = uploaded.json()["results"][0]["document_id"]
    chunks = await gateway.get(f"/api/md-collections/{collection}/documents/{document}/chunks", headers=alice)
    assert chunks.status_code == 200, chunks.text
    registered = await gateway.post(
        "/api/repos",
        json={
            "host": "example.com",
            "owner": "acme",
            "name": "fuzzed",
            "checkout_path": str(_checkout(root)),
            "visibility": "public",
        },
        headers=admin,
    )
    assert registered.status_code == 201, registered.text
    repo = "/api/repos/example.com/acme/fuzzed"
    synced = await gateway.post(f"{repo}/sync", params={"wait": "true"}, headers=admin, timeout=120)
    assert synced.status_code == 200, synced.text
    assert synced.json()["status"] == "success", synced.text
    documents = (await gateway.get(f"{repo}/documents", headers=alice)).json()["items"]
    found = await gateway.post(f"{repo}/code/search", json={"query": "parse_config"}, headers=alice)
    assert found.status_code == 200, found.text
    assert found.json()["hits"], found.text
    return {
        "collection_id": collection,
        "document_id": document,
        "chunk_id": chunks.json()["items"][0]["id"],
        "job_id": uploaded.json()["job_id"],
        "host": "example.com",
        "owner": "acme",
        "name": "fuzzed",
        "repo_document_id": documents[0]["id"],
        "page_slug": documents[0]["slug"],
        "path": "fuzzed.py",
        "node_id": found.json()["hits"][0]["node"]["id"],
    }
