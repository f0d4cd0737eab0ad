"""Admitting a clone URL just before git contacts it: its scheme and every address its host resolves
to against the clone policy (domain/clone_urls.py), and git held to what was checked.

Held, because git resolves the name again and follows what it is told: an https remote is pinned
to the checked addresses (`http.curloptResolve`) and may not redirect (`http.followRedirects`);
an ssh remote is pinned with `-o HostName=<address>` (the host key still checked under the name);
GIT_ALLOW_PROTOCOL names the URL's scheme only. A git:// remote (off by default) is not pinned.

A remote that cannot be read answers one fixed message (FetchFailed): git's own words would tell
whoever registers a URL whether a port is open. They are in the server log, under the trace id.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import shlex
import socket

import msgspec

from cograph_repodocs.domain.clone_urls import ClonePolicy, IPAddress, Remote, parse_remote
from cograph_repodocs.domain.rules import redact_credentials
from cograph_repodocs.git import GitError
from cograph_telemetry import current_trace_id

log = logging.getLogger(__name__)

# Longest wait for the resolver: it runs in a thread, and a name server that never answers must
# not hold a registration for the resolver's own minutes of retries.
RESOLVE_SECONDS = 10.0
FETCH_FAILED = "the repository could not be fetched: check the URL and that the server can reach it"
NOT_AUTHORIZED = (
    "the repository's server refused access: it wants credentials that the server's credentials file"
    " (COGRAPH_REPODOCS__CREDENTIALS_FILE) does not have for this URL, or has but the server refuses"
)
HOST_KEY_REFUSED = (
    "the repository's SSH server showed a host key that is not in the known_hosts of its entry in the"
    " credentials file (COGRAPH_REPODOCS__CREDENTIALS_FILE)"
)
# What git, curl and ssh say when the server wants credentials or refuses the ones given.
_AUTHENTICATION_SIGNS = (
    "Authentication failed",
    "could not read Username",
    "could not read Password",
    "terminal prompts disabled",
    "Permission denied (publickey",
    "returned error: 401",
    "returned error: 403",
)


class FetchFailed(GitError):
    """A remote could not be read (unresolvable, unreachable, refused, not a repository, too slow)."""

    def __init__(self, message: str = FETCH_FAILED) -> None:
        trace = current_trace_id()
        where = f" (git's message is in the server log, trace {trace})" if trace != "-" else ""
        super().__init__(message + where)

    @classmethod
    def of(cls, git_message: str) -> FetchFailed:
        """The fixed words for what git said: a server that wants credentials, or whose SSH host
        key is not the known one, is told apart (it says no more than that a server answered)."""
        if any(sign in git_message for sign in _AUTHENTICATION_SIGNS):
            return cls(NOT_AUTHORIZED)
        if "Host key verification failed" in git_message:
            return cls(HOST_KEY_REFUSED)
        return cls()


class Access(msgspec.Struct, frozen=True):
    """How one git command may reach an admitted URL: options before the subcommand, environment."""

    network: bool
    options: tuple[str, ...] = ()
    env: dict[str, str] = msgspec.field(default_factory=dict)
    remote: Remote | None = None
    """The network end, which the credentials file is matched against; None for a local source."""


LOCAL = Access(network=False, env={"GIT_ALLOW_PROTOCOL": "file"})


class Remotes:
    def __init__(
        self, policy: ClonePolicy, ssh_command: str, resolve_seconds: float = RESOLVE_SECONDS
    ) -> None:
        self.policy = policy
        self._ssh_command = ssh_command
        self._resolve_seconds = resolve_seconds

    async def admit(self, url: str) -> Access:
        """How git may reach `url`; InvalidArgument when the policy refuses it, FetchFailed when its
        host cannot be resolved. A path or file:// URL is local: nothing to resolve."""
        remote = parse_remote(url)
        if remote is None:
            return LOCAL
        self.policy.check_scheme(remote)
        addresses = await self._resolve(remote, url)
        self.policy.check_addresses(remote, addresses)
        return self._pinned(remote, addresses)

    async def _resolve(self, remote: Remote, url: str) -> list[IPAddress]:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._resolve_seconds):
                found = await loop.getaddrinfo(remote.host, remote.port, type=socket.SOCK_STREAM)
        except (OSError, TimeoutError, UnicodeError) as error:
            log.warning("could not resolve the host of %s: %r", redact_credentials(url), error)
            raise FetchFailed() from None
        addresses = []
        for *_, sockaddr in found:
            # A link-local IPv6 address comes with its zone (fe80::1%eth0): the address is what counts.
            addresses.append(ipaddress.ip_address(str(sockaddr[0]).partition("%")[0]))
        if not addresses:
            log.warning("the host of %s resolved to no address", redact_credentials(url))
            raise FetchFailed()
        return list(dict.fromkeys(addresses))

    def _pinned(self, remote: Remote, addresses: list[IPAddress]) -> Access:
        env = {"GIT_ALLOW_PROTOCOL": remote.scheme}
        options: tuple[str, ...] = ()
        literal = remote.address is not None  # nothing to resolve again
        if remote.scheme in ("http", "https"):
            options = ("-c", "http.followRedirects=false")
            if not literal:
                shown = ",".join(f"[{a}]" if a.version == 6 else str(a) for a in addresses)
                options += ("-c", f"http.curloptResolve={remote.host}:{remote.port}:{shown}")
        elif remote.scheme == "ssh" and not literal:
            # ssh takes one HostName: the first address, which it would have tried first itself.
            alias = remote.host if remote.port == 22 else f"[{remote.host}]:{remote.port}"
            pins = ("-o", f"HostName={addresses[0]}", "-o", f"HostKeyAlias={alias}")
            env["GIT_SSH_COMMAND"] = f"{self._ssh_command} {shlex.join(pins)}"
        return Access(network=True, options=options, env=env, remote=remote)
