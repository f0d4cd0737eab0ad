"""Rules for what callers send that need no I/O: repository references, sources, branches, groups,
and keeping a clone URL's credentials out of whatever is shown."""

from __future__ import annotations

import enum
import re
from pathlib import PurePosixPath

import msgspec

from cograph_errors import DEFAULT_RELATED_LIMIT, MAX_RELATED_LIMIT, InvalidArgument, check_typed_text

MAX_NAME_CHARS = 200
MAX_URL_CHARS = 2000
MAX_RELATED_NODES = 500
# A repository's own sync interval: the scheduler looks once a minute at most, and a year is the
# longest a schedule that still means something waits.
MIN_SYNC_INTERVAL_SECONDS = 60
MAX_SYNC_INTERVAL_SECONDS = 366 * 86_400

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# One path segment of a repository reference: what git hosts allow in owners and names.
_REF_SEGMENT = re.compile(r"^[\w.-]+$")
_HOST = re.compile(r"^[\w.-]+(?::\d+)?$")
_HTTP_REMOTE = re.compile(r"^https?://", re.IGNORECASE)
# The user name and password (or token) of a URL: scheme://userinfo@host...
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")


def redact_credentials(text: str) -> str:
    """text with the credentials of every URL in it removed: a clone URL may carry a token, and
    neither the URL nor git's messages quoting it may show it to whoever reads a repository."""
    return _USERINFO.sub(r"\1", text)


class Visibility(enum.StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"


class Ref(msgspec.Struct, frozen=True):
    host: str
    owner: str
    name: str

    def __str__(self) -> str:
        return f"{self.host}/{self.owner}/{self.name}"


def check_ref(host: str, owner: str, name: str) -> Ref:
    """host/owner/name as URLs show them (github.com/acme/api): each one path segment."""
    host, owner, name = host.strip(), owner.strip(), name.strip()
    if not host or not _HOST.match(host) or len(host) > MAX_NAME_CHARS:
        raise InvalidArgument(f"repository host {host!r} is not a host name (e.g. github.com)")
    for what, value in (("owner", owner), ("name", name)):
        if not value or len(value) > MAX_NAME_CHARS or not _REF_SEGMENT.match(value) or set(value) == {"."}:
            raise InvalidArgument(
                f"repository {what} {value!r} must be 1 to {MAX_NAME_CHARS} letters, digits, '.', '_' or '-'"
            )
    return Ref(host, owner, name)


def check_clone_url(url: str) -> str:
    url = url.strip()
    if not url:
        raise InvalidArgument("clone_url is empty: give a URL git can clone, or a checkout_path")
    if len(url) > MAX_URL_CHARS or _CONTROL.search(url):
        raise InvalidArgument("clone_url is not a URL git can clone")
    # git would read a leading dash as an option.
    if url.startswith("-"):
        raise InvalidArgument(f"clone_url {url!r} must not start with '-'")
    return url


def check_checkout_path(path: str) -> str:
    """An absolute path: a relative one would depend on where the service was started."""
    if not path.strip():
        raise InvalidArgument("checkout_path is empty: give the absolute path of an existing checkout")
    if _CONTROL.search(path):
        raise InvalidArgument("checkout_path contains a control character: no checkout's path does")
    if not PurePosixPath(path).is_absolute():
        raise InvalidArgument(f"checkout_path {path!r} must be absolute")
    return path


def check_branch(branch: str) -> str:
    """Empty means the remote's default branch; otherwise a name git accepts for a branch."""
    branch = branch.strip()
    if not branch:
        return ""
    bad = (
        branch.startswith(("-", "/", "."))
        or branch.endswith(("/", ".lock", "."))
        or ".." in branch
        or "@{" in branch
        or any(ch in branch for ch in " ~^:?*[\\")
        or _CONTROL.search(branch)
        or len(branch) > MAX_NAME_CHARS
    )
    if bad:
        raise InvalidArgument(f"default_branch {branch!r} is not a valid branch name")
    return branch


def check_web_url(url: str) -> str:
    url = url.strip()
    if url and (not _HTTP_REMOTE.match(url) or len(url) > MAX_URL_CHARS or _CONTROL.search(url)):
        raise InvalidArgument(f"web_url {url!r} must be an http(s) URL")
    return url.rstrip("/")


def derive_web_url(clone_url: str, branch: str) -> str:
    """https://host/owner/name(.git) -> https://host/owner/name/blob/<branch>; others have none.

    GitHub, GitLab and Gitea all serve files at /blob/<ref>/<path>; HEAD stands for the default branch.
    """
    if not _HTTP_REMOTE.match(clone_url):
        return ""
    base = redact_credentials(clone_url.rstrip("/").removesuffix(".git"))
    return f"{base}/blob/{branch or 'HEAD'}"


def check_sync_interval(seconds: int) -> int:
    """0 (no scheduled sync) or 60 seconds to a year."""
    if seconds != 0 and not MIN_SYNC_INTERVAL_SECONDS <= seconds <= MAX_SYNC_INTERVAL_SECONDS:
        raise InvalidArgument(
            f"sync_interval_seconds must be 0 (no scheduled sync) or {MIN_SYNC_INTERVAL_SECONDS} to"
            f" {MAX_SYNC_INTERVAL_SECONDS} (a year); {seconds} is neither"
        )
    return seconds


def check_visibility(value: Visibility | None) -> Visibility:
    if value is None:
        raise InvalidArgument("visibility must be public or private")
    return value


def check_subject(subject: str) -> str:
    subject = subject.strip()
    if not subject or len(subject) > MAX_NAME_CHARS:
        raise InvalidArgument(f"owner_subject must be 1 to {MAX_NAME_CHARS} characters")
    check_typed_text(subject, "owner_subject")
    return subject


def check_group(group: str) -> str:
    group = group.strip()
    if not group or len(group) > MAX_NAME_CHARS:
        raise InvalidArgument(f"a group name has 1 to {MAX_NAME_CHARS} characters")
    check_typed_text(group, "group name")
    return group


def related_limit(limit: int) -> int:
    if limit < 0:
        raise InvalidArgument("limit must not be negative")
    return min(limit or DEFAULT_RELATED_LIMIT, MAX_RELATED_LIMIT)
