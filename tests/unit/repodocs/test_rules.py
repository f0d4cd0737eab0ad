"""Input rules of the repodocs service, and running git."""

from __future__ import annotations

from pathlib import Path

import pytest

from cograph_errors import MAX_RELATED_LIMIT, InvalidArgument
from cograph_repodocs.domain import rules
from cograph_repodocs.git import Git, GitError


def test_refs_are_one_path_segment_each() -> None:
    assert rules.check_ref(" github.com ", "acme", "api.v2") == rules.Ref("github.com", "acme", "api.v2")
    assert str(rules.check_ref("git.example.com:8443", "a-b", "c_d")) == "git.example.com:8443/a-b/c_d"
    for host, owner, name in [
        ("", "a", "b"),
        ("h/x", "a", "b"),
        ("h", "a/b", "c"),
        ("h", "a", ".."),
        ("h", "a", ""),
    ]:
        with pytest.raises(InvalidArgument):
            rules.check_ref(host, owner, name)


@pytest.mark.parametrize("branch", ["main", "release/1.2", "feature-x"])
def test_valid_branches(branch: str) -> None:
    assert rules.check_branch(branch) == branch


@pytest.mark.parametrize("branch", ["-x", "a..b", "a b", "x.lock", "a~1", "a:b", "/a", "a/", "@{-1}"])
def test_invalid_branches(branch: str) -> None:
    with pytest.raises(InvalidArgument, match="not a valid branch name"):
        rules.check_branch(branch)


def test_clone_urls_and_checkout_paths() -> None:
    assert rules.check_clone_url(" file:///srv/repo ") == "file:///srv/repo"
    for url, message in [
        ("", "empty"),
        ("--upload-pack=evil", "must not start with '-'"),
        ("a\nb", "not a URL"),
    ]:
        with pytest.raises(InvalidArgument, match=message):
            rules.check_clone_url(url)
    assert rules.check_checkout_path("/srv/checkout") == "/srv/checkout"
    for path, message in [
        ("srv/checkout", "must be absolute"),
        (" ", "empty"),
        ("/srv/a\x01b", "control character"),
    ]:
        with pytest.raises(InvalidArgument, match=message):
            rules.check_checkout_path(path)


def test_web_urls_are_derived_from_http_remotes_without_credentials() -> None:
    assert (
        rules.derive_web_url("https://github.com/acme/api.git", "") == "https://github.com/acme/api/blob/HEAD"
    )
    assert rules.derive_web_url("https://user:secret@git.host/a/b", "dev") == "https://git.host/a/b/blob/dev"
    assert rules.derive_web_url("git@github.com:acme/api.git", "main") == ""
    assert rules.derive_web_url("/srv/repo", "main") == ""
    assert (
        rules.check_web_url("https://github.com/acme/api/blob/main/")
        == "https://github.com/acme/api/blob/main"
    )
    with pytest.raises(InvalidArgument):
        rules.check_web_url("javascript:alert(1)")


def test_related_limit_defaults_to_three_and_is_capped() -> None:
    assert rules.related_limit(0) == 3
    assert rules.related_limit(7) == 7
    assert rules.related_limit(10_000) == MAX_RELATED_LIMIT
    with pytest.raises(InvalidArgument):
        rules.related_limit(-1)


async def test_git_failures_carry_gits_message(tmp_path: Path) -> None:
    with pytest.raises(GitError, match=r"git rev-parse failed: fatal: not a git repository"):
        await Git(30).run("-C", str(tmp_path), "rev-parse", "HEAD")


async def test_git_is_killed_at_its_timeout(tmp_path: Path) -> None:
    # A shell alias is the one way to make git itself wait.
    with pytest.raises(GitError, match=r"git slow took longer than 0.3 s"):
        await Git(0.3).run("-c", "alias.slow=!sleep 3", "slow", cwd=tmp_path)
