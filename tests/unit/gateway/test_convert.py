"""Protobuf to REST: what a repository shows depends on who asks."""

from __future__ import annotations

import pytest

from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_gateway.convert import repository_from_pb


def _repository(clone_url: str = "", checkout_path: str = "") -> rpb.Repository:
    repository = rpb.Repository(
        id="r1", ref=rpb.RepositoryRef(host="example.com", owner="acme", name="tools")
    )
    if clone_url:
        repository.clone_url = clone_url
    else:
        repository.checkout_path = checkout_path
    return repository


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme/tools.git",
        "HTTP://git.internal/acme/tools",
        "ssh://git@example.com/acme/tools.git",
        "git://example.com/acme/tools.git",
        "git@github.com:acme/tools.git",
    ],
)
def test_a_remote_clone_url_is_shown_to_every_reader(url: str) -> None:
    assert repository_from_pb(_repository(clone_url=url), show_server_paths=False).clone_url == url


@pytest.mark.parametrize("url", ["file:///srv/git/tools", "file://localhost/srv/git/tools", "/srv/git/tools"])
def test_a_clone_url_naming_a_server_directory_is_shown_to_administrators_only(url: str) -> None:
    assert repository_from_pb(_repository(clone_url=url), show_server_paths=False).clone_url is None
    assert repository_from_pb(_repository(clone_url=url), show_server_paths=True).clone_url == url


def test_a_checkout_path_is_shown_to_administrators_only() -> None:
    repository = _repository(checkout_path="/srv/checkouts/tools")
    assert repository_from_pb(repository, show_server_paths=False).checkout_path is None
    assert repository_from_pb(repository, show_server_paths=True).checkout_path == "/srv/checkouts/tools"
