"""Who is looking at a page: the browser's session, signed in with an API token or a JWT.

The token is kept in an encrypted, HttpOnly, SameSite cookie (Litestar's client-side session,
AES-GCM) and checked again on every page through the same Authenticator as a bearer header, so a
JWT that expires or a token that is withdrawn signs the browser out. Forms that change anything
carry a CSRF token (Litestar's CSRF middleware). The REST API, MCP and the ops endpoints are
outside both: they authenticate each request by its header alone.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any
from urllib.parse import quote, urlsplit

from litestar import Request
from litestar.config.csrf import CSRFConfig
from litestar.middleware.session.client_side import CookieBackendConfig

from cograph_gateway.identity import (
    ANONYMOUS,
    AuthenticationError,
    Authenticator,
    KeySetUnavailableError,
    Principal,
)
from cograph_settings import Settings

# A working day: long enough not to interrupt, short enough that a forgotten browser signs out.
SESSION_SECONDS = 12 * 3600
# The session key the token is kept under (a name, not a token).
TOKEN_KEY = "token"  # noqa: S105
# Where a page request keeps its principal, for the header that shows who is signed in.
VIEWER_KEY = "cograph.viewer"
# Paths the session and CSRF middlewares leave alone: they take bearer headers, not cookies.
OUTSIDE_THE_PAGES = ["^/api/", "^/api$", "^/mcp", "^/healthz", "^/readyz", "^/metrics", "^/static/"]


class SignInRequired(Exception):
    """The page needs a signed-in browser; `reason` says why it is not (shown on the sign-in page)."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


def _key(settings: Settings) -> bytes:
    secret = settings.gateway.session_secret or secrets.token_hex(32)
    return hashlib.sha256(secret.encode()).digest()


def _secure(settings: Settings) -> bool:
    return urlsplit(settings.gateway.public_url).scheme == "https"


def session_config(settings: Settings) -> CookieBackendConfig:
    return CookieBackendConfig(
        secret=_key(settings),
        key="cograph_session",
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="lax",
        secure=_secure(settings),
        exclude=OUTSIDE_THE_PAGES,
    )


def csrf_config(settings: Settings) -> CSRFConfig:
    return CSRFConfig(
        secret=_key(settings).hex(),
        cookie_name="cograph_csrf",
        cookie_samesite="lax",
        cookie_secure=_secure(settings),
        exclude=OUTSIDE_THE_PAGES,
    )


class Viewers:
    """Resolves the principal of a page request from its session."""

    def __init__(self, authenticator: Authenticator, *, anonymous_read: bool) -> None:
        self._authenticator = authenticator
        self._anonymous_read = anonymous_read

    async def check(self, token: str) -> Principal:
        """The principal of a token typed on the sign-in page; AuthenticationError if it is not one."""
        principal = await self._authenticator.authenticate(f"Bearer {token.strip()}")
        if principal is None:
            raise AuthenticationError("give an API token or a JWT")
        return principal

    async def of(self, request: Request[Any, Any, Any]) -> Principal:
        token = request.session.get(TOKEN_KEY) if request.scope.get("session") else None
        if not token:
            if self._anonymous_read:
                return ANONYMOUS
            raise SignInRequired()
        try:
            return await self.check(token)
        except AuthenticationError as error:
            request.clear_session()
            raise SignInRequired(f"you were signed out: {error}") from None
        except KeySetUnavailableError as error:
            raise SignInRequired(str(error)) from None


def sign_in_url(request: Request[Any, Any, Any], reason: str = "") -> str:
    """The sign-in page, returning to this page afterwards."""
    url = f"/sign-in?next={quote(request.url.path)}"
    return url + (f"&reason={quote(reason)}" if reason else "")


def safe_next(target: str) -> str:
    """Where to go after signing in: a path of this site only, never another site."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/docs"
    return target
