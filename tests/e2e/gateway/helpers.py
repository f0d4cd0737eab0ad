"""What the gateway's end-to-end tests share: test JWTs, small REST helpers, waiting for jobs."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import jwt
import pytest

JWT_ISSUER = "https://idp.test"
JWT_AUDIENCE = "cograph-gateway"
JWT_SECRET = "the-test-hs256-secret-of-the-gateway-e2e-tests"

Headers = dict[str, str]


def mint(sub: str | None = "carol", *, secret: str = JWT_SECRET, **claims: Any) -> Headers:
    """Authorization headers with an HS256 JWT; `claims` override the defaults (None drops one)."""
    body: dict[str, Any] = {
        "sub": sub,
        "iss": JWT_ISSUER,
        "aud": JWT_AUDIENCE,
        # A day: tokens minted at collection must outlive the longest suite run.
        "exp": int(time.time()) + 86_400,
        "groups": [],
        "roles": [],
    }
    body.update(claims)
    token = jwt.encode({k: v for k, v in body.items() if v is not None}, secret, algorithm="HS256")
    return {"Authorization": f"Bearer {token}"}


def is_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """Asserts an RFC 9457 problem with that status and a detail; answers its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json"), response.headers
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["detail"]
    return body


def skip_if_unimplemented(response: httpx.Response, what: str) -> None:
    """A backend RPC still being built answers 501; the test waits for it instead of failing."""
    if response.status_code == 501:
        pytest.skip(f"{what} is not implemented by its service yet (501)")


async def create_collection(
    client: httpx.AsyncClient, headers: Headers, name: str = "Runbooks", visibility: str = "private"
) -> dict[str, Any]:
    response = await client.post(
        "/api/md-collections",
        json={"name": name, "description": f"{name} for tests", "visibility": visibility},
        headers=headers,
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def wait_for_jobs(
    client: httpx.AsyncClient, collection_id: str, headers: Headers, timeout: float = 120
) -> list[dict[str, Any]]:
    """Until no job of the collection is queued or running; answers them all."""
    deadline = time.monotonic() + timeout
    while True:
        response = await client.get(f"/api/md-collections/{collection_id}/jobs", headers=headers)
        assert response.status_code == 200, response.text
        jobs: list[dict[str, Any]] = response.json()["items"]
        if all(job["status"] in ("success", "error") for job in jobs):
            return jobs
        if time.monotonic() > deadline:
            raise TimeoutError(f"jobs still pending: {jobs}")
        await asyncio.sleep(0.1)


def repodocs_implements(method: str) -> bool:
    """Whether the repodocs servicer implements an RPC yet (the generated base class answers
    UNIMPLEMENTED, which the server interceptor currently reports as INTERNAL, i.e. 502 here)."""
    from cograph.repodocs.v1 import repodocs_service_pb2_grpc as base
    from cograph_repodocs.rpc import RepoDocsServicer

    return getattr(RepoDocsServicer, method) is not getattr(base.RepoDocsServiceServicer, method)


def search_implements(method: str) -> bool:
    from cograph.search.v1 import search_service_pb2_grpc as base
    from cograph_search.rpc import SearchServicer

    return getattr(SearchServicer, method) is not getattr(base.SearchServiceServicer, method)


def require_repodocs(*methods: str) -> None:
    missing = [m for m in methods if not repodocs_implements(m)]
    if missing:
        pytest.skip(f"repodocs does not implement {', '.join(missing)} yet")
