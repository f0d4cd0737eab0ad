"""Who is calling: static API tokens and bearer JWTs (HS256 secret, or a JWKS file or URL)."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from pathlib import Path
from typing import Any

import jwt
import msgspec

from cograph_settings import AuthSettings, SettingsError

log = logging.getLogger(__name__)

# Clock skew tolerated between the identity provider and the gateway.
LEEWAY_SECONDS = 30
ASYMMETRIC_ALGORITHMS = ["RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512"]


class Principal(msgspec.Struct, frozen=True):
    subject: str
    groups: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()
    admin: bool = False


# The caller without credentials, when COGRAPH_AUTH__ANONYMOUS_READ lets them read public things.
ANONYMOUS = Principal(subject="")


SIGN_IN = "sign in: send 'Authorization: Bearer <token>'"
# A request waits this long at most for the key set (PyJWT's default is 30 s).
JWKS_TIMEOUT_SECONDS = 5


class AuthenticationError(Exception):
    """The credentials are missing, malformed, expired or not ours; the message says which."""


class KeySetUnavailableError(Exception):
    """The identity provider's key set cannot be fetched: a token cannot be judged now, which
    says nothing against it (a 503, not a 401 that would have clients drop a good token)."""


def _jwks_file(path: str) -> jwt.PyJWKSet:
    """The key set in a JWKS file; SettingsError (one line, naming the setting) when it is not one."""
    try:
        return jwt.PyJWKSet.from_dict(json.loads(Path(path).read_text()))
    except (OSError, ValueError, jwt.PyJWKSetError) as error:
        raise SettingsError(f"COGRAPH_AUTH__JWKS_URL: {path} is not a readable JWKS file: {error}") from None


class Authenticator:
    def __init__(self, settings: AuthSettings) -> None:
        self._settings = settings
        self._tokens = [(entry.token.encode(), entry) for entry in settings.api_tokens]
        self._jwks_client: jwt.PyJWKClient | None = None
        self._jwks_set: jwt.PyJWKSet | None = None
        if settings.jwks_url.startswith(("http://", "https://")):
            self._jwks_client = jwt.PyJWKClient(
                settings.jwks_url, cache_keys=True, lifespan=300, timeout=JWKS_TIMEOUT_SECONDS
            )
        elif settings.jwks_url:
            self._jwks_set = _jwks_file(settings.jwks_url)
        # An empty issuer disables JWTs (the settings table says so): a token is only
        # trusted when we know who must have issued it.
        self._jwt_enabled = bool(settings.jwt_issuer) and bool(
            settings.jwt_secret or self._jwks_client or self._jwks_set
        )

    def _principal(self, subject: str, groups: Any, roles: Any) -> Principal:
        role_set = _names(roles)
        return Principal(
            subject=subject,
            groups=_names(groups),
            roles=role_set,
            admin=self._settings.admin_role in role_set,
        )

    def _bearer(self, authorization: str) -> str:
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            raise AuthenticationError("use an Authorization header of the form 'Bearer <token>'")
        return credentials.strip()

    def _static(self, token: str) -> Principal | None:
        presented = token.encode()
        found = None
        # Compare against every token, in constant time each, so timing says nothing about which matched.
        for known, entry in self._tokens:
            if hmac.compare_digest(known, presented):
                found = entry
        return None if found is None else self._principal(found.sub, found.groups, found.roles)

    async def authenticate(self, authorization: str | None) -> Principal | None:
        """The caller behind an Authorization header; None when there is no header."""
        if not authorization:
            return None
        token = self._bearer(authorization)
        static = self._static(token)
        if static is not None:
            return static
        if self._jwt_enabled and token.count(".") == 2:
            if self._jwks_client is not None:
                # Fetching the key set is blocking HTTP (cached afterwards): keep it off the event loop.
                return await asyncio.to_thread(self._from_jwt, token)
            return self._from_jwt(token)
        raise AuthenticationError("the token is not valid")

    def _key(self, token: str) -> tuple[Any, list[str]]:
        if self._jwks_client is not None:
            return self._fetched_key(self._jwks_client, token), ASYMMETRIC_ALGORITHMS
        if self._jwks_set is not None:
            kid = jwt.get_unverified_header(token).get("kid")
            if kid is None:
                keys = list(self._jwks_set.keys)
                if len(keys) != 1:
                    raise AuthenticationError("the token names no key ('kid') and the key set has several")
                return keys[0].key, ASYMMETRIC_ALGORITHMS
            return self._jwks_set[kid].key, ASYMMETRIC_ALGORITHMS
        return self._settings.jwt_secret, ["HS256"]

    def _fetched_key(self, client: jwt.PyJWKClient, token: str) -> Any:
        """The token's key from the key set URL. A URL that cannot be reached, or answers what
        is not a key set (an HTML page of a proxy), is the identity provider's outage."""
        try:
            return client.get_signing_key_from_jwt(token).key
        except (jwt.PyJWKClientConnectionError, jwt.PyJWKSetError, ValueError) as exc:
            log.warning("cannot fetch the JWKS key set: %s", exc)
            raise KeySetUnavailableError(
                "the identity provider's signing keys cannot be fetched now; try again shortly"
            ) from None

    def _from_jwt(self, token: str) -> Principal:
        try:
            key, algorithms = self._key(token)
            claims = jwt.decode(
                token,
                key,
                algorithms=algorithms,
                audience=self._settings.jwt_audience or None,
                issuer=self._settings.jwt_issuer,
                leeway=LEEWAY_SECONDS,
                # No audience configured: the token's `aud`, if any, is not ours to judge.
                options={"require": ["sub", "exp", "iss"], "verify_aud": bool(self._settings.jwt_audience)},
            )
        except jwt.ExpiredSignatureError:
            raise AuthenticationError("the token has expired") from None
        except jwt.InvalidAudienceError:
            raise AuthenticationError("the token is for another audience") from None
        except jwt.InvalidIssuerError:
            raise AuthenticationError("the token is from another issuer") from None
        except jwt.InvalidSignatureError:
            raise AuthenticationError("the token's signature does not verify") from None
        except jwt.MissingRequiredClaimError as exc:
            raise AuthenticationError(f"the token has no '{exc.claim}' claim") from None
        except KeyError:
            raise AuthenticationError("the token is signed with a key this gateway does not know") from None
        except (jwt.PyJWTError, ValueError) as exc:
            raise AuthenticationError(f"the token is not valid: {exc}") from None
        subject = claims["sub"]
        if not isinstance(subject, str) or not subject:
            raise AuthenticationError("the token's 'sub' claim must be a non-empty string")
        return self._principal(subject, claims.get("groups"), claims.get("roles"))


def _names(value: Any) -> frozenset[str]:
    """A claim holding names: a list of strings, or one string (some providers send that)."""
    if isinstance(value, str):
        return frozenset({value}) if value else frozenset()
    if isinstance(value, list | tuple):
        return frozenset(str(item) for item in value if item)
    return frozenset()
