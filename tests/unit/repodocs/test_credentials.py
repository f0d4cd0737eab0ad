"""The credentials file: what a clone URL is read with (longest path prefix of its host and kind),
what a bad file is told, that no message or repr shows a secret, that a changed file is read again
(and a broken one does not replace the last good one), and how a secret reaches one git command:
through files of a private directory, removed after it, never through its arguments or environment.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cograph_errors import InvalidArgument
from cograph_repodocs.credentials import Credentials
from cograph_repodocs.domain.clone_urls import Remote, check_no_credentials, parse_remote
from cograph_repodocs.domain.credentials import CredentialsError, HttpsCredential, parse
from cograph_repodocs.remotes import Access

TOKEN = "ghp_s3cr3t-for-tests"
KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA-not-a-real-key\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
SSH = "ssh -o BatchMode=yes"

FILE = f'''
[[https]]
host = "GitHub.com"
token = "{TOKEN}-host"

[[https]]
host = "github.com"
path = "/Acme/"
username = "oauth2"
token = "{TOKEN}-acme"

[[https]]
host = "github.com"
path = "acme/api.git"
token = "{TOKEN}-api"

[[ssh]]
host = "gitlab.corp"
path = "platform"
private_key = """{KEY}"""
known_hosts = "gitlab.corp ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostKey"
'''


def remote(url: str) -> Remote:
    parsed = parse_remote(url)
    assert parsed is not None
    return parsed


@pytest.mark.parametrize(
    ("url", "token"),
    [
        ("https://github.com/acme/api.git", "-api"),
        ("https://github.com/ACME/api", "-api"),  # owners without case, .git or not
        ("https://github.com/acme/web.git", "-acme"),
        ("https://github.com/acme-labs/api.git", "-host"),  # a prefix is whole segments
        ("https://github.com/other/x", "-host"),
        ("http://github.com/acme/web.git", "-acme"),  # https entries serve http too
        ("https://gitlab.corp/platform/x.git", None),  # an ssh entry serves no https URL
        ("https://api.github.com/acme/api.git", None),  # hosts are matched whole
        ("git://github.com/acme/api.git", None),
    ],
)
def test_the_longest_path_prefix_of_the_host_wins(url: str, token: str | None) -> None:
    found = parse(FILE).match(remote(url))
    if token is None:
        assert found is None
    else:
        assert isinstance(found, HttpsCredential)
        assert found.token.reveal() == TOKEN + token


@pytest.mark.parametrize(
    ("url", "found"),
    [
        ("git@gitlab.corp:platform/api.git", True),
        ("ssh://git@gitlab.corp:2222/platform/api.git", True),
        ("git@gitlab.corp:tools/api.git", False),
        ("git@github.com:acme/api.git", False),
    ],
)
def test_ssh_entries_match_ssh_urls(url: str, found: bool) -> None:
    assert (parse(FILE).match(remote(url)) is not None) is found


def test_no_repr_of_the_credentials_shows_a_secret() -> None:
    credentials = parse(FILE)
    shown = repr(credentials) + str(credentials.https[0]) + repr(credentials.ssh[0].private_key)
    assert TOKEN not in shown
    assert "not-a-real-key" not in shown
    assert "Secret('***')" in shown


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[[https]\nhost=", "not valid TOML"),
        (f'[[https]]\nhost = "github.com"\ntokn = "{TOKEN}"', "unknown field `tokn`"),
        ('[[https]]\nhost = "github.com"\ntoken = 12', "Expected `str`"),
        (f'[[https]]\nhost = "https://github.com"\ntoken = "{TOKEN}"', "is not a host name"),
        (f'[[https]]\nhost = "github.com"\ntoken = "{TOKEN}\\nmore"', "has a line break"),
        (f'[[https]]\nhost = "github.com"\ntoken = "{TOKEN}"\n' * 2, "two [[https]] entries"),
        (f'[[ssh]]\nhost = "h"\nprivate_key = "{TOKEN}"\nknown_hosts = "h ssh-ed25519 A"', "not a PEM"),
        (f'[[ssh]]\nhost = "h"\nprivate_key = """{KEY}"""\nknown_hosts = "# none"', "known_hosts is empty"),
        (f'[[ssh]]\nhost = "h"\nprivate_key = """{KEY}"""', "missing required field `known_hosts`"),
        ('[[webhooks]]\nhost = "h"\nsecret = "short"', "shorter than 16 characters"),
    ],
)
def test_a_bad_file_is_told_where_without_quoting_a_secret(text: str, said: str) -> None:
    with pytest.raises(CredentialsError) as error:
        parse(text)
    assert said in str(error.value), str(error.value)
    assert TOKEN not in str(error.value)
    assert "not-a-real-key" not in str(error.value)


@pytest.mark.parametrize(
    "url",
    [
        f"https://x-access-token:{TOKEN}@github.com/acme/api.git",
        f"https://{TOKEN}@github.com/acme/api.git",
        f"http://user:{TOKEN}@gitlab.corp/acme/api.git",
        f"ssh://git:{TOKEN}@gitlab.corp/acme/api.git",
    ],
)
def test_a_clone_url_carrying_credentials_says_where_they_go(url: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        check_no_credentials(remote(url))
    assert "COGRAPH_REPODOCS__CREDENTIALS_FILE" in refused.value.message
    assert TOKEN not in refused.value.message


@pytest.mark.parametrize(
    "url", ["https://github.com/acme/api.git", "git@github.com:acme/api.git", "ssh://git@h/x.git"]
)
def test_an_ssh_user_name_is_no_credential(url: str) -> None:
    check_no_credentials(remote(url))


def test_a_changed_file_is_read_again_and_a_broken_one_keeps_the_last(tmp_path: Path) -> None:
    path = tmp_path / "credentials.toml"
    credentials = Credentials(str(path), SSH)  # not there yet: none
    url = remote("https://github.com/acme/api.git")
    assert credentials.current().match(url) is None

    def token() -> str:
        found = credentials.current().match(url)
        assert isinstance(found, HttpsCredential)
        return found.token.reveal()

    path.write_text(f'[[https]]\nhost = "github.com"\ntoken = "{TOKEN}-1"\n')
    assert token() == f"{TOKEN}-1"

    fresh = tmp_path / "fresh"
    fresh.write_text(f'[[https]]\nhost = "github.com"\ntoken = "{TOKEN}-rotated"\n')
    os.replace(fresh, path)  # as a Kubernetes Secret's update swaps it
    assert token() == f"{TOKEN}-rotated"

    path.write_text("[[https]]\nhost = ")  # half written
    assert token() == f"{TOKEN}-rotated"


def test_a_broken_file_stops_the_service_at_start(tmp_path: Path) -> None:
    path = tmp_path / "credentials.toml"
    path.write_text(f'[[https]]\nhost = "github.com"\ntoken = "{TOKEN}"\nextra = 1\n')
    with pytest.raises(CredentialsError) as error:
        Credentials(str(path), SSH)
    assert str(path) in str(error.value)
    assert TOKEN not in str(error.value)


def on_disk(path: Path) -> tuple[str, int, int]:
    """A file's text, its mode and its directory's mode."""
    return path.read_text(), stat.S_IMODE(path.stat().st_mode), stat.S_IMODE(path.parent.stat().st_mode)


def gone(path: Path) -> bool:
    return not path.exists() and not path.parent.exists()


def file_of(tmp_path: Path) -> Credentials:
    path = tmp_path / "credentials.toml"
    path.write_text(FILE)
    return Credentials(str(path), SSH)


async def test_a_token_reaches_git_through_a_private_file_named_by_a_helper(tmp_path: Path) -> None:
    access = Access(
        network=True,
        options=("-c", "http.followRedirects=false"),
        remote=remote("https://github.com/acme/api.git"),
    )
    async with file_of(tmp_path).applied(access) as handed:
        assert TOKEN not in " ".join(handed.options) + repr(handed.env)
        helper = handed.options[-1]
        assert handed.options[-4:-1] == ("-c", "credential.helper=", "-c")  # no helper of the server's
        secret = Path(helper.split("cat ", 1)[1].split(";", 1)[0].strip("'"))
        assert on_disk(secret) == (f"username=x-access-token\npassword={TOKEN}-api\n", 0o600, 0o700)
    assert gone(secret)


async def test_a_key_reaches_ssh_with_strict_host_keys_ahead_of_other_options(tmp_path: Path) -> None:
    pinned = f"{SSH} -o HostName=10.1.2.3 -o HostKeyAlias=gitlab.corp"
    access = Access(
        network=True,
        env={"GIT_ALLOW_PROTOCOL": "ssh", "GIT_SSH_COMMAND": pinned},
        remote=remote("git@gitlab.corp:platform/api.git"),
    )
    async with file_of(tmp_path).applied(access) as handed:
        command = handed.env["GIT_SSH_COMMAND"]
        assert "not-a-real-key" not in command
        assert command.startswith("ssh -o IdentitiesOnly=yes -o IdentityFile=")
        assert "-o StrictHostKeyChecking=yes" in command
        assert "-o GlobalKnownHostsFile=/dev/null" in command
        assert command.endswith("-o BatchMode=yes -o HostName=10.1.2.3 -o HostKeyAlias=gitlab.corp")
        key = Path(command.split("IdentityFile=", 1)[1].split()[0])
        known = Path(command.split("UserKnownHostsFile=", 1)[1].split()[0])
        assert on_disk(key) == (KEY + "\n", 0o600, 0o700)
        assert on_disk(known)[0].startswith("gitlab.corp ssh-ed25519 ")
    assert gone(key)


async def test_a_remote_without_an_entry_is_left_as_it_was(tmp_path: Path) -> None:
    access = Access(network=True, remote=remote("https://example.org/x.git"))
    async with file_of(tmp_path).applied(access) as handed:
        assert handed is access
