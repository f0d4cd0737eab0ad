"""Which network a clone URL may reach: a pure decision, taken on what git itself would contact.

A clone URL comes from any signed-in user, and git connects wherever it points: to the
database's port on loopback, to the cloud's metadata address, to any host of the internal
network, and its error message then says whether the port is open. So a URL is read the way
git reads it (scheme URL, scp-like `user@host:path`, local path, remote helper), its scheme
must be allowed (https and ssh by default), and every address its host resolves to must be a
public one unless an administrator allowed that host or network. Resolving is the caller's
I/O (checkouts.py, just before git runs); everything here is decided without any.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Iterable, Sequence

import msgspec

from cograph_errors import InvalidArgument

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

SCHEMES_SETTING = "COGRAPH_REPODOCS__CLONE_ALLOWED_SCHEMES"
HOSTS_SETTING = "COGRAPH_REPODOCS__CLONE_ALLOWED_HOSTS"
CREDENTIALS_SETTING = "COGRAPH_REPODOCS__CREDENTIALS_FILE"

# The network schemes git speaks, under the name GIT_ALLOW_PROTOCOL knows them by.
_SCHEMES = {
    "https": "https",
    "http": "http",
    "ssh": "ssh",
    "git+ssh": "ssh",  # deprecated spellings git still takes for ssh
    "ssh+git": "ssh",
    "git": "git",
}
DEFAULT_PORTS = {"https": 443, "http": 80, "ssh": 22, "git": 9418}

# git's own tests, in order (transport.c): `<helper>::<address>` runs git-remote-<helper>;
# `<scheme>://` is a URL; a ':' before any '/' is scp-like ssh; anything else is a local path.
_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", re.DOTALL)
# A host name as DNS writes it. Anything else (a '%', a '\', an '@', a zone id) is a spelling two
# parsers may read differently (curl, ssh, the resolver): refused rather than guessed at.
_AMBIGUOUS = re.compile(r"[?#\\\s\x00-\x1f\x7f]")
_HOST_NAME = re.compile(r"^[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_.])?$")


class Remote(msgspec.Struct, frozen=True):
    """The network end of a clone URL, as git would contact it."""

    scheme: str
    """https, http, ssh (scp-like and git+ssh included) or git: GIT_ALLOW_PROTOCOL's names."""
    host: str
    """Lower case; an IPv6 address without its brackets."""
    port: int
    path: str = ""
    """The repository's path on the host, without its leading '/' (acme/api.git)."""
    user: str = ""
    """The user name before the '@', when the URL names one (git@ of an ssh URL)."""
    password: bool = False
    """Whether the URL carries a password or token after the user name (user:secret@)."""

    @property
    def address(self) -> IPAddress | None:
        """The host when it is written as an IP address (nothing to resolve, nothing to pin)."""
        try:
            return ipaddress.ip_address(self.host)
        except ValueError:
            return None


def _refuse_shape(why: str) -> InvalidArgument:
    return InvalidArgument(
        f"clone_url {why}: give an https or ssh URL (e.g. https://github.com/acme/api.git or"
        " git@github.com:acme/api.git)"
    )


def parse_remote(url: str) -> Remote | None:
    """The remote host git would contact for `url`; None for a source on the server's own disk
    (an absolute path or a file:// URL, whose registration the gateway leaves to administrators).
    InvalidArgument for what is neither, or is written so that the host cannot be told for sure."""
    if _HELPER.match(url):
        helper = url.split("::", 1)[0]
        raise _refuse_shape(f"names a git remote helper ({helper}::), which is not allowed")
    match = _URL.match(url)
    if match:
        scheme = match.group(1).lower()
        if scheme == "file":
            return None
        if scheme not in _SCHEMES:
            raise _refuse_shape(f"uses the scheme {scheme!r}, which is not allowed")
        return _scheme_remote(_SCHEMES[scheme], match.group(2))
    colon, slash = url.find(":"), url.find("/")
    if colon != -1 and (slash == -1 or colon < slash):
        return _scp_remote(url)
    if url.startswith("/"):
        return None
    raise _refuse_shape(f"{url!r} is neither a URL nor an absolute path")


def _scheme_remote(scheme: str, rest: str) -> Remote:
    authority, _, path = rest.partition("/")
    if scheme not in ("http", "https"):
        # git decodes %-escapes of ssh:// and git:// URLs before it splits them (connect.c):
        # the host it contacts is the decoded one.
        authority = urllib.parse.unquote(authority)
    if _AMBIGUOUS.search(authority):
        # curl ends the host at '?' or '#' where git and ssh do not: https://127.0.0.1?@github.com/
        # is 127.0.0.1 to one reader and github.com to another.
        raise _refuse_shape("has a '?', '#', '\\' or space before its path")
    if authority.count("@") > 1:
        raise _refuse_shape("has more than one '@' before its path")
    userinfo, _, host_port = authority.rpartition("@")
    host, port = _split_port(host_port)
    user, colon, _ = userinfo.partition(":")
    return Remote(
        scheme,
        _check_host(host),
        port if port is not None else DEFAULT_PORTS[scheme],
        path=urllib.parse.unquote(path),
        user=user,
        password=bool(colon),
    )


def _scp_remote(url: str) -> Remote:
    """`[user@]host:path`, `[user@][ipv6]:path` or `[[user@]host[:port]]:path`, as git reads them
    (connect.c host_end): ssh to that host."""
    if url.startswith("[") or "@[" in url:
        opening = url.index("[")
        closing = url.find("]", opening)
        if closing == -1 or url[closing + 1 : closing + 2] != ":":
            raise _refuse_shape("has a '[' without the matching ']:'")
        user = url[:opening]
        inside = url[opening + 1 : closing]
        path = url[closing + 2 :]
        if user and (not user.endswith("@") or "@" in user[:-1]):
            raise _refuse_shape("has text before its '[host]' that is not a user name")
        if user and "@" in inside:
            raise _refuse_shape("has more than one '@' before its path")
        if inside.count("@") > 1:
            raise _refuse_shape("has more than one '@' before its path")
        named, _, inside = inside.rpartition("@")
        named = named or user[:-1]
        if _is_ipv6(inside):
            return _scp(inside, DEFAULT_PORTS["ssh"], path, named)
        host, port = _split_port(inside)
        return _scp(host, port if port is not None else DEFAULT_PORTS["ssh"], path, named)
    head, _, path = url.partition(":")
    if head.count("@") > 1:
        raise _refuse_shape("has more than one '@' before its path")
    named, _, host = head.rpartition("@")
    return _scp(host, DEFAULT_PORTS["ssh"], path, named)


def _scp(host: str, port: int, path: str, userinfo: str) -> Remote:
    # ssh takes no password from a URL, but one written there is a secret all the same.
    user, colon, _ = userinfo.partition(":")
    return Remote("ssh", _check_host(host), port, path=path, user=user, password=bool(colon))


def check_no_credentials(remote: Remote) -> None:
    """InvalidArgument when the URL carries a secret: a password or token after a user name, or
    any user name of an http(s) URL (where a token is often given as the user name). An ssh user
    name (git@) is no secret. A URL is stored and shown; credentials are neither."""
    if remote.password or (remote.scheme in ("http", "https") and remote.user):
        raise InvalidArgument(
            "clone_url carries credentials (a user name, password or token before the '@'): register"
            " the URL without them. Tokens and SSH keys go in the server's credentials file, which an"
            f' administrator names with {CREDENTIALS_SETTING} (docs/operations.md, "Git credentials")'
        )


def _is_ipv6(text: str) -> bool:
    """An IPv6 address without a zone (fe80::1%eth0 names an interface of the server)."""
    if "%" in text:
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _split_port(host_port: str) -> tuple[str, int | None]:
    """host[:port] or [ipv6][:port]; the port 1 to 65535 when written."""
    if host_port.startswith("["):
        closing = host_port.find("]")
        if closing == -1:
            raise _refuse_shape("has a '[' without the matching ']'")
        host, rest = host_port[1:closing], host_port[closing + 1 :]
        if not _is_ipv6(host):
            raise _refuse_shape(f"has {host!r} in brackets, which is not an IPv6 address")
        if rest and not rest.startswith(":"):
            raise _refuse_shape("has text after its ']' that is not a port")
        port_text = rest[1:]
    else:
        host, _, port_text = host_port.partition(":")
    if not port_text:
        return host, None
    if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise _refuse_shape(f"has the port {port_text!r}, which is not a number from 1 to 65535")
    return host, int(port_text)


def _check_host(host: str) -> str:
    if _is_ipv6(host):
        return str(ipaddress.IPv6Address(host))
    lowered = host.lower()
    if not host or not _HOST_NAME.match(lowered):
        raise _refuse_shape(f"has the host {host!r}, which is not a plain host name or IP address")
    return lowered


def internal_kind(address: IPAddress) -> str | None:
    """What makes `address` one that a clone must not reach by default ("loopback", "private", ...),
    or None for a public address. An IPv6 address that stands for an IPv4 one (mapped, compatible,
    NAT64) is judged as that IPv4 address; one that tunnels to an IPv4 one (6to4, Teredo) is
    judged as both."""
    translated = _translated_ipv4(address)
    if translated is not None:
        return _kind(translated)
    for candidate in (address, *_tunnelled_ipv4(address)):
        kind = _kind(candidate)
        if kind is not None:
            return kind
    return None


def _kind(address: IPAddress) -> str | None:
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("unique-local", isinstance(address, ipaddress.IPv6Address) and address in _UNIQUE_LOCAL),
        ("site-local", isinstance(address, ipaddress.IPv6Address) and address.is_site_local),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
        # Shared (carrier-grade NAT), documentation, benchmarking, and the like: not on the internet.
        ("special-purpose", not address.is_global),
    )
    return next((kind for kind, matched in checks if matched), None)


_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _translated_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address a socket to `address` reaches, when the IPv6 address only stands for one."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    # :: and ::1 are IPv6's own unspecified and loopback addresses, not IPv4-compatible ones.
    if address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _tunnelled_ipv4(address: IPAddress) -> list[ipaddress.IPv4Address]:
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    found = [address.sixtofour] if address.sixtofour is not None else []
    return found + list(address.teredo or ())


def _plain(address: IPAddress) -> IPAddress:
    """The address a socket reaches: an IPv4-mapped (or NAT64...) IPv6 address is the IPv4 one."""
    return _translated_ipv4(address) or address


class ClonePolicy(msgspec.Struct, frozen=True):
    """What clone URLs may reach: their schemes, and the internal hosts and networks allowed."""

    schemes: frozenset[str] = frozenset({"https", "ssh"})
    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def of(cls, schemes: Iterable[str], allowed_hosts: Iterable[str]) -> ClonePolicy:
        """From the settings: each allowed host is a host name, an IP address or a CIDR network."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for given in allowed_hosts:
            entry = given.strip().lower()
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                if not _HOST_NAME.match(entry.rstrip(".")):
                    raise ValueError(
                        f"{HOSTS_SETTING}: {given!r} is not a host name, address or CIDR"
                    ) from None
                hosts.add(entry.rstrip("."))
        return cls(frozenset(s.lower() for s in schemes), frozenset(hosts), tuple(networks))

    def check_scheme(self, remote: Remote) -> None:
        if remote.scheme not in self.schemes:
            allowed = " or ".join(sorted(self.schemes)) or "no scheme at all"
            raise InvalidArgument(
                f"clone URLs must use {allowed} (this one uses {remote.scheme}); an administrator can"
                f" allow other schemes with {SCHEMES_SETTING}"
            )

    def allows_host(self, remote: Remote) -> bool:
        """Whether an administrator allowed this host by name, whatever it resolves to."""
        return remote.host.rstrip(".") in self.hosts

    def check_addresses(self, remote: Remote, addresses: Sequence[IPAddress]) -> None:
        """InvalidArgument when any address the host resolves to is internal and not allowed: git
        (or curl, or ssh) may connect to any one of them."""
        if self.allows_host(remote):
            return
        for address in addresses:
            kind = internal_kind(address)
            if kind is None or any(_plain(address) in network for network in self.networks):
                continue
            # A name's address stays unsaid: it would map the internal network for whoever asks.
            what = (
                f"is an internal address ({kind})"
                if remote.address is not None
                else f"resolves to an internal address ({kind})"
            )
            shown = f"[{remote.host}]" if ":" in remote.host else remote.host
            raise InvalidArgument(
                f"the clone URL's host {shown} {what}; an administrator can allow it with {HOSTS_SETTING}"
            )
