"""Protobuf to REST: what a repository shows depends on who asks."""

from __future__ import annotations

import pytest

from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_gateway.convert import repository_from_pb


def _repository(clone_url: str = "", checkout_path: str = "") -> rpb.Repository:
    repository = rpb.Repository(
        id="r1",
        ref=rpb.RepositoryRef(host="example.com", owner="acme", name="tools"),
        visibility=rpb.VISIBILITY_PRIVATE,
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


def test_an_enum_value_the_gateway_does_not_know_is_an_error_not_a_guess() -> None:
    """A job kind or status, a visibility or a document state from a newer or broken service is
    a 502 that says so; it was reported as an upload job, queued, or private."""
    from cograph.collections.v1 import collections_service_pb2 as cpb
    from cograph_gateway.convert import collection_from_pb, document_result_from_pb, job_from_pb
    from cograph_gateway.errors import Problem

    known = cpb.Job(id="j", collection_id="c", kind=cpb.JOB_KIND_EMBED, status=cpb.JOB_STATUS_RUNNING)
    assert (job_from_pb(known).kind, job_from_pb(known).status) == ("embed", "running")
    unknown: list[tuple[str, int, object]] = [
        ("job kind", 99, lambda: job_from_pb(cpb.Job(kind=99, status=cpb.JOB_STATUS_QUEUED))),  # type: ignore[arg-type]
        ("job status", 0, lambda: job_from_pb(cpb.Job(kind=cpb.JOB_KIND_UPLOAD))),
        ("visibility", 0, lambda: collection_from_pb(cpb.Collection(id="c", name="n"))),
        ("state", 42, lambda: document_result_from_pb(cpb.DocumentResult(source_key="k", state=42))),  # type: ignore[arg-type]
    ]
    for what, value, convert in unknown:
        with pytest.raises(Problem) as refused:
            convert()  # type: ignore[operator]
        assert refused.value.status == 502
        assert refused.value.detail == (
            f"a service behind the gateway answered a {what} this gateway does not know ({value})"
        )
    refused_document = cpb.DocumentResult(source_key="k", error=cpb.DocumentError(message="binary"))
    assert document_result_from_pb(refused_document).state is None
