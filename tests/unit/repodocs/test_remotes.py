"""Admitting a clone URL with the real resolver (loopback names and numbers only, nothing is
connected to): refused inside by default, and held to the checked addresses when allowed."""

from __future__ import annotations

import pytest

from cograph_errors import InvalidArgument
from cograph_repodocs.domain.clone_urls import ClonePolicy
from cograph_repodocs.remotes import FETCH_FAILED, FetchFailed, Remotes

SSH = "ssh -o BatchMode=yes"
STRICT = Remotes(ClonePolicy(), SSH)
LOOPBACK_ALLOWED = Remotes(ClonePolicy.of(["https", "ssh", "http"], ["localhost", "127.0.0.0/8", "::1"]), SSH)


@pytest.mark.parametrize(
    "url",
    [
        "https://localhost:5432/x.git",
        "ssh://git@localhost:5432/x.git",
        "git@localhost:x.git",
        "https://127.0.0.1:5432/x.git",
        "https://[::1]:5432/x.git",
        "https://[::ffff:127.0.0.1]:5432/x.git",
        # Spellings of 127.0.0.1 that the resolver (and curl) accept: judged by what they resolve to.
        "https://2130706433:5432/x.git",
        "https://0x7f.1:5432/x.git",
        "https://127.1:5432/x.git",
    ],
)
async def test_loopback_is_refused_by_name_and_by_number(url: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        await STRICT.admit(url)
    assert "internal address (loopback)" in refused.value.message
    assert "COGRAPH_REPODOCS__CLONE_ALLOWED_HOSTS" in refused.value.message


async def test_an_allowed_name_is_pinned_to_the_addresses_checked() -> None:
    """git resolves the name again: pinned, a name that rebinds after the check cannot move it."""
    access = await LOOPBACK_ALLOWED.admit("https://localhost:5432/x.git")
    assert access.network
    assert access.env == {"GIT_ALLOW_PROTOCOL": "https"}
    assert access.options[:2] == ("-c", "http.followRedirects=false")
    pin = access.options[3]
    assert pin.startswith("http.curloptResolve=localhost:5432:")
    assert set(pin.rpartition(":5432:")[2].split(",")) <= {"127.0.0.1", "[::1]"}


async def test_an_allowed_address_needs_no_pin_but_still_no_redirect() -> None:
    access = await LOOPBACK_ALLOWED.admit("http://127.0.0.1:5432/x.git")
    assert access.options == ("-c", "http.followRedirects=false")
    assert access.env == {"GIT_ALLOW_PROTOCOL": "http"}


async def test_an_ssh_remote_is_pinned_and_its_host_key_still_checked_under_its_name() -> None:
    access = await LOOPBACK_ALLOWED.admit("ssh://git@localhost:2222/x.git")
    assert access.env["GIT_ALLOW_PROTOCOL"] == "ssh"
    command = access.env["GIT_SSH_COMMAND"]
    assert command.startswith(f"{SSH} -o HostName=")
    assert command.split("HostName=")[1].split()[0] in ("127.0.0.1", "::1")
    assert command.endswith("-o 'HostKeyAlias=[localhost]:2222'")  # quoted: the shell runs it
    scp = await LOOPBACK_ALLOWED.admit("git@localhost:x.git")
    assert scp.env["GIT_SSH_COMMAND"].endswith("-o HostKeyAlias=localhost")


async def test_a_local_source_resolves_nothing_and_may_use_files_only() -> None:
    for url in ("/srv/git/api", "file:///srv/git/api"):
        access = await STRICT.admit(url)
        assert not access.network
        assert access.options == ()
        assert access.env == {"GIT_ALLOW_PROTOCOL": "file"}


async def test_a_scheme_is_refused_before_anything_is_resolved() -> None:
    with pytest.raises(InvalidArgument, match=r"^clone URLs must use https or ssh \(this one uses http\)"):
        await STRICT.admit("http://no-such-host.invalid/x.git")


async def test_a_name_that_does_not_resolve_gets_the_fixed_words() -> None:
    with pytest.raises(FetchFailed) as failed:
        await STRICT.admit("https://no-such-host.invalid/x.git")
    assert str(failed.value).startswith(FETCH_FAILED)


async def test_a_resolver_that_runs_out_of_time_gets_the_fixed_words() -> None:
    """No budget at all: the lookup is abandoned at its first wait, as a silent name server's is."""
    with pytest.raises(FetchFailed):
        await Remotes(ClonePolicy(), SSH, resolve_seconds=0).admit("https://localhost/x.git")
