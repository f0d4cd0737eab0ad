"""A repository after registration: its visibility, branch and schedule changed, and its deletion
with every row kept of it and its managed checkout, also while a sync of it runs."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable
from pathlib import Path

import asyncpg
import grpc
import pytest
from grpc import aio
from integration.repodocs.helpers import SYNC_TIMEOUT, GitRepo, Running, running_service

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph_embeddings import EmbeddingProvider
from cograph_repodocs.application.syncs import DELETED
from cograph_settings import Settings

# Every table of the schema, with how many of its rows belong to repository $1.
OF_REPOSITORY = {
    "repositories": "SELECT count(*) FROM repodocs.repositories WHERE id = $1",
    "repository_grants": "SELECT count(*) FROM repodocs.repository_grants WHERE repository_id = $1",
    "repo_syncs": "SELECT count(*) FROM repodocs.repo_syncs WHERE repository_id = $1",
    "code_files": "SELECT count(*) FROM repodocs.code_files WHERE repository_id = $1",
    "code_nodes": "SELECT count(*) FROM repodocs.code_nodes WHERE repository_id = $1",
    "code_aliases": "SELECT count(*) FROM repodocs.code_aliases WHERE repository_id = $1",
    "repo_documents": "SELECT count(*) FROM repodocs.repo_documents WHERE repository_id = $1",
    "repo_document_chunks": "SELECT count(*) FROM repodocs.repo_document_chunks WHERE repository_id = $1",
    "repo_document_chunk_windows": (
        "SELECT count(*) FROM repodocs.repo_document_chunk_windows WHERE repository_id = $1"
    ),
    "repo_document_chunk_mentions": (
        "SELECT count(*) FROM repodocs.repo_document_chunk_mentions m"
        " JOIN repodocs.code_nodes n ON n.id = m.code_node_id WHERE n.repository_id = $1"
    ),
    "repo_term_stats": "SELECT count(*) FROM repodocs.repo_term_stats WHERE scope_id = $1",
    "repo_scope_stats": "SELECT count(*) FROM repodocs.repo_scope_stats WHERE scope_id = $1",
    "code_term_stats": "SELECT count(*) FROM repodocs.code_term_stats WHERE scope_id = $1",
    "code_scope_stats": "SELECT count(*) FROM repodocs.code_scope_stats WHERE scope_id = $1",
}
# A section longer than the model's input: its chunk is embedded window by window.
LONG = " ".join(f"word{i}" for i in range(450))


def project(name: str) -> dict[str, str]:
    """Docs that name code, a package that re-exports, a long section: a row in every table."""
    return {
        "README.md": f"# {name}\n\nBuild a `Field` with `make_field()`.\n\n## Long\n\n{LONG}\n",
        "docs/guide.md": f"# Guide to {name}\n\nCall `pkg.fields.make_field()` first.\n",
        "pkg/__init__.py": "from .fields import Field, make_field\n",
        "pkg/fields.py": "class Field:\n    pass\n\n\ndef make_field():\n    return Field()\n",
    }


async def expect(code: grpc.StatusCode, fragment: str, call: Awaitable[object]) -> str:
    with pytest.raises(aio.AioRpcError) as error:
        await call
    assert error.value.code() == code, error.value.details()
    details = error.value.details() or ""
    assert fragment in details, details
    return details


async def rows_of(database: str, repository_id: str) -> dict[str, int]:
    connection = await asyncpg.connect(database)
    try:
        return {
            table: await connection.fetchval(sql, uuid.UUID(repository_id))
            for table, sql in OF_REPOSITORY.items()
        }
    finally:
        await connection.close()


async def totals(database: str) -> dict[str, int]:
    connection = await asyncpg.connect(database)
    try:
        return {
            table: await connection.fetchval(f"SELECT count(*) FROM repodocs.{table}")
            for table in OF_REPOSITORY
        }
    finally:
        await connection.close()


async def until_synced(service: Running, repository_id: str, count: int) -> list[pb.Sync]:
    """The repository's syncs once `count` of them ended (bounded by SYNC_TIMEOUT)."""
    deadline = time.monotonic() + SYNC_TIMEOUT
    while True:
        syncs = (await service.stub.ListSyncs(pb.ListSyncsRequest(repository_id=repository_id))).syncs
        ended = [s for s in syncs if s.status in (pb.SYNC_STATUS_SUCCESS, pb.SYNC_STATUS_ERROR)]
        if len(ended) >= count and len(ended) == len(syncs):
            return list(syncs)
        assert time.monotonic() < deadline, syncs
        await asyncio.sleep(0.1)


async def test_every_table_of_the_schema_is_counted(database: str, service: Running) -> None:
    connection = await asyncpg.connect(database)
    try:
        tables = {
            row["tablename"]
            for row in await connection.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'repodocs'")
        }
    finally:
        await connection.close()
    assert tables - {"schema_migrations"} == set(OF_REPOSITORY)


async def test_visibility_schedule_and_branch_change_and_a_new_branch_is_synced(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("main", {"README.md": "# Main\n\nThe main line.\n"})
    origin.git("checkout", "--quiet", "-b", "release")
    origin.commit("release", {"docs/release.md": "# Release\n\nOnly on the release branch.\n"})
    origin.git("checkout", "--quiet", "main")
    repository = await service.register("api", clone_url=str(origin.root))
    await until_synced(service, repository.id, 1)
    assert set(await service.documents(repository.id)) == {"README.md"}
    stub = service.stub

    changed = (
        await stub.UpdateRepository(
            pb.UpdateRepositoryRequest(
                repository_id=repository.id, visibility=pb.VISIBILITY_PUBLIC, sync_interval_seconds=120
            )
        )
    ).repository
    assert (changed.visibility, changed.sync_interval_seconds, changed.default_branch) == (
        pb.VISIBILITY_PUBLIC,
        120,
        "",
    )
    access = await stub.GetRepositoryAccess(pb.GetRepositoryAccessRequest(ref=repository.ref))
    assert access.access.visibility == pb.VISIBILITY_PUBLIC
    never = await stub.UpdateRepository(
        pb.UpdateRepositoryRequest(repository_id=repository.id, sync_interval_seconds=0)
    )
    assert never.repository.HasField("sync_interval_seconds")
    assert never.repository.sync_interval_seconds == 0
    default = await stub.UpdateRepository(
        pb.UpdateRepositoryRequest(repository_id=repository.id, default_sync_interval=True)
    )
    assert not default.repository.HasField("sync_interval_seconds")
    assert len((await stub.ListSyncs(pb.ListSyncsRequest(repository_id=repository.id))).syncs) == 1

    # A new branch is checked on the remote, then synced.
    await expect(
        grpc.StatusCode.INVALID_ARGUMENT,
        "has no branch 'nope'",
        stub.UpdateRepository(pb.UpdateRepositoryRequest(repository_id=repository.id, default_branch="nope")),
    )
    moved = await stub.UpdateRepository(
        pb.UpdateRepositoryRequest(repository_id=repository.id, default_branch="release")
    )
    assert moved.repository.default_branch == "release"
    syncs = await until_synced(service, repository.id, 2)
    assert (syncs[0].trigger, syncs[0].status) == (pb.SYNC_TRIGGER_MANUAL, pb.SYNC_STATUS_SUCCESS)
    assert set(await service.documents(repository.id)) == {"README.md", "docs/release.md"}
    # The same branch again is no change: no sync.
    await stub.UpdateRepository(
        pb.UpdateRepositoryRequest(repository_id=repository.id, default_branch="release")
    )
    assert len((await stub.ListSyncs(pb.ListSyncsRequest(repository_id=repository.id))).syncs) == 2


async def test_a_branch_changed_during_a_sync_is_synced_after_it(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("main", {"README.md": "# Main\n"})
    origin.git("checkout", "--quiet", "-b", "release")
    origin.commit("release", {"notes.md": "# Notes\n\nReleased.\n"})
    origin.git("checkout", "--quiet", "main")
    service.provider.gate = asyncio.Event()  # the registration's sync waits at its embedding step
    repository = await service.register("api", clone_url=str(origin.root))
    await stub_update(service, repository.id, default_branch="release")
    service.provider.gate.set()
    syncs = await until_synced(service, repository.id, 2)
    assert [s.trigger for s in syncs] == [pb.SYNC_TRIGGER_MANUAL, pb.SYNC_TRIGGER_REGISTRATION]
    assert set(await service.documents(repository.id)) == {"README.md", "notes.md"}


async def stub_update(service: Running, repository_id: str, **fields: object) -> pb.Repository:
    request = pb.UpdateRepositoryRequest(repository_id=repository_id, **fields)  # type: ignore[arg-type]
    return (await service.stub.UpdateRepository(request)).repository


async def test_bad_changes_are_refused_and_change_nothing(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# Local\n"})
    local = await service.register("local", checkout_path=str(origin.root))
    stub = service.stub
    cases = {
        "nothing to change": pb.UpdateRepositoryRequest(repository_id=local.id),
        "must be 0 (no scheduled sync) or 60": pb.UpdateRepositoryRequest(
            repository_id=local.id, sync_interval_seconds=59
        ),
        "visibility must be public or private": pb.UpdateRepositoryRequest(
            repository_id=local.id, visibility=pb.VISIBILITY_UNSPECIFIED
        ),
        "is not a valid branch name": pb.UpdateRepositoryRequest(
            repository_id=local.id, default_branch="a..b"
        ),
        "it tracks no branch": pb.UpdateRepositoryRequest(repository_id=local.id, default_branch="main"),
        "is not a valid id": pb.UpdateRepositoryRequest(repository_id="nope", sync_interval_seconds=60),
    }
    for fragment, request in cases.items():
        await expect(grpc.StatusCode.INVALID_ARGUMENT, fragment, stub.UpdateRepository(request))
    after = (await stub.GetRepository(pb.GetRepositoryRequest(repository_id=local.id))).repository
    assert (after.visibility, after.HasField("sync_interval_seconds")) == (pb.VISIBILITY_PRIVATE, False)
    missing = str(uuid.uuid4())
    await expect(
        grpc.StatusCode.NOT_FOUND,
        "does not exist",
        stub.UpdateRepository(pb.UpdateRepositoryRequest(repository_id=missing, sync_interval_seconds=60)),
    )
    await expect(
        grpc.StatusCode.NOT_FOUND,
        "does not exist",
        stub.DeleteRepository(pb.DeleteRepositoryRequest(repository_id=missing)),
    )


async def test_delete_removes_every_row_and_the_managed_checkout(
    service: Running, database: str, tmp_path: Path
) -> None:
    checkouts = Path(service.settings.repodocs.checkout_dir)
    kept_origin, gone_origin = GitRepo(tmp_path / "kept"), GitRepo(tmp_path / "gone")
    kept_origin.commit("first", project("Kept"))
    gone_origin.commit("first", project("Gone"))
    kept = await service.register("kept", clone_url=str(kept_origin.root))
    gone = await service.register("gone", clone_url=str(gone_origin.root))
    await until_synced(service, kept.id, 1)
    await until_synced(service, gone.id, 1)
    await service.stub.AddRepositoryGrant(pb.AddRepositoryGrantRequest(repository_id=gone.id, group="eng"))
    before_gone, before_totals = await rows_of(database, gone.id), await totals(database)
    assert all(before_gone.values()), before_gone  # every table holds some of it
    assert (checkouts / gone.id / "README.md").is_file()

    await service.stub.DeleteRepository(pb.DeleteRepositoryRequest(repository_id=gone.id))

    assert set((await rows_of(database, gone.id)).values()) == {0}
    after_totals = await totals(database)
    assert after_totals == {t: before_totals[t] - before_gone[t] for t in OF_REPOSITORY}  # the other kept
    assert not (checkouts / gone.id).exists()
    assert await asyncio.to_thread(lambda: [p.name for p in checkouts.iterdir()]) == [kept.id]  # none aside
    await expect(
        grpc.StatusCode.NOT_FOUND,
        "is not registered",
        service.stub.GetRepository(pb.GetRepositoryRequest(ref=gone.ref)),
    )
    # Its name is free again; the other repository still syncs.
    again = await service.register("gone", clone_url=str(gone_origin.root))
    assert again.id != gone.id
    assert (await service.sync(kept.id)).status == pb.SYNC_STATUS_SUCCESS


async def test_delete_while_a_sync_runs_stops_it_cleanly(
    service: Running, database: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A generated repository of a thousand files, deleted while its sync embeds: the sync stops,
    nothing is left or written again, the checkout is gone, and no error is logged."""
    origin = GitRepo(tmp_path / "origin")
    files = {f"docs/part{i // 100}/page{i}.md": f"# Page {i}\n\nAbout `thing{i}`.\n" for i in range(900)}
    files |= {f"src/mod{i}.py": f"def thing{i}():\n    return {i}\n" for i in range(100)}
    origin.commit("generated", files)
    caplog.set_level(logging.INFO, logger="cograph_repodocs")
    service.provider.gate = asyncio.Event()  # the sync waits at its embedding step
    repository = await service.register("generated", clone_url=str(origin.root))
    waiter = asyncio.ensure_future(service.sync(repository.id))  # a caller waiting for its end
    checkout = Path(service.settings.repodocs.checkout_dir) / repository.id
    deadline = time.monotonic() + SYNC_TIMEOUT
    while not (checkout / "src" / "mod99.py").exists():  # cloned, now held at embedding
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)

    began = time.monotonic()
    await service.stub.DeleteRepository(pb.DeleteRepositoryRequest(repository_id=repository.id))
    took = time.monotonic() - began
    service.provider.gate.set()
    # The caller learns why, whether its answer was read before the rows were gone or after.
    stopped = await asyncio.gather(waiter, return_exceptions=True)
    if isinstance(stopped[0], aio.AioRpcError):
        assert stopped[0].code() == grpc.StatusCode.NOT_FOUND, stopped[0].details()
        assert "was deleted during its sync" in (stopped[0].details() or "")
    else:
        assert isinstance(stopped[0], pb.Sync), stopped
        assert (stopped[0].status, stopped[0].error) == (pb.SYNC_STATUS_ERROR, DELETED)

    await asyncio.sleep(1.0)  # time for anything still running to write, were it to
    assert set((await rows_of(database, repository.id)).values()) == {0}
    assert not checkout.exists()
    assert not await asyncio.to_thread(lambda: any(Path(service.settings.repodocs.checkout_dir).iterdir()))
    problems = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert problems == [], [r.getMessage() for r in problems]
    assert any("is being deleted" in r.getMessage() for r in caplog.records)
    assert took < 10, took
    # No sync of it can start any more.
    await expect(
        grpc.StatusCode.NOT_FOUND,
        "does not exist",
        service.stub.SyncRepository(pb.SyncRepositoryRequest(repository_id=repository.id)),
    )


async def test_checkouts_of_repositories_deleted_elsewhere_go_when_the_service_starts(
    settings: Settings, database: str, embedder: EmbeddingProvider, tmp_path: Path
) -> None:
    """A replica sharing the checkout directory deleted a repository whose checkout another one
    made, or a removal was cut short: the next start removes what belongs to no repository."""
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# Kept\n"})
    checkouts = Path(settings.repodocs.checkout_dir)
    async with running_service(settings, database, embedder) as service:
        kept = await service.register("kept", clone_url=str(origin.root))
        await until_synced(service, kept.id, 1)
    stray = checkouts / str(uuid.uuid4())
    aside = checkouts / f".{uuid.uuid4()}.1a2b3c4d.deleted"
    partial = checkouts / f".{uuid.uuid4()}.1a2b3c4d.partial"  # a clone in progress elsewhere
    for directory in (stray, aside, partial):
        (directory / "src").mkdir(parents=True)
        (directory / "src" / "app.py").write_text("x = 1\n")
    (checkouts / "notes.txt").write_text("an operator's file\n")

    async with running_service(settings, database, embedder):
        left = await asyncio.to_thread(lambda: sorted(p.name for p in checkouts.iterdir()))
    assert left == sorted([kept.id, partial.name, "notes.txt"])
