"""Identity: static API tokens and JWTs (HS256 secret, JWKS file, JWKS URL), and every way to fail."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from cograph_gateway.identity import AuthenticationError, Authenticator, KeySetUnavailableError, Principal
from cograph_settings import ApiToken, AuthSettings

SECRET = "a-test-secret-that-is-long-enough-for-hs256"
ISSUER = "https://idp.example"
AUDIENCE = "cograph"


def _claims(**overrides: Any) -> dict[str, Any]:
    claims: dict[str, Any] = {
        "sub": "alice",
        "iss": ISSUER,
        "aud": AUDIENCE,
        "exp": int(time.time()) + 300,
        "groups": ["research"],
        "roles": ["reader"],
    }
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not None}


def _hs256(**overrides: Any) -> str:
    return jwt.encode(_claims(**overrides), SECRET, algorithm="HS256")


@pytest.fixture
def hs256() -> Authenticator:
    return Authenticator(
        AuthSettings(
            jwt_issuer=ISSUER,
            jwt_audience=AUDIENCE,
            jwt_secret=SECRET,
            api_tokens=[ApiToken(token="static-token", sub="bot", groups=["ops"], roles=["admin"])],
        )
    )


async def test_a_static_token_is_its_principal(hs256: Authenticator) -> None:
    assert await hs256.authenticate("Bearer static-token") == Principal(
        subject="bot", groups=frozenset({"ops"}), roles=frozenset({"admin"}), admin=True
    )


async def test_no_header_is_no_principal(hs256: Authenticator) -> None:
    assert await hs256.authenticate(None) is None
    assert await hs256.authenticate("") is None


async def test_a_valid_jwt_carries_sub_groups_and_roles(hs256: Authenticator) -> None:
    principal = await hs256.authenticate(f"Bearer {_hs256(roles=['admin', 'reader'])}")
    assert principal == Principal(
        subject="alice", groups=frozenset({"research"}), roles=frozenset({"admin", "reader"}), admin=True
    )
    # A single string where a list is expected: some identity providers send that.
    assert await hs256.authenticate(f"Bearer {_hs256(groups='support', roles=None)}") == Principal(
        subject="alice", groups=frozenset({"support"})
    )


# Tokens are minted when the test runs, not at collection: a suite that runs long must not
# find its "wrong audience" token expired first.
@pytest.mark.parametrize(
    ("mint", "message"),
    [
        (lambda: _hs256(exp=int(time.time()) - 120), "the token has expired"),
        (lambda: _hs256(aud="someone-else"), "the token is for another audience"),
        (lambda: _hs256(iss="https://evil.example"), "the token is from another issuer"),
        (
            lambda: jwt.encode(_claims(), "another-secret-of-sufficient-length-123", algorithm="HS256"),
            "signature",
        ),
        (lambda: _hs256(sub=None), "the token has no 'sub' claim"),
        (lambda: _hs256(exp=None), "the token has no 'exp' claim"),
        (lambda: _hs256(sub=""), "'sub'"),
        (lambda: "not-a-token", "the token is not valid"),
        (lambda: "a.b.c", "the token is not valid"),
    ],
)
async def test_bad_jwts_are_refused_with_the_reason(
    hs256: Authenticator, mint: Callable[[], str], message: str
) -> None:
    with pytest.raises(AuthenticationError, match=message):
        await hs256.authenticate(f"Bearer {mint()}")


async def test_the_none_algorithm_is_refused(hs256: Authenticator) -> None:
    unsigned = jwt.encode(_claims(), key=None, algorithm="none")  # type: ignore[arg-type]
    with pytest.raises(AuthenticationError):
        await hs256.authenticate(f"Bearer {unsigned}")


@pytest.mark.parametrize("header", ["Basic abc", "Bearer", "Bearer   ", "token"])
async def test_malformed_headers_say_what_is_expected(hs256: Authenticator, header: str) -> None:
    with pytest.raises(AuthenticationError, match="Bearer <token>"):
        await hs256.authenticate(header)


async def test_without_an_audience_the_aud_claim_is_not_judged() -> None:
    authenticator = Authenticator(AuthSettings(jwt_issuer=ISSUER, jwt_secret=SECRET))
    principal = await authenticator.authenticate(f"Bearer {_hs256(aud='whatever')}")
    assert principal is not None
    assert principal.subject == "alice"


@pytest.fixture(scope="module")
def rsa_keys() -> tuple[Any, dict[str, Any]]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid="k1", use="sig", alg="RS256")
    return key, {"keys": [jwk]}


def _rs256(key: Any, kid: str | None = "k1", **overrides: Any) -> str:
    headers = {"kid": kid} if kid else {}
    return jwt.encode(_claims(**overrides), key, algorithm="RS256", headers=headers)


async def test_a_jwks_file_verifies_rs256(tmp_path: Path, rsa_keys: tuple[Any, dict[str, Any]]) -> None:
    key, jwks = rsa_keys
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(jwks))
    authenticator = Authenticator(AuthSettings(jwt_issuer=ISSUER, jwt_audience=AUDIENCE, jwks_url=str(path)))
    principal = await authenticator.authenticate(f"Bearer {_rs256(key)}")
    assert principal is not None
    assert principal.subject == "alice"
    # One key in the set: a token without a kid is verified against it.
    assert await authenticator.authenticate(f"Bearer {_rs256(key, kid=None)}") == principal
    with pytest.raises(AuthenticationError, match="key this gateway does not know"):
        await authenticator.authenticate(f"Bearer {_rs256(key, kid='k2')}")
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(AuthenticationError, match="signature"):
        await authenticator.authenticate(f"Bearer {_rs256(other)}")
    # Algorithm confusion: with a key set configured, only asymmetric algorithms are accepted.
    with pytest.raises(AuthenticationError):
        await authenticator.authenticate(f"Bearer {_hs256()}")


@contextlib.contextmanager
def _serving(body: bytes, content_type: str = "application/json") -> Iterator[str]:
    """A key set URL answering 200 with body."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def jwks_server(rsa_keys: tuple[Any, dict[str, Any]]) -> Iterator[str]:
    with _serving(json.dumps(rsa_keys[1]).encode()) as url:
        yield url


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<html><body>Down for maintenance</body></html>", "text/html"),
        (b'{"keys": []}', "application/json"),
        (b'{"status": "ok"}', "application/json"),
    ],
)
async def test_a_key_set_url_answering_no_key_set_is_an_outage_not_a_bad_token(
    rsa_keys: tuple[Any, dict[str, Any]], body: bytes, content_type: str
) -> None:
    """A proxy's maintenance page where the key set should be says nothing against the token:
    a 401 would have clients throw a good token away."""
    with _serving(body, content_type) as url:
        authenticator = Authenticator(AuthSettings(jwt_issuer=ISSUER, jwt_audience=AUDIENCE, jwks_url=url))
        with pytest.raises(KeySetUnavailableError, match="signing keys cannot be fetched"):
            await authenticator.authenticate(f"Bearer {_rs256(rsa_keys[0])}")


async def test_a_key_the_key_set_does_not_hold_is_a_bad_token(jwks_server: str) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    authenticator = Authenticator(
        AuthSettings(jwt_issuer=ISSUER, jwt_audience=AUDIENCE, jwks_url=jwks_server)
    )
    with pytest.raises(AuthenticationError):
        await authenticator.authenticate(f"Bearer {_rs256(other, kid='k9')}")


async def test_a_jwks_url_verifies_rs256(jwks_server: str, rsa_keys: tuple[Any, dict[str, Any]]) -> None:
    authenticator = Authenticator(
        AuthSettings(jwt_issuer=ISSUER, jwt_audience=AUDIENCE, jwks_url=jwks_server)
    )
    principal = await authenticator.authenticate(f"Bearer {_rs256(rsa_keys[0])}")
    assert principal is not None
    assert principal.groups == frozenset({"research"})
