"""Who is calling: static API tokens and bearer JWTs (HS256 secret or JWKS)."""

from __future__ import annotations

import hmac
import json
from pathlib import Path
from typing import Any

import jwt
import msgspec

from cograph_settings import AuthSettings


class Principal(msgspec.Struct, frozen=True):
    subject: str
    groups: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()
    admin: bool = False


ANONYMOUS = Principal(subject="")


class AuthenticationError(Exception):
    """The credentials are missing, malformed, expired or not ours; the message says which."""


class Authenticator:
    def __init__(self, settings: AuthSettings) -> None:
        self._settings = settings
        self._tokens = {entry.token: entry for entry in settings.api_tokens}
        self._jwks: jwt.PyJWKClient | jwt.PyJWKSet | None = None
        if settings.jwks_url:
            if settings.jwks_url.startswith(("http://", "https://")):
                self._jwks = jwt.PyJWKClient(settings.jwks_url, cache_keys=True)
            else:
                self._jwks = jwt.PyJWKSet.from_dict(json.loads(Path(settings.jwks_url).read_text()))

    def _principal(self, subject: str, groups: Any, roles: Any) -> Principal:
        role_set = frozenset(str(role) for role in roles or ())
        return Principal(
            subject=subject,
            groups=frozenset(str(group) for group in groups or ()),
            roles=role_set,
            admin=self._settings.admin_role in role_set,
        )

    def authenticate(self, authorization: str | None) -> Principal | None:
        """The caller behind an Authorization header; None when there is no header."""
        if not authorization:
            return None
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            raise AuthenticationError("use an Authorization header of the form 'Bearer <token>'")
        token = credentials.strip()
        for known, entry in self._tokens.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                return self._principal(entry.sub, entry.groups, entry.roles)
        if token.count(".") == 2 and (self._settings.jwt_secret or self._jwks is not None):
            return self._from_jwt(token)
        raise AuthenticationError("the token is not valid")

    def _from_jwt(self, token: str) -> Principal:
        try:
            key: Any
            algorithms: list[str]
            if self._jwks is not None:
                header = jwt.get_unverified_header(token)
                if isinstance(self._jwks, jwt.PyJWKClient):
                    key = self._jwks.get_signing_key_from_jwt(token).key
                else:
                    key = self._jwks[header.get("kid", "")].key
                algorithms = ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256"]
            else:
                key, algorithms = self._settings.jwt_secret, ["HS256"]
            claims = jwt.decode(
                token,
                key,
                algorithms=algorithms,
                audience=self._settings.jwt_audience or None,
                issuer=self._settings.jwt_issuer or None,
                options={"require": ["sub", "exp"]},
            )
        except jwt.ExpiredSignatureError:
            raise AuthenticationError("the token has expired") from None
        except jwt.InvalidAudienceError:
            raise AuthenticationError("the token is for another audience") from None
        except jwt.InvalidIssuerError:
            raise AuthenticationError("the token is from another issuer") from None
        except jwt.InvalidSignatureError:
            raise AuthenticationError("the token's signature does not verify") from None
        except (jwt.PyJWTError, KeyError) as exc:
            raise AuthenticationError(f"the token is not valid: {exc}") from None
        return self._principal(str(claims["sub"]), claims.get("groups"), claims.get("roles"))
