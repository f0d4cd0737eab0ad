"""Identity over real HTTP: 401 without or with bad credentials, JWT principals, anonymous read."""

from __future__ import annotations

import socket
import time
import uuid

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from e2e.gateway.conftest import SystemFactory
from e2e.gateway.helpers import JWT_AUDIENCE, JWT_ISSUER, create_collection, is_problem, mint
from e2e.gateway.test_collections_api import Auth

PROTECTED = [
    ("GET", "/api/md-collections"),
    ("POST", "/api/md-collections"),
    ("GET", f"/api/md-collections/{uuid.uuid4()}"),
    ("GET", "/api/md-collections/jobs"),
    ("GET", "/api/repos"),
    ("GET", "/api/repos/github.com/acme/api"),
    ("POST", "/api/search/route"),
    ("POST", "/mcp"),
]


BODIES = {"/api/search/route": {"query": "x"}, "/api/md-collections": {"name": "x"}, "/mcp": {}}
BAD_CREDENTIALS = {
    "none": ({}, "sign in: send 'Authorization: Bearer <token>'"),
    "expired": (mint(exp=int(time.time()) - 3600), "the token has expired"),
    "bad signature": (
        mint(secret="a-different-secret-the-gateway-does-not-know"),
        "the token's signature does not verify",
    ),
    "wrong audience": (mint(aud="another-service"), "the token is for another audience"),
    "wrong issuer": (mint(iss="https://someone-else.test"), "the token is from another issuer"),
    "no sub": (mint(sub=None), "the token has no 'sub' claim"),
    "basic": (
        {"Authorization": "Basic YWxpY2U6c2VjcmV0"},
        "use an Authorization header of the form 'Bearer <token>'",
    ),
    "unknown": ({"Authorization": "Bearer not-a-known-token"}, "the token is not valid"),
}


async def test_requests_without_valid_credentials_are_401(gateway: httpx.AsyncClient) -> None:
    # One system for every case: starting one per case would cost more than the checks.
    for case, (headers, detail) in BAD_CREDENTIALS.items():
        for method, path in PROTECTED:
            body = (
                {"query": "x"}
                if path == "/api/search/route"
                else ({"name": "x"} if method == "POST" else None)
            )
            response = await gateway.request(method, path, json=body, headers=headers)
            problem = is_problem(response, 401)
            assert problem["detail"] == detail, (case, method, path)
            assert response.headers["www-authenticate"] == "Bearer"


async def test_a_jwt_is_a_principal_with_its_groups_and_roles(gateway: httpx.AsyncClient, auth: Auth) -> None:
    carol = mint("carol", groups=["research"])
    created = await create_collection(gateway, carol, "Carol's notes")
    assert created["owner"] == "carol"
    # alice's private collection, granted to research: carol's JWT group reads it.
    private = await create_collection(gateway, auth["alice"], "Research", "private")
    url = f"/api/md-collections/{private['id']}"
    is_problem(await gateway.get(url, headers=carol), 403)
    await gateway.post(f"{url}/grants", json={"group": "research"}, headers=auth["alice"])
    assert (await gateway.get(url, headers=carol)).status_code == 200
    is_problem(await gateway.patch(url, json={"name": "Mine"}, headers=carol), 403)
    # The admin role comes from the `roles` claim.
    assert (
        await gateway.patch(url, json={"name": "Moved"}, headers=mint("dave", roles=["admin"]))
    ).status_code == 200


async def test_anonymous_read_exposes_public_collections_only(system_with: SystemFactory, auth: Auth) -> None:
    async with system_with(anonymous_read=True) as client:
        public = await create_collection(client, auth["alice"], "Public", "public")
        private = await create_collection(client, auth["alice"], "Private", "private")
        await client.post(
            f"/api/md-collections/{public['id']}/documents",
            json={"source_key": "a.md", "content": "# A\n\nhello\n"},
            headers=auth["alice"],
        )
        listed = (await client.get("/api/md-collections")).json()["items"]
        assert [c["id"] for c in listed] == [public["id"]]
        assert (await client.get(f"/api/md-collections/{public['id']}")).status_code == 200
        assert (await client.get(f"/api/md-collections/{public['id']}/documents")).json()["items"]
        # What needs a sign-in says so: private reads, every write, the job list.
        is_problem(await client.get(f"/api/md-collections/{private['id']}"), 401)
        is_problem(await client.post("/api/md-collections", json={"name": "x"}), 401)
        is_problem(await client.post(f"/api/md-collections/{public['id']}/re-embed"), 401)
        is_problem(await client.get("/api/md-collections/jobs"), 401)
        is_problem(await client.get(f"/api/md-collections/{uuid.uuid4()}"), 404)
        # Bad credentials are still refused, not downgraded to anonymous.
        is_problem(await client.get("/api/md-collections", headers={"Authorization": "Bearer nope"}), 401)


async def test_hidden_existence_makes_unreadable_collections_404(
    system_with: SystemFactory, auth: Auth
) -> None:
    async with system_with(hide_collection_existence=True) as client:
        private = await create_collection(client, auth["alice"], "Private", "private")
        missing = str(uuid.uuid4())
        unreadable = is_problem(
            await client.get(f"/api/md-collections/{private['id']}", headers=auth["bob"]), 404
        )
        absent = is_problem(await client.get(f"/api/md-collections/{missing}", headers=auth["bob"]), 404)
        assert unreadable["detail"].replace(private["id"], "<id>") == absent["detail"].replace(
            missing, "<id>"
        )
        assert (
            await client.get(f"/api/md-collections/{private['id']}", headers=auth["alice"])
        ).status_code == 200


async def test_an_unreachable_key_set_is_the_gateway_s_503_not_the_caller_s_401(
    system_with: SystemFactory,
) -> None:
    """A well-signed token that cannot be checked because the identity provider's key set cannot
    be fetched is not a bad token: a 401 would have clients throw a good token away."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    claims = {"sub": "alice", "iss": JWT_ISSUER, "aud": JWT_AUDIENCE, "exp": int(time.time()) + 300}
    token = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})
    async with system_with(jwt_secret="", jwks_url=f"http://127.0.0.1:{closed}/jwks.json") as client:
        for method, path in PROTECTED:
            body = BODIES.get(path) if method == "POST" else None
            response = await client.request(
                method, path, json=body, headers={"Authorization": f"Bearer {token}"}
            )
            problem = is_problem(response, 503)
            assert "signing keys cannot be fetched" in problem["detail"], (method, path)
            assert "www-authenticate" not in response.headers
