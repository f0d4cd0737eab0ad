"""The git credentials file, read and matched without I/O: which token or SSH key (if any) a clone
URL's remote is read with.

The file is TOML (an administrator's secret store writes it; a Kubernetes Secret mounts it):

    [[https]]
    host = "github.com"
    path = "acme"                  # optional: an owner, or owner/repository, prefix
    username = "x-access-token"    # optional
    token = "ghp_..."

    [[ssh]]
    host = "gitlab.corp"
    private_key = \"\"\"-----BEGIN OPENSSH PRIVATE KEY----- ... \"\"\"
    known_hosts = "gitlab.corp ssh-ed25519 AAAA..."   # required: host keys are verified

    [[webhooks]]
    host = "github.com"            # the push webhooks of this host's repositories
    secret = "..."                 # what the host signs its deliveries with

An entry matches a remote of its kind (https entries http(s) URLs, ssh entries ssh ones) on the same
host whose path starts with the entry's path, segment by segment; the longest path wins. Every
secret is a `Secret`, whose repr shows nothing: no log line, error or repr of an entry prints one.
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from typing import Any

import msgspec

from cograph_repodocs.domain.clone_urls import Remote

DEFAULT_USERNAME = "x-access-token"
_HOST_NAME = re.compile(r"^[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_.])?$")
# What the credential helper protocol (key=value lines) and an ssh key file cannot carry.
_LINE_BREAK = re.compile(r"[\r\n\x00]")


class CredentialsError(ValueError):
    """The credentials file cannot be used; the message names the entry, never a secret."""


class Secret:
    """A credential's text, shown as *** by repr and str: only reveal() gives it."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    def reveal(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)


class HttpsCredential(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    host: str
    token: Secret
    path: str = ""
    username: str = DEFAULT_USERNAME


class SshCredential(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    host: str
    private_key: Secret
    known_hosts: str
    path: str = ""


class WebhookSecret(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    host: str
    secret: Secret


Credential = HttpsCredential | SshCredential


class CredentialsFile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    https: list[HttpsCredential] = msgspec.field(default_factory=list)
    ssh: list[SshCredential] = msgspec.field(default_factory=list)
    webhooks: list[WebhookSecret] = msgspec.field(default_factory=list)

    def webhook_secret(self, host: str) -> Secret | None:
        """What deliveries about `host`'s repositories are signed with; None when it has none."""
        return next((entry.secret for entry in self.webhooks if entry.host == host), None)

    def match(self, remote: Remote) -> Credential | None:
        """The entry a remote is read with: of its kind, on its host, with the longest path that
        starts the remote's path; None when none does."""
        entries: list[HttpsCredential] | list[SshCredential]
        if remote.scheme in ("http", "https"):
            entries = self.https
        elif remote.scheme == "ssh":
            entries = self.ssh
        else:
            return None
        path = segments(remote.path)
        best: Credential | None = None
        for entry in entries:
            prefix = segments(entry.path)
            matches = entry.host == remote.host and path[: len(prefix)] == prefix
            if matches and (best is None or len(prefix) > len(segments(best.path))):
                best = entry
        return best


EMPTY = CredentialsFile()


def segments(path: str) -> tuple[str, ...]:
    """A repository path as compared: segments, without case (hosts treat owners so) or `.git`."""
    lowered = path.strip().strip("/").lower().removesuffix(".git")
    return tuple(part for part in lowered.split("/") if part)


def _decode(kind: type, value: Any) -> Any:
    if kind is Secret and isinstance(value, str):
        return Secret(value)
    raise TypeError("Expected `str`")  # msgspec adds where


def parse(text: str) -> CredentialsFile:
    """The credentials in a TOML document; CredentialsError saying what is wrong and where (an
    entry by its kind, number and host), never quoting a value."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CredentialsError(f"not valid TOML: {error}") from None
    try:
        parsed = msgspec.convert(data, CredentialsFile, dec_hook=_decode)
    except msgspec.ValidationError as error:
        raise CredentialsError(str(error)) from None
    https = [_checked_https(i, entry) for i, entry in enumerate(parsed.https)]
    ssh = [_checked_ssh(i, entry) for i, entry in enumerate(parsed.ssh)]
    webhooks = [_checked_webhook(i, entry) for i, entry in enumerate(parsed.webhooks)]
    hosts = [entry.host for entry in webhooks]
    for host in hosts:
        if hosts.count(host) > 1:
            raise CredentialsError(f"two [[webhooks]] entries for host {host}: keep one")
    for kind, entries in (("https", https), ("ssh", ssh)):
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for entry in entries:
            key = (entry.host, segments(entry.path))
            if key in seen:
                where = f" path {entry.path!r}" if entry.path else ""
                raise CredentialsError(f"two [[{kind}]] entries for host {entry.host}{where}: keep one")
            seen.add(key)
    return CredentialsFile(https=https, ssh=ssh, webhooks=webhooks)


def _checked_host(kind: str, index: int, host: str) -> str:
    given = host.strip().lower().strip("[]")
    try:
        return str(ipaddress.ip_address(given))
    except ValueError:
        pass
    if not _HOST_NAME.match(given):
        raise CredentialsError(
            f"[[{kind}]] entry {index + 1}: host {host!r} is not a host name or IP address (no scheme,"
            " port or path)"
        )
    return given.rstrip(".")


def _checked_https(index: int, entry: HttpsCredential) -> HttpsCredential:
    host = _checked_host("https", index, entry.host)
    where = f"[[https]] entry {index + 1} (host {host})"
    token = entry.token.reveal()
    if not token.strip() or _LINE_BREAK.search(token):
        raise CredentialsError(f"{where}: the token is empty or has a line break")
    if not entry.username or _LINE_BREAK.search(entry.username):
        raise CredentialsError(f"{where}: the username is empty or has a line break")
    return HttpsCredential(
        host=host, token=Secret(token.strip()), path="/".join(segments(entry.path)), username=entry.username
    )


def _checked_webhook(index: int, entry: WebhookSecret) -> WebhookSecret:
    host = _checked_host("webhooks", index, entry.host)
    secret = entry.secret.reveal().strip()
    # GitHub asks for a high-entropy secret; a short one could be guessed from its signatures.
    if len(secret) < 16:
        raise CredentialsError(
            f"[[webhooks]] entry {index + 1} (host {host}): the secret is shorter than 16 characters"
        )
    return WebhookSecret(host=host, secret=Secret(secret))


def _checked_ssh(index: int, entry: SshCredential) -> SshCredential:
    host = _checked_host("ssh", index, entry.host)
    where = f"[[ssh]] entry {index + 1} (host {host})"
    key = entry.private_key.reveal().strip()
    if "PRIVATE KEY-----" not in key or "\0" in key:
        raise CredentialsError(f"{where}: private_key is not a PEM or OpenSSH private key")
    lines = [line.strip() for line in entry.known_hosts.splitlines() if line.strip()]
    if not [line for line in lines if not line.startswith("#")]:
        # No blind trust: without the host's key, ssh would have to accept whatever it is shown.
        raise CredentialsError(
            f"{where}: known_hosts is empty; give the host's keys as `ssh-keyscan` prints them"
        )
    return SshCredential(
        host=host,
        private_key=Secret(key + "\n"),
        known_hosts="\n".join(lines) + "\n",
        path="/".join(segments(entry.path)),
    )
