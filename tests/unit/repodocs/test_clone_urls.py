"""The clone policy as a pure decision: which host git would contact for a URL, which addresses are
internal, and what an administrator's allowed hosts and schemes widen. No address here is ever
connected to: the ranges are judged as values."""

from __future__ import annotations

import ipaddress

import pytest

from cograph_errors import InvalidArgument
from cograph_repodocs.domain.clone_urls import ClonePolicy, Remote, internal_kind, parse_remote

STRICT = ClonePolicy()


@pytest.mark.parametrize(
    ("url", "remote"),
    [
        ("https://github.com/acme/api.git", ("https", "github.com", 443)),
        ("HTTPS://GitHub.com:8443/acme/api", ("https", "github.com", 8443)),
        ("https://x-access-token:p%40ss@github.com/acme/api.git", ("https", "github.com", 443)),
        ("http://gitlab.corp/acme/api.git", ("http", "gitlab.corp", 80)),
        ("ssh://git@github.com/acme/api.git", ("ssh", "github.com", 22)),
        ("ssh://git@github.com:2222/acme/api.git", ("ssh", "github.com", 2222)),
        ("git+ssh://git@github.com/acme/api.git", ("ssh", "github.com", 22)),
        ("ssh+git://github.com/acme/api.git", ("ssh", "github.com", 22)),
        ("git://github.com/acme/api.git", ("git", "github.com", 9418)),
        # scp-like: a ':' before any '/' is ssh, as git reads it.
        ("git@github.com:acme/api.git", ("ssh", "github.com", 22)),
        ("github.com:acme/api.git", ("ssh", "github.com", 22)),
        ("git@[::1]:acme/api.git", ("ssh", "::1", 22)),
        ("[git@gitlab.corp:2222]:acme/api.git", ("ssh", "gitlab.corp", 2222)),
        ("[::1]:acme/api.git", ("ssh", "::1", 22)),
        # git decodes an ssh URL before it splits it: the host it contacts is the decoded one.
        ("ssh://127.0.0.%31/x.git", ("ssh", "127.0.0.1", 22)),
        ("https://[::ffff:127.0.0.1]:5432/x.git", ("https", "::ffff:7f00:1", 5432)),
        # Numbers the resolver reads as an address: a name here, judged after resolution.
        ("https://2130706433/x.git", ("https", "2130706433", 443)),
        # curl's user name ends at the '@': the host is the address after it.
        ("https://github.com%2f@127.0.0.1/x.git", ("https", "127.0.0.1", 443)),
    ],
)
def test_a_clone_url_names_the_host_git_would_contact(url: str, remote: tuple[str, str, int]) -> None:
    parsed = parse_remote(url)
    assert parsed is not None
    assert Remote(parsed.scheme, parsed.host, parsed.port) == Remote(*remote)


@pytest.mark.parametrize("url", ["/srv/git/api", "file:///srv/git/api", "FILE://localhost/srv/git/api"])
def test_a_path_or_file_url_is_local_and_resolves_nothing(url: str) -> None:
    """Registering one is the gateway's decision (administrators only): no network is reached."""
    assert parse_remote(url) is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ext::nc 127.0.0.1 5432", "remote helper (ext::)"),
        ("https::http://127.0.0.1:5432/x.git", "remote helper (https::)"),
        ("fd::3", "remote helper (fd::)"),
        ("ftp://example.com/x.git", "scheme 'ftp'"),
        ("gopher://example.com/x", "scheme 'gopher'"),
        ("relative/dir", "neither a URL nor an absolute path"),
        ("https://a@127.0.0.1@github.com/x.git", "more than one '@'"),
        ("ssh://user%40127.0.0.1@github.com/x.git", "more than one '@'"),
        ("https://127.0.0.%31/x.git", "not a plain host name"),
        # Where URL readers disagree on the host (curl ends it at '?' and '#'), nothing is guessed.
        ("https://127.0.0.1?@github.com/x.git", "a '?', '#'"),
        ("https://127.0.0.1#@github.com/x.git", "a '?', '#'"),
        ("https://127.0.0.1\\@github.com/x.git", "a '?', '#'"),
        ("ssh://127.0.0.1%3f@github.com/x.git", "a '?', '#'"),
        ("https://[fe80::1%25eth0]/x.git", "not an IPv6 address"),
        ("ssh://-oProxyCommand=x/y", "not a plain host name"),
        ("-oProxyCommand=x:y", "not a plain host name"),
        ("https:///x.git", "not a plain host name"),
        ("https://github.com:0/x.git", "port '0'"),
        ("https://github.com:65536/x.git", "port '65536'"),
        ("https://github.com:443x/x.git", "port '443x'"),
        ("git@[::1/x.git", "'[' without the matching"),
        ("[git@h]x:y", "'[' without the matching"),
    ],
)
def test_what_cannot_be_read_for_sure_is_refused(url: str, why: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_remote(url)
    assert why in refused.value.message
    assert "give an https or ssh URL" in refused.value.message


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),  # the cloud's metadata service
        ("100.64.0.1", "special-purpose"),  # carrier-grade NAT
        ("192.0.2.10", "private"),  # documentation
        ("198.18.0.1", "private"),  # benchmarking
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "private"),  # "this network"
        ("224.0.0.251", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fd12:3456::1", "unique-local"),
        ("fc00::1", "unique-local"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("2001:db8::1", "private"),  # documentation
        # IPv6 addresses that stand for an IPv4 one are judged as that one.
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.1.2.3", "private"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::127.0.0.1", "loopback"),  # IPv4-compatible
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("64:ff9b::7f00:1", "loopback"),
        # Tunnels: 6to4 of 127.0.0.1 and of 10.0.0.1; Teredo (its own range is not global).
        ("2002:7f00:1::1", "loopback"),
        ("2002:a00:1::1", "private"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "private"),
    ],
)
def test_internal_addresses_are_named_by_kind(address: str, kind: str) -> None:
    assert internal_kind(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize(
    "address",
    [
        "140.82.121.4",
        "8.8.8.8",
        "2606:4700::1111",
        "2a00:1450:4001::200e",
        "::ffff:140.82.121.4",
        "64:ff9b::808:808",
    ],
)
def test_public_addresses_are_not_internal(address: str) -> None:
    """A mapped or NAT64 form of a public IPv4 address is public: an IPv6-only cluster reaches
    GitHub through 64:ff9b::/96."""
    assert internal_kind(ipaddress.ip_address(address)) is None


def remote(url: str) -> Remote:
    parsed = parse_remote(url)
    assert parsed is not None
    return parsed


def admit(policy: ClonePolicy, url: str, addresses: tuple[str, ...]) -> None:
    policy.check_scheme(remote(url))
    policy.check_addresses(remote(url), [ipaddress.ip_address(a) for a in addresses])


def refusal(policy: ClonePolicy, url: str, *addresses: str) -> str:
    with pytest.raises(InvalidArgument) as refused:
        admit(policy, url, addresses)
    return refused.value.message


@pytest.mark.parametrize("url", ["http://127.0.0.1:5432/x.git", "git://github.com/acme/api.git"])
def test_by_default_only_https_and_ssh_are_allowed(url: str) -> None:
    message = refusal(STRICT, url, "140.82.121.4")
    assert message.startswith("clone URLs must use https or ssh (this one uses ")
    assert "COGRAPH_REPODOCS__CLONE_ALLOWED_SCHEMES" in message


def test_an_administrator_can_allow_http_and_git() -> None:
    policy = ClonePolicy.of(["https", "ssh", "http", "git"], [])
    for url in ("http://gitlab.example/x.git", "git://github.com/acme/api.git"):
        policy.check_scheme(remote(url))
    assert "(this one uses ssh)" in refusal(ClonePolicy.of(["https"], []), "git@github.com:a/b.git")


def test_a_public_host_passes_and_one_internal_address_among_public_ones_does_not() -> None:
    github = remote("https://github.com/acme/api.git")
    STRICT.check_addresses(github, [ipaddress.ip_address("140.82.121.4")])
    # curl or ssh may pick any of the addresses: one inside is enough to refuse.
    message = refusal(STRICT, "https://github.com/acme/api.git", "140.82.121.4", "10.0.0.7")
    assert message == (
        "the clone URL's host github.com resolves to an internal address (private); an administrator"
        " can allow it with COGRAPH_REPODOCS__CLONE_ALLOWED_HOSTS"
    )
    assert "10.0.0.7" not in message  # what a name resolves to inside stays unsaid


def test_an_address_written_in_the_url_is_named_as_such() -> None:
    assert refusal(STRICT, "https://127.0.0.1:5432/x.git", "127.0.0.1").startswith(
        "the clone URL's host 127.0.0.1 is an internal address (loopback)"
    )
    assert refusal(STRICT, "ssh://[::1]:22/x.git", "::1").startswith(
        "the clone URL's host [::1] is an internal address (loopback)"
    )


def test_allowed_host_names_pass_whatever_they_resolve_to() -> None:
    policy = ClonePolicy.of(["https", "ssh"], ["GitLab.Corp."])
    policy.check_addresses(remote("https://gitlab.corp/acme/api.git"), [ipaddress.ip_address("10.1.2.3")])
    policy.check_addresses(remote("git@gitlab.corp.:acme/api.git"), [ipaddress.ip_address("10.1.2.3")])
    # Another name on the same address is not allowed by it.
    assert "resolves to an internal address" in refusal(policy, "https://db.corp/x.git", "10.1.2.3")
    assert "resolves to an internal address" in refusal(policy, "https://sub.gitlab.corp/x.git", "10.1.2.3")


def test_allowed_networks_pass_their_addresses_only() -> None:
    policy = ClonePolicy.of(["https", "ssh"], ["10.20.0.0/16", "fd00:1::/64", "192.168.7.7"])
    for url, address in [
        ("https://gitlab.corp/x.git", "10.20.3.4"),
        ("https://gitlab.corp/x.git", "::ffff:10.20.3.4"),  # the same IPv4 address, mapped
        ("https://[fd00:1::5]/x.git", "fd00:1::5"),
        ("https://192.168.7.7/x.git", "192.168.7.7"),
    ]:
        policy.check_addresses(remote(url), [ipaddress.ip_address(address)])
    assert "(private)" in refusal(policy, "https://gitlab.corp/x.git", "10.21.0.1")
    assert "(loopback)" in refusal(policy, "https://gitlab.corp/x.git", "10.20.3.4", "127.0.0.1")
    assert "(unique-local)" in refusal(policy, "https://[fd00:2::5]/x.git", "fd00:2::5")


@pytest.mark.parametrize("entry", ["gitlab corp", "https://gitlab.corp", "10.0.0.0/33", "-oProxy", ""])
def test_an_allowed_host_that_is_neither_a_name_nor_a_network_is_refused_at_start(entry: str) -> None:
    with pytest.raises(ValueError, match="COGRAPH_REPODOCS__CLONE_ALLOWED_HOSTS"):
        ClonePolicy.of(["https"], [entry])
