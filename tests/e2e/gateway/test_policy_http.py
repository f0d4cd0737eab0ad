"""The policy over real HTTP: every collection endpoint x principals x visibilities, in three deployments.

The expected status of each request comes from the pure policy (`decide`, itself tested as a full
matrix in tests/unit/gateway): this checks that every endpoint asks the policy the right question
and turns the answer into the right status.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from e2e.gateway.conftest import SystemFactory
from e2e.gateway.helpers import create_collection, is_problem, mint, wait_for_jobs
from e2e.gateway.test_collections_api import Auth

from cograph_gateway.identity import ANONYMOUS, Principal
from cograph_gateway.policy import CollectionAccess, CollectionVisibility, Operation, Outcome, decide

PRINCIPALS: dict[str, Principal] = {
    "alice": Principal(subject="alice", groups=frozenset({"research"})),  # the owner
    "bob": Principal(subject="bob", groups=frozenset({"support"})),  # in the granted group
    "carol": Principal(subject="carol", groups=frozenset({"design"})),  # neither (a JWT)
    "admin": Principal(subject="admin", roles=frozenset({"admin"}), admin=True),
    "anonymous": ANONYMOUS,
}


@dataclass
class Fixture:
    """One collection with a document, a chunk and an embed job, to aim the requests at."""

    id: str
    visibility: str
    document_id: str
    chunk_id: str
    job_id: str


@dataclass
class Endpoint:
    operation: Operation
    method: str
    path: str
    allowed: int
    body: dict[str, Any] | None = None

    def url(self, f: Fixture) -> str:
        return self.path.format(
            id=f.id, doc=f.document_id, chunk=f.chunk_id, job=f.job_id, missing=uuid.uuid4()
        )


ENDPOINTS = [
    Endpoint(Operation.GET_COLLECTION, "GET", "/api/md-collections/{id}", 200),
    Endpoint(
        Operation.UPDATE_COLLECTION, "PATCH", "/api/md-collections/{id}", 200, {"description": "edited"}
    ),
    Endpoint(
        Operation.ADD_COLLECTION_GRANT, "POST", "/api/md-collections/{id}/grants", 201, {"group": "ops"}
    ),
    Endpoint(Operation.REMOVE_COLLECTION_GRANT, "DELETE", "/api/md-collections/{id}/grants/ops", 204),
    Endpoint(
        Operation.UPLOAD_DOCUMENT,
        "POST",
        "/api/md-collections/{id}/documents",
        201,
        {"source_key": "more.md", "content": "# More\n"},
    ),
    Endpoint(
        Operation.UPLOAD_DOCUMENTS,
        "POST",
        "/api/md-collections/{id}/documents/batch",
        201,
        {"documents": [{"source_key": "batch.md", "content": "# Batch\n"}]},
    ),
    Endpoint(Operation.LIST_DOCUMENTS, "GET", "/api/md-collections/{id}/documents", 200),
    Endpoint(Operation.GET_DOCUMENT, "GET", "/api/md-collections/{id}/documents/{doc}", 200),
    # Allowed, it reaches the service, which has no such document: 404 from there.
    Endpoint(Operation.DELETE_DOCUMENT, "DELETE", "/api/md-collections/{id}/documents/{missing}", 404),
    Endpoint(Operation.LIST_CHUNKS, "GET", "/api/md-collections/{id}/documents/{doc}/chunks", 200),
    Endpoint(Operation.GET_CHUNK, "GET", "/api/md-collections/{id}/chunks/{chunk}", 200),
    Endpoint(
        Operation.SEARCH_COLLECTION, "POST", "/api/md-collections/{id}/search", 200, {"query": "runbook"}
    ),
    Endpoint(Operation.EMBED_STATUS, "GET", "/api/md-collections/{id}/embed-status", 200),
    Endpoint(Operation.RE_EMBED, "POST", "/api/md-collections/{id}/re-embed", 202),
    Endpoint(Operation.LIST_COLLECTION_JOBS, "GET", "/api/md-collections/{id}/jobs", 200),
    Endpoint(Operation.RETRY_JOB, "POST", "/api/md-collections/jobs/{job}/retry", 202),
]

VARIANT_CHECKS = {
    Operation.GET_COLLECTION,
    Operation.UPDATE_COLLECTION,
    Operation.LIST_DOCUMENTS,
    Operation.UPLOAD_DOCUMENT,
    Operation.LIST_COLLECTION_JOBS,
    Operation.RETRY_JOB,
}


def _headers(auth: Auth, name: str) -> dict[str, str]:
    if name == "anonymous":
        return {}
    if name == "carol":
        return mint("carol", groups=["design"])
    return auth[name]


async def _fixture(client: httpx.AsyncClient, auth: Auth, visibility: str) -> Fixture:
    alice = auth["alice"]
    collection = await create_collection(client, alice, f"Runbooks {visibility}", visibility)
    cid = collection["id"]
    assert (
        await client.post(f"/api/md-collections/{cid}/grants", json={"group": "support"}, headers=alice)
    ).is_success
    upload = await client.post(
        f"/api/md-collections/{cid}/documents",
        json={"source_key": "runbook.md", "content": "# Runbook\n\nRestart the service.\n"},
        headers=alice,
    )
    document_id = upload.json()["document_id"]
    chunks = await client.get(f"/api/md-collections/{cid}/documents/{document_id}/chunks", headers=alice)
    job = await client.post(f"/api/md-collections/{cid}/re-embed", headers=alice)
    # Retrying a job still running is a 409: the retry checks need it ended. Once requests no
    # longer waited 40 ms on TCP acknowledgements, they could reach it while the worker ran it.
    await wait_for_jobs(client, cid, alice)
    return Fixture(cid, visibility, document_id, chunks.json()["items"][0]["id"], job.json()["id"])


@pytest.mark.parametrize(
    "deployment",
    [{}, {"anonymous_read": True}, {"hide_collection_existence": True}],
    ids=["default", "anonymous-read", "hide-existence"],
)
async def test_collection_endpoints_follow_the_policy(
    system_with: SystemFactory, auth: Auth, deployment: dict[str, bool]
) -> None:
    async with system_with(**deployment) as client:
        fixtures = [await _fixture(client, auth, v) for v in ("public", "private", "admin_only")]
        # The other deployments change only how refusals read: a representative subset suffices there.
        endpoints = ENDPOINTS if not deployment else [e for e in ENDPOINTS if e.operation in VARIANT_CHECKS]
        checked = 0
        for fixture in fixtures:
            facts = CollectionAccess(
                collection_id=fixture.id,
                visibility=CollectionVisibility(fixture.visibility),
                owner="alice",
                group_grants=frozenset({"support"}),
            )
            for name, principal in PRINCIPALS.items():
                for endpoint in endpoints:
                    response = await client.request(
                        endpoint.method,
                        endpoint.url(fixture),
                        json=endpoint.body,
                        headers=_headers(auth, name),
                    )
                    if name == "anonymous" and not deployment.get("anonymous_read"):
                        expected = 401  # no credentials, nothing readable anonymously: always 401
                    else:
                        outcome = decide(
                            principal,
                            endpoint.operation,
                            facts,
                            hide_collection_existence=deployment.get("hide_collection_existence", False),
                        )
                        expected = endpoint.allowed if outcome is Outcome.ALLOW else int(outcome)
                    where = f"{name} {endpoint.method} {endpoint.path} on {fixture.visibility}"
                    if response.status_code == 501 and endpoint.operation is Operation.SEARCH_COLLECTION:
                        continue  # the search service is still being built
                    assert response.status_code == expected, f"{where}: {response.text}"
                    if expected >= 400:
                        is_problem(response, expected)
                    checked += 1
        assert checked >= len(fixtures) * len(PRINCIPALS) * (len(endpoints) - 1)


async def test_deleting_a_collection_is_for_its_owner_or_an_admin(
    gateway: httpx.AsyncClient, auth: Auth
) -> None:
    mine = await create_collection(gateway, auth["alice"], "Mine", "public")
    granted = await create_collection(gateway, auth["alice"], "Granted", "private")
    await gateway.post(
        f"/api/md-collections/{granted['id']}/grants", json={"group": "support"}, headers=auth["alice"]
    )
    is_problem(await gateway.delete(f"/api/md-collections/{mine['id']}", headers=auth["bob"]), 403)
    is_problem(await gateway.delete(f"/api/md-collections/{granted['id']}", headers=auth["bob"]), 403)
    is_problem(await gateway.delete(f"/api/md-collections/{granted['id']}", headers=mint("carol")), 403)
    is_problem(await gateway.delete(f"/api/md-collections/{mine['id']}"), 401)
    assert (
        await gateway.delete(f"/api/md-collections/{mine['id']}", headers=auth["alice"])
    ).status_code == 204
    assert (
        await gateway.delete(f"/api/md-collections/{granted['id']}", headers=auth["admin"])
    ).status_code == 204
    is_problem(await gateway.delete(f"/api/md-collections/{mine['id']}", headers=auth["alice"]), 404)


async def test_lists_are_scoped_to_what_the_caller_may_read(gateway: httpx.AsyncClient, auth: Auth) -> None:
    public = await create_collection(gateway, auth["alice"], "Public", "public")
    private = await create_collection(gateway, auth["alice"], "Private", "private")
    granted = await create_collection(gateway, auth["alice"], "Granted", "admin_only")
    await gateway.post(
        f"/api/md-collections/{granted['id']}/grants", json={"group": "support"}, headers=auth["alice"]
    )

    async def listed(headers: dict[str, str]) -> set[str]:
        return {c["id"] for c in (await gateway.get("/api/md-collections", headers=headers)).json()["items"]}

    async def jobs_of(headers: dict[str, str]) -> set[str]:
        return {
            j["collection_id"]
            for j in (await gateway.get("/api/md-collections/jobs", headers=headers)).json()["items"]
        }

    assert await listed(auth["alice"]) == {public["id"], private["id"], granted["id"]}
    assert await listed(auth["bob"]) == {public["id"], granted["id"]}
    assert await listed(auth["admin"]) == {public["id"]}  # the admin role alone reads only public ones
    assert await listed(mint("carol")) == {public["id"]}
    for collection in (public, private, granted):
        await gateway.post(f"/api/md-collections/{collection['id']}/re-embed", headers=auth["alice"])
    # Jobs: public and owned collections only, whatever the grants.
    assert await jobs_of(auth["alice"]) == {public["id"], private["id"], granted["id"]}
    assert await jobs_of(auth["bob"]) == {public["id"]}
    assert await jobs_of(auth["admin"]) == {public["id"]}
    is_problem(await gateway.get("/api/md-collections/jobs"), 401)
