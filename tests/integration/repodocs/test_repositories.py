"""Registering, finding, listing and granting repositories; every bad input is a clear status."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import pytest
from grpc import aio
from integration.repodocs.helpers import GitRepo, Running

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph_db import connect
from cograph_repodocs.stores.repositories import SQL


async def expect(code: grpc.StatusCode, fragment: str, call: Awaitable[object]) -> None:
    with pytest.raises(aio.AioRpcError) as error:
        await call
    assert error.value.code() == code, error.value.details()
    assert fragment in (error.value.details() or ""), error.value.details()


def registration(name: str = "api", **source: str) -> pb.RegisterRepositoryRequest:
    return pb.RegisterRepositoryRequest(
        ref=pb.RepositoryRef(host="github.com", owner="acme", name=name),
        visibility=pb.VISIBILITY_PRIVATE,
        owner_subject="alice",
        **source,
    )


async def test_register_find_list_and_grant(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# API\n"})
    stub = service.stub
    request = registration("api", clone_url=origin.root.as_uri(), default_branch="main")
    request.web_url = "https://github.com/acme/api/blob/main/"
    api = (await stub.RegisterRepository(request)).repository
    assert (api.ref.host, api.ref.owner, api.ref.name) == ("github.com", "acme", "api")
    assert api.clone_url == origin.root.as_uri()  # file:// works as well as a plain path
    assert (api.visibility, api.owner_subject, api.default_branch) == (pb.VISIBILITY_PRIVATE, "alice", "main")
    assert api.web_url == "https://github.com/acme/api/blob/main"
    assert api.last_sync.trigger == pb.SYNC_TRIGGER_REGISTRATION
    docs = (await stub.RegisterRepository(registration("docs", checkout_path=str(origin.root)))).repository
    assert docs.checkout_path == str(origin.root)
    web = registration("web", clone_url=str(origin.root))
    web.visibility = pb.VISIBILITY_PUBLIC
    web_repository = (await stub.RegisterRepository(web)).repository

    by_ref = await stub.GetRepository(
        pb.GetRepositoryRequest(ref=pb.RepositoryRef(host="github.com", owner="acme", name="api"))
    )
    assert by_ref.repository.id == api.id
    by_id = await stub.GetRepository(pb.GetRepositoryRequest(repository_id=docs.id))
    assert by_id.repository.ref.name == "docs"

    # Listing is limited to the ids given (the caller's readable scope) and paginated.
    scope = [api.id, docs.id, web_repository.id]
    first = await stub.ListRepositories(
        pb.ListRepositoriesRequest(repository_ids=scope, page=pb.Page(page_size=2))
    )
    assert [r.ref.name for r in first.repositories] == ["api", "docs"]
    rest = await stub.ListRepositories(
        pb.ListRepositoriesRequest(
            repository_ids=scope, page=pb.Page(page_size=2, page_token=first.next_page_token)
        )
    )
    assert [r.ref.name for r in rest.repositories] == ["web"]
    assert rest.next_page_token == ""
    only = await stub.ListRepositories(pb.ListRepositoriesRequest(repository_ids=[docs.id]))
    assert [r.id for r in only.repositories] == [docs.id]
    assert not (await stub.ListRepositories(pb.ListRepositoriesRequest())).repositories

    granted = await stub.AddRepositoryGrant(
        pb.AddRepositoryGrantRequest(repository_id=api.id, group=" research ")
    )
    assert list(granted.repository.group_grants) == ["research"]
    await stub.AddRepositoryGrant(pb.AddRepositoryGrantRequest(repository_id=api.id, group="support"))
    again = await stub.AddRepositoryGrant(
        pb.AddRepositoryGrantRequest(repository_id=api.id, group="research")
    )
    assert list(again.repository.group_grants) == ["research", "support"]
    access = {
        e.repository_id: e
        for e in (await stub.ListRepositoryAccess(pb.ListRepositoryAccessRequest())).entries
    }
    assert set(access) == set(scope)
    assert list(access[api.id].group_grants) == ["research", "support"]
    assert (access[api.id].visibility, access[api.id].owner_subject) == (pb.VISIBILITY_PRIVATE, "alice")
    assert access[web_repository.id].visibility == pb.VISIBILITY_PUBLIC
    assert access[api.id].ref.name == "api"
    removed = await stub.RemoveRepositoryGrant(
        pb.RemoveRepositoryGrantRequest(repository_id=api.id, group="research")
    )
    assert list(removed.repository.group_grants) == ["support"]


async def test_one_repository_access_by_name_in_any_letter_case(service: Running, tmp_path: Path) -> None:
    """A repository's access facts by name are its ListRepositoryAccess entry, whatever the case
    the name is asked in; a name nobody registered has no access, which is no error."""
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# API\n"})
    stub = service.stub
    request = registration("Api", checkout_path=str(origin.root))
    request.ref.owner = "Acme"
    api = (await stub.RegisterRepository(request)).repository
    await stub.RegisterRepository(registration("web", checkout_path=str(origin.root)))
    for group in ("support", "research"):
        await stub.AddRepositoryGrant(pb.AddRepositoryGrantRequest(repository_id=api.id, group=group))

    async def access_of(host: str, owner: str, name: str) -> pb.GetRepositoryAccessResponse:
        ref = pb.RepositoryRef(host=host, owner=owner, name=name)
        return await stub.GetRepositoryAccess(pb.GetRepositoryAccessRequest(ref=ref))

    async def listed() -> pb.RepositoryAccess:
        entries = (await stub.ListRepositoryAccess(pb.ListRepositoryAccessRequest())).entries
        return next(entry for entry in entries if entry.repository_id == api.id)

    found = await access_of("github.com", "Acme", "Api")
    assert found.HasField("access")
    assert found.access == await listed()
    assert (found.access.ref.host, found.access.ref.owner, found.access.ref.name) == (
        "github.com",
        "Acme",
        "Api",
    )
    assert (found.access.visibility, found.access.owner_subject) == (pb.VISIBILITY_PRIVATE, "alice")
    assert list(found.access.group_grants) == ["research", "support"]
    assert (await access_of("GitHub.COM", "acme", "API")).access == found.access
    assert not (await access_of("github.com", "acme", "nope")).HasField("access")
    assert not (await access_of("gitlab.com", "Acme", "Api")).HasField("access")

    await stub.RemoveRepositoryGrant(pb.RemoveRepositoryGrantRequest(repository_id=api.id, group="research"))
    await stub.AddRepositoryGrant(pb.AddRepositoryGrantRequest(repository_id=api.id, group="eng"))
    after = (await access_of("github.com", "acme", "api")).access
    assert list(after.group_grants) == ["eng", "support"]
    assert after == await listed()

    # A name no repository can have is refused as GetRepository(ref=...) refuses it.
    for host, owner, name in (
        ("github.com", "acme", ""),
        ("github.com", " ", "api"),
        ("", "acme", "api"),
        ("github.com", "a" * 201, "api"),
        ("github.com", "a/b", "api"),
    ):
        ref = pb.RepositoryRef(host=host, owner=owner, name=name)
        with pytest.raises(aio.AioRpcError) as by_name:
            await stub.GetRepository(pb.GetRepositoryRequest(ref=ref))
        with pytest.raises(aio.AioRpcError) as access:
            await stub.GetRepositoryAccess(pb.GetRepositoryAccessRequest(ref=ref))
        assert access.value.code() == by_name.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert access.value.details() == by_name.value.details()
    with pytest.raises(aio.AioRpcError) as no_ref:
        await stub.GetRepositoryAccess(pb.GetRepositoryAccessRequest())
    assert no_ref.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def _plan_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _plan_nodes(child)


async def test_access_by_name_is_one_index_lookup_whatever_the_number_of_repositories(
    service: Running, database: str
) -> None:
    """Authorizing one request must not cost a scan of every tenant's repositories: the lookup
    goes through the unique index on the name in any case, and the grants through their key."""
    connection = await connect(database)
    try:
        await connection.execute("SET search_path = repodocs, public")
        await connection.execute(
            "INSERT INTO repositories (host, owner, name, checkout_path, visibility, owner_subject)"
            " SELECT 'github.com', 'acme', 'repo' || i, '/srv/repo' || i, 'private', 'alice'"
            " FROM generate_series(1, 5000) AS i"
        )
        await connection.execute("INSERT INTO repository_grants SELECT id, 'eng' FROM repositories")
        await connection.execute("ANALYZE repositories, repository_grants")
        plan = await connection.fetchval(
            f"EXPLAIN (FORMAT JSON) {SQL.select_access_by_ref}", "GitHub.com", "ACME", "Repo42"
        )
    finally:
        await connection.close()
    scans = {
        (node["Node Type"], node["Relation Name"], node.get("Index Name"))
        for node in _plan_nodes(json.loads(plan)[0]["Plan"])
        if "Relation Name" in node
    }
    assert ("Index Scan", "repositories", "repositories_ref_any_case") in scans, scans
    assert not any(kind.startswith(("Seq Scan", "Bitmap")) for kind, _, _ in scans), scans


async def test_bad_input_is_a_clear_status_never_internal(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# API\n"})
    stub = service.stub
    invalid, missing = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND

    await expect(
        invalid, "exactly one of clone_url and checkout_path", stub.RegisterRepository(registration())
    )
    await expect(
        invalid, "cannot be read", stub.RegisterRepository(registration(clone_url=str(tmp_path / "nope")))
    )
    await expect(
        invalid,
        "has no branch 'gone'",
        stub.RegisterRepository(registration(clone_url=str(origin.root), default_branch="gone")),
    )
    await expect(
        invalid, "must not start with '-'", stub.RegisterRepository(registration(clone_url="--upload-pack=x"))
    )
    await expect(
        invalid, "must be absolute", stub.RegisterRepository(registration(checkout_path="relative/dir"))
    )
    await expect(
        invalid,
        "not an existing directory",
        stub.RegisterRepository(registration(checkout_path=str(tmp_path / "absent"))),
    )
    bad_ref = registration(checkout_path=str(origin.root))
    bad_ref.ref.owner = "a/b"
    await expect(invalid, "repository owner", stub.RegisterRepository(bad_ref))
    no_visibility = registration(checkout_path=str(origin.root))
    no_visibility.visibility = pb.VISIBILITY_UNSPECIFIED
    await expect(invalid, "visibility", stub.RegisterRepository(no_visibility))
    no_owner = registration(checkout_path=str(origin.root))
    no_owner.owner_subject = ""
    await expect(invalid, "owner_subject", stub.RegisterRepository(no_owner))
    bad_branch = registration(clone_url=str(origin.root), default_branch="a..b")
    await expect(invalid, "not a valid branch name", stub.RegisterRepository(bad_branch))

    repository = (await stub.RegisterRepository(registration(clone_url=str(origin.root)))).repository
    await expect(
        grpc.StatusCode.ALREADY_EXISTS,
        "github.com/acme/api is already registered",
        stub.RegisterRepository(registration(checkout_path=str(origin.root))),
    )

    unknown = str(uuid.uuid4())
    await expect(invalid, "is not a valid id", stub.GetRepository(pb.GetRepositoryRequest(repository_id="x")))
    await expect(invalid, "give a repository_id or a ref", stub.GetRepository(pb.GetRepositoryRequest()))
    await expect(
        missing, "does not exist", stub.GetRepository(pb.GetRepositoryRequest(repository_id=unknown))
    )
    await expect(
        missing,
        "not registered",
        stub.GetRepository(pb.GetRepositoryRequest(ref=pb.RepositoryRef(host="h.io", owner="o", name="n"))),
    )
    await expect(
        missing, "does not exist", stub.SyncRepository(pb.SyncRepositoryRequest(repository_id=unknown))
    )
    await expect(missing, "does not exist", stub.ListSyncs(pb.ListSyncsRequest(repository_id=unknown)))
    await expect(
        missing, "does not exist", stub.ListDocuments(pb.ListDocumentsRequest(repository_id=unknown))
    )
    await expect(missing, "does not exist", stub.GetDocsTree(pb.GetDocsTreeRequest(repository_id=unknown)))
    await expect(
        missing,
        "does not exist",
        stub.AddRepositoryGrant(pb.AddRepositoryGrantRequest(repository_id=unknown, group="g")),
    )
    await expect(
        invalid,
        "group name",
        stub.AddRepositoryGrant(pb.AddRepositoryGrantRequest(repository_id=repository.id)),
    )
    await expect(
        invalid,
        "page_token",
        stub.ListSyncs(pb.ListSyncsRequest(repository_id=repository.id, page=pb.Page(page_token="???"))),
    )
    await expect(
        invalid,
        "document kind",
        stub.ListDocuments(
            pb.ListDocumentsRequest(repository_id=repository.id, kinds=[pb.DOCUMENT_KIND_UNSPECIFIED])
        ),
    )
    await expect(
        missing,
        "does not exist",
        stub.GetDocument(pb.GetDocumentRequest(repository_id=repository.id, document_id=unknown)),
    )
    await expect(
        missing,
        "no docs page",
        stub.GetDocsPage(pb.GetDocsPageRequest(repository_id=repository.id, slug="x")),
    )
    await expect(invalid, "slug", stub.GetDocsPage(pb.GetDocsPageRequest(repository_id=repository.id)))
    await expect(
        missing,
        "does not exist",
        stub.GetChunk(pb.GetChunkRequest(repository_id=repository.id, chunk_id=unknown)),
    )
    await expect(
        invalid,
        "code node 'n' is not a valid id",
        stub.GetRelatedDocChunks(pb.GetRelatedDocChunksRequest(code_node_ids=["n"])),
    )
    await expect(
        invalid,
        "limit",
        stub.GetRelatedDocChunks(pb.GetRelatedDocChunksRequest(code_node_ids=[unknown], limit=-1)),
    )
    await expect(
        missing,
        "does not exist",
        stub.ReadFileRange(pb.ReadFileRangeRequest(repository_id=unknown, path="a.py")),
    )


async def test_a_repository_holds_at_most_a_hundred_group_grants(service: Running, tmp_path: Path) -> None:
    """Every request's access check reads every grant, so one owner cannot grow them unbounded."""
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# API\n"})
    api = (
        await service.stub.RegisterRepository(registration("api", checkout_path=str(origin.root)))
    ).repository
    for index in range(100):
        await service.stub.AddRepositoryGrant(
            pb.AddRepositoryGrantRequest(repository_id=api.id, group=f"g{index}")
        )
    await expect(
        grpc.StatusCode.FAILED_PRECONDITION,
        "at most 100 group grants",
        service.stub.AddRepositoryGrant(pb.AddRepositoryGrantRequest(repository_id=api.id, group="one-more")),
    )
    again = await service.stub.AddRepositoryGrant(
        pb.AddRepositoryGrantRequest(repository_id=api.id, group="g7")
    )
    assert len(again.repository.group_grants) == 100  # granting a group it has is no new grant


async def test_a_grant_to_a_repository_deleted_meanwhile_is_not_found(
    service: Running, tmp_path: Path, database: str
) -> None:
    """The grant's insert waits for a delete in progress, then finds the repository gone: a
    NOT_FOUND, not a foreign-key failure (INTERNAL)."""
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# API\n"})
    api = (
        await service.stub.RegisterRepository(registration("api", checkout_path=str(origin.root)))
    ).repository
    connection = await asyncpg.connect(database)
    try:
        deleting = connection.transaction()
        await deleting.start()
        await connection.execute("DELETE FROM repodocs.repositories WHERE id = $1", uuid.UUID(api.id))
        granting = asyncio.ensure_future(
            service.stub.AddRepositoryGrant(pb.AddRepositoryGrantRequest(repository_id=api.id, group="eng"))
        )
        await asyncio.sleep(0.5)  # past its existence check, waiting on the row lock
        await deleting.commit()
        await expect(grpc.StatusCode.NOT_FOUND, api.id, granting)
    finally:
        await connection.close()
