"""Push webhooks of GitHub, GitLab and Gitea/Forgejo, read and verified without I/O.

A delivery is JSON about one repository. Its host (from the repository's URLs in the payload)
names the secret it must be verified with, from the credentials file's [[webhooks]]; a delivery
verified with the secret of host H can claim only repositories on H.

- GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`, the event in
  `X-GitHub-Event`, the delivery id in `X-GitHub-Delivery`, and the push's time in
  `repository.pushed_at` (seconds since the epoch).
- GitLab: `X-Gitlab-Token: <secret>`, `X-Gitlab-Event: Push Hook`, `X-Gitlab-Event-UUID`
  (or `X-Gitlab-Webhook-UUID`); no time of its own.
- Gitea and Forgejo: `X-Gitea-Signature` (or `X-Forgejo-Signature`): `<hex HMAC-SHA256>`,
  `X-Gitea-Event: push`, `X-Gitea-Delivery`; no time of its own.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

import msgspec

from cograph_errors import InvalidArgument
from cograph_repodocs.domain.clone_urls import parse_remote
from cograph_repodocs.domain.credentials import segments

BRANCH_PREFIX = "refs/heads/"


class Provider(enum.StrEnum):
    GITHUB = "github"
    GITLAB = "gitlab"
    GITEA = "gitea"


class Verdict(enum.StrEnum):
    QUEUED = "queued"
    IGNORED = "ignored"
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"


class Refused(Exception):
    """A delivery that is not acted on: its verdict and why, in words for the host's log."""

    def __init__(self, verdict: Verdict, reason: str) -> None:
        super().__init__(reason)
        self.verdict = verdict
        self.reason = reason


class Location(msgspec.Struct, frozen=True):
    """A repository as the clone URL and the payload both name it: host and path segments."""

    host: str
    path: tuple[str, ...]


def location(url: str) -> Location | None:
    """Where a clone URL (or a repository's web URL) points; None for a local or unreadable one."""
    try:
        remote = parse_remote(url.strip())
    except InvalidArgument:  # not a URL git could clone
        return None
    if remote is None or not segments(remote.path):
        return None
    return Location(remote.host, segments(remote.path))


class Delivery(msgspec.Struct, frozen=True, kw_only=True):
    provider: Provider
    event: str
    """push for a push; anything else needs no work."""
    delivery_id: str
    locations: tuple[Location, ...]
    """The repository, by each URL the payload gives for it (https, ssh, web)."""
    ref: str
    default_branch: str
    pushed_at: float | None
    """When the host says the push happened (GitHub only)."""

    @property
    def host(self) -> str | None:
        return self.locations[0].host if self.locations else None

    @property
    def branch(self) -> str | None:
        """The branch pushed to; None for a tag or another ref."""
        return self.ref.removeprefix(BRANCH_PREFIX) if self.ref.startswith(BRANCH_PREFIX) else None


# The payload's URLs of the repository, https first: the first one names the host.
_URL_KEYS = {
    Provider.GITHUB: ("repository", ("clone_url", "html_url", "ssh_url", "git_url")),
    Provider.GITLAB: ("project", ("git_http_url", "web_url", "git_ssh_url")),
    Provider.GITEA: ("repository", ("clone_url", "html_url", "ssh_url")),
}
_EVENT_HEADERS = {
    Provider.GITHUB: ("x-github-event",),
    Provider.GITLAB: ("x-gitlab-event",),
    Provider.GITEA: ("x-gitea-event", "x-forgejo-event"),
}
_DELIVERY_HEADERS = {
    Provider.GITHUB: ("x-github-delivery",),
    Provider.GITLAB: ("x-gitlab-event-uuid", "x-gitlab-webhook-uuid"),
    Provider.GITEA: ("x-gitea-delivery", "x-forgejo-delivery"),
}
_PUSH_EVENTS = {Provider.GITHUB: "push", Provider.GITLAB: "Push Hook", Provider.GITEA: "push"}


def _header(headers: Mapping[str, str], names: tuple[str, ...]) -> str:
    return next((headers[name].strip() for name in names if headers.get(name, "").strip()), "")


def read(provider: Provider, headers: Mapping[str, str], body: bytes) -> Delivery:
    """The delivery's facts, before any verification (they say which secret verifies it).
    Refused (ignored) for a body that is not a JSON object."""
    try:
        payload = msgspec.json.decode(body)
    except msgspec.DecodeError:
        raise Refused(Verdict.IGNORED, "the body is not JSON: nothing to do") from None
    if not isinstance(payload, dict):
        raise Refused(Verdict.IGNORED, "the body is not a JSON object: nothing to do")
    section, keys = _URL_KEYS[provider]
    repository = payload.get(section)
    if not isinstance(repository, dict) and provider is Provider.GITLAB:
        repository = payload.get("repository")
    repository = repository if isinstance(repository, dict) else {}
    found = [location(value) for key in keys if isinstance(value := repository.get(key), str)]
    locations = tuple(dict.fromkeys(place for place in found if place is not None))
    pushed_at = repository.get("pushed_at") if provider is Provider.GITHUB else None
    return Delivery(
        provider=provider,
        event=_header(headers, _EVENT_HEADERS[provider]),
        delivery_id=_header(headers, _DELIVERY_HEADERS[provider]),
        locations=locations,
        ref=_text(payload.get("ref")),
        default_branch=_text(repository.get("default_branch")),
        pushed_at=float(pushed_at) if isinstance(pushed_at, int | float) and pushed_at > 0 else None,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def is_push(delivery: Delivery) -> bool:
    return delivery.event == _PUSH_EVENTS[delivery.provider]


def verify(provider: Provider, headers: Mapping[str, str], body: bytes, secret: str) -> None:
    """Refused (unauthenticated) unless the delivery carries the host's proof of `secret`."""
    if provider is Provider.GITLAB:
        token = headers.get("x-gitlab-token", "")
        if not token:
            raise Refused(Verdict.UNAUTHENTICATED, "no X-Gitlab-Token header: set the webhook's secret token")
        if not hmac.compare_digest(token.encode(), secret.encode()):
            raise Refused(Verdict.UNAUTHENTICATED, "the X-Gitlab-Token is not this host's webhook secret")
        return
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if provider is Provider.GITHUB:
        given = headers.get("x-hub-signature-256", "")
        name = "X-Hub-Signature-256"
        if given and not given.startswith("sha256="):
            raise Refused(Verdict.UNAUTHENTICATED, f"the {name} header is not sha256=<hex>")
        given = given.removeprefix("sha256=")
    else:
        given = _header(headers, ("x-gitea-signature", "x-forgejo-signature"))
        name = "X-Gitea-Signature"
    if not given:
        raise Refused(Verdict.UNAUTHENTICATED, f"no {name} header: set the webhook's secret")
    if not hmac.compare_digest(given.strip().lower().encode(), expected.encode()):
        raise Refused(
            Verdict.UNAUTHENTICATED, f"the {name} does not match the body signed with this host's secret"
        )


def check_fresh(delivery: Delivery, now: float, window_seconds: float) -> None:
    """Refused (forbidden) when the host dates the push outside the window around `now`."""
    if delivery.pushed_at is None:
        return
    if abs(now - delivery.pushed_at) > window_seconds:
        raise Refused(
            Verdict.FORBIDDEN,
            f"the push is dated {now - delivery.pushed_at:.0f} s from now, outside the"
            f" {window_seconds:g} s window: refused as a replay",
        )
