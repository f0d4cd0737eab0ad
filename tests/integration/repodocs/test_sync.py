"""Syncs of a real git repository through the real gRPC server: the six counters at every step,
what is (not) embedded again, stable ids and slugs, re-linking, failures and concurrency."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import uuid
from pathlib import Path

import asyncpg
import grpc
import pytest
from grpc import aio
from integration.repodocs.helpers import SYNC_TIMEOUT, GitRepo, Running, counters, running_service

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph_embeddings import EmbeddingProvider
from cograph_settings import Settings

FIRST = {
    "README.md": "# Demo\n\nThe service starts with `Server.Start` and reads settings with `parse_config`.\n",
    "CONTRIBUTING.md": "# Contributing\n\nOpen a pull request; keep it small.\n",
    "docs/guide.md": (
        "# Guide\n\n## Install\n\nCall parse_config() first.\n\n## Run\n\nThen call `Server.Start`.\n"
    ),
    "docs/api.md": "# API\n\nSee `config.parse_config` and `Server` for the details.\n",
    # Matched by a rule (a .md file) but skipped: discovery reads it and finds a NUL byte.
    "docs/blob.md": "binary\x00data\n",
    "pkg/config.py": "def parse_config(path):\n    return {}\n",
    "server/server.go": (
        "package server\n\ntype Server struct{}\n\nfunc (s *Server) Start() error {\n\treturn nil\n}\n"
    ),
    "web/app.ts": "export function renderPage(): string {\n  return ''\n}\n",
}


async def node_ids(service: Running, repository_id: str, slug: str) -> dict[str, str]:
    """qualified name -> id of the code nodes a docs page mentions."""
    page = await service.stub.GetDocsPage(pb.GetDocsPageRequest(repository_id=repository_id, slug=slug))
    return {node.qualified_name: node.id for node in page.related_code}


async def test_six_counters_across_add_change_rename_delete_and_relink(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    first_commit = origin.commit("first", FIRST)
    repository = await service.register("demo", clone_url=str(origin.root))
    rid = repository.id
    probe = service.provider

    # First sync (the one registration queued, joined): everything is new.
    first = await service.sync(rid)
    assert first.status == pb.SYNC_STATUS_SUCCESS, first.error
    assert first.trigger == pb.SYNC_TRIGGER_REGISTRATION
    assert first.commit_sha == first_commit
    documents = await service.documents(rid)
    assert sorted(documents) == ["CONTRIBUTING.md", "README.md", "docs/api.md", "docs/guide.md"]
    chunks = sum(d.chunk_count for d in documents.values())
    assert counters(first) == (5, 4, chunks, 0, 0, 0)
    assert [(s.path, s.reason) for s in first.skipped] == [
        ("docs/blob.md", "binary file (contains a NUL byte)")
    ]
    # The module pkg.config (a Python file is a symbol of its own), parse_config, Server,
    # Server.Start, renderPage.
    assert first.code_nodes == 5
    # README: Server.Start, parse_config; guide: parse_config(), Server.Start; api: parse_config, Server.
    assert first.mentions == 6
    # Every chunk and every code node was embedded but the module, which carries no vector.
    assert len(probe.texts) == chunks + first.code_nodes - 1
    guide_nodes = await node_ids(service, rid, "guide")
    assert set(guide_nodes) == {"pkg.config.parse_config", "server.Server.Start"}

    # Unchanged: nothing is chunked, embedded or linked again.
    embedded = len(probe.texts)
    again = await service.sync(rid)
    assert again.trigger == pb.SYNC_TRIGGER_MANUAL
    assert counters(again) == (5, 0, 0, 4, 0, 0)
    assert len(probe.texts) == embedded
    assert (again.code_nodes, again.mentions) == (5, 6)
    assert await node_ids(service, rid, "guide") == guide_nodes

    # Change one, add one, rename one, delete one; edit code around a symbol that stays.
    origin.move("docs/api.md", "docs/reference.md")
    origin.remove("README.md")
    second_commit = origin.commit(
        "second",
        {
            "docs/guide.md": FIRST["docs/guide.md"] + "\n## Stop\n\nNothing to do.\n",
            "docs/new.md": "# New\n\nSettings come from `read_config` one day.\n",
            "pkg/config.py": "DEFAULTS = {}\n\n\ndef parse_config(path):\n    return {}\n",
        },
    )
    embedded = len(probe.texts)
    second = await service.sync(rid)
    assert second.commit_sha == second_commit
    documents = await service.documents(rid)
    assert sorted(documents) == ["CONTRIBUTING.md", "docs/guide.md", "docs/new.md", "docs/reference.md"]
    new_chunks = sum(documents[p].chunk_count for p in ("docs/guide.md", "docs/new.md", "docs/reference.md"))
    # A rename is one delete (docs/api.md) plus one new document (docs/reference.md).
    assert counters(second) == (5, 3, new_chunks, 1, 2, 1)
    # Only the new chunks and the one new symbol (DEFAULTS) were embedded; parse_config kept its vector.
    assert len(probe.texts) - embedded == new_chunks + 1
    assert second.code_nodes == 6
    # parse_config kept its id through the edit of its file, so its links survive.
    assert (await node_ids(service, rid, "guide"))["pkg.config.parse_config"] == guide_nodes[
        "pkg.config.parse_config"
    ]
    assert documents["docs/reference.md"].slug == "reference"
    assert documents["docs/guide.md"].slug == "guide"
    with pytest.raises(aio.AioRpcError) as missing:
        await service.stub.GetDocsPage(pb.GetDocsPageRequest(repository_id=rid, slug="api"))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND

    # Rename a symbol; the prose does not change. Links to the old name go with its node, and the
    # unchanged page that names the new one is linked to it; a forced re-link changes nothing more.
    origin.commit("rename", {"pkg/config.py": "DEFAULTS = {}\n\n\ndef read_config(path):\n    return {}\n"})
    renamed = await service.sync(rid)
    assert counters(renamed) == (5, 0, 0, 4, 0, 0)
    assert "pkg.config.parse_config" not in await node_ids(service, rid, "guide")
    # Symbols changed, so every page was linked again: unchanged prose may now name a new one.
    assert list(await node_ids(service, rid, "new")) == ["pkg.config.read_config"]
    relinked = await service.sync(rid, force_relink=True)
    assert counters(relinked) == (5, 0, 0, 4, 0, 0)
    assert list(await node_ids(service, rid, "new")) == ["pkg.config.read_config"]
    assert relinked.mentions == renamed.mentions

    history = (await service.stub.ListSyncs(pb.ListSyncsRequest(repository_id=rid))).syncs
    assert [s.id for s in history] == [relinked.id, renamed.id, second.id, again.id, first.id]
    assert all(s.status == pb.SYNC_STATUS_SUCCESS and s.HasField("finished_at") for s in history)


async def test_a_failed_sync_records_its_error_and_keeps_the_index(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# One\n\nFirst text.\n", "a.py": "def a():\n    pass\n"})
    repository = await service.register("failing", clone_url=str(origin.root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
    before = await service.documents(repository.id)

    # The embedding provider fails mid-sync: nothing of the new commit may be half-written.
    origin.commit("second", {"README.md": "# Two\n\nSecond text.\n", "b.py": "def b():\n    pass\n"})
    service.provider.failure = "the embedding endpoint answered 503"
    failed = await service.sync(repository.id)
    assert failed.status == pb.SYNC_STATUS_ERROR
    assert failed.error == "the embedding endpoint answered 503"
    assert failed.HasField("finished_at")
    assert await service.documents(repository.id) == before
    chunk_ids = await _chunks_from_db(service, before["README.md"].id)
    chunk = await service.stub.GetChunk(
        pb.GetChunkRequest(repository_id=repository.id, chunk_id=chunk_ids[0])
    )
    assert "First text." in chunk.chunk.content
    # The checkout is back at the indexed commit, so source reads agree with the index.
    with pytest.raises(aio.AioRpcError) as gone:
        await service.stub.ReadFileRange(pb.ReadFileRangeRequest(repository_id=repository.id, path="b.py"))
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND

    service.provider.failure = None
    recovered = await service.sync(repository.id)
    assert recovered.status == pb.SYNC_STATUS_SUCCESS
    assert counters(recovered) == (1, 1, 1, 0, 0, 1)
    assert recovered.code_nodes == 4  # the modules a and b, and their functions

    # The remote disappears: git's own message is the error; the index stays.
    origin.destroy()
    lost = await service.sync(repository.id)
    assert lost.status == pb.SYNC_STATUS_ERROR
    assert lost.error.startswith("git fetch failed:")
    assert (await service.documents(repository.id))["README.md"].title == "Two"


async def _chunks_from_db(service: Running, document_id: str) -> list[str]:
    connection = await asyncpg.connect(service.settings.database.dsn)
    try:
        rows = await connection.fetch(
            "SELECT id FROM repodocs.repo_document_chunks WHERE document_id = $1 ORDER BY chunk_index",
            uuid.UUID(document_id),
        )
    finally:
        await connection.close()
    return [str(row["id"]) for row in rows]


async def test_one_sync_at_a_time_joined_by_later_requests(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# Held\n\nWaiting for the gate.\n"})
    gate = asyncio.Event()
    service.provider.gate = gate
    repository = await service.register("held", clone_url=str(origin.root))

    # Registration queued a sync; asking again without waiting answers that same sync, in progress.
    started = (await service.stub.SyncRepository(pb.SyncRepositoryRequest(repository_id=repository.id))).sync
    assert started.status in (pb.SYNC_STATUS_QUEUED, pb.SYNC_STATUS_RUNNING)
    assert started.trigger == pb.SYNC_TRIGGER_REGISTRATION
    joined = (await service.stub.SyncRepository(pb.SyncRepositoryRequest(repository_id=repository.id))).sync
    assert joined.id == started.id
    # A re-link cannot join a sync that does not re-link.
    with pytest.raises(aio.AioRpcError) as refused:
        await service.stub.SyncRepository(
            pb.SyncRepositoryRequest(repository_id=repository.id, force_relink=True)
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "already" in (refused.value.details() or "")

    waiting = asyncio.create_task(service.sync(repository.id))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    gate.set()
    finished = await asyncio.wait_for(waiting, SYNC_TIMEOUT)
    assert finished.id == started.id
    assert finished.status == pb.SYNC_STATUS_SUCCESS
    syncs = (await service.stub.ListSyncs(pb.ListSyncsRequest(repository_id=repository.id))).syncs
    assert [s.id for s in syncs] == [started.id]
    # GetRepository carries the last sync.
    got = await service.stub.GetRepository(pb.GetRepositoryRequest(repository_id=repository.id))
    assert got.repository.last_sync.id == started.id


async def test_the_scheduler_syncs_every_repository_each_interval(
    settings: Settings, database: str, embedder: EmbeddingProvider, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# Scheduled\n\nSynced on a timer.\n"})
    async with running_service(settings, database, embedder, sync_interval=0.3) as service:
        repository = await service.register("scheduled", clone_url=str(origin.root))
        origin.commit("second", {"docs/more.md": "# More\n\nArrives later.\n"})
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            syncs = (await service.stub.ListSyncs(pb.ListSyncsRequest(repository_id=repository.id))).syncs
            scheduled = [
                s
                for s in syncs
                if s.trigger == pb.SYNC_TRIGGER_SCHEDULE and s.status == pb.SYNC_STATUS_SUCCESS
            ]
            if scheduled:
                break
            assert asyncio.get_running_loop().time() < deadline, syncs
            await asyncio.sleep(0.1)
        assert "docs/more.md" in await service.documents(repository.id)


async def test_vectors_of_another_model_are_replaced_on_the_next_sync(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit(
        "first",
        {"a.md": "# A\n\nAlpha calls `f()`.\n", "b.md": "# B\n\nBeta.\n", "f.py": "def f():\n    pass\n"},
    )
    repository = await service.register("models", clone_url=str(origin.root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
    # As if a.md and f were embedded by an earlier model.
    connection = await asyncpg.connect(service.settings.database.dsn)
    try:
        await connection.execute(
            "UPDATE repodocs.repo_document_chunks k SET embedding_model = 'old-model'"
            " FROM repodocs.repo_documents d WHERE d.id = k.document_id AND d.path = 'a.md'"
        )
        await connection.execute("UPDATE repodocs.code_nodes SET embedding_model = 'old-model'")
    finally:
        await connection.close()
    embedded = len(service.provider.texts)
    refreshed = await service.sync(repository.id)
    # Same text, other model: indexed again (not a replaced file), and linked again.
    assert counters(refreshed) == (2, 1, 1, 1, 0, 0)
    again = service.provider.texts[embedded:]
    # The module `f` is a node without a vector: only the function is embedded again.
    assert again == ["a.md\n\n# A\n\nAlpha calls `f()`.", "f.f function def f():"]
    assert refreshed.mentions == 1
    assert counters(await service.sync(repository.id)) == (2, 0, 0, 2, 0, 0)


async def test_chunks_of_another_recipe_are_embedded_again_whole_on_the_next_sync(
    service: Running, tmp_path: Path
) -> None:
    """Chunks embedded before the recipe (context and windows) was recorded are stale: the next
    sync indexes their document again, a chunk longer than the model reads window by window."""
    filler = " ".join(f"Step {i} tightens bolt {i} on the frame." for i in range(60))
    origin = GitRepo(tmp_path / "origin")
    origin.commit(
        "first",
        {
            "guide.md": f"# Guide\n\n{filler}\n",
            "b.md": "# B\n\nBeta.\n",
        },
    )
    repository = await service.register("recipes", clone_url=str(origin.root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
    connection = await asyncpg.connect(service.settings.database.dsn)
    try:
        windows = await connection.fetchval("SELECT count(*) FROM repodocs.repo_document_chunk_windows")
        assert windows >= 1  # the guide's one chunk, of about 500 word pieces
        await connection.execute("UPDATE repodocs.repo_document_chunks SET embedding_recipe = NULL")
        embedded = len(service.provider.texts)
        refreshed = await service.sync(repository.id)
        assert counters(refreshed) == (2, 2, 2, 0, 0, 0)
        assert len(service.provider.texts) - embedded == 2 + windows
        assert (
            await connection.fetchval("SELECT count(*) FROM repodocs.repo_document_chunk_windows") == windows
        )
    finally:
        await connection.close()
    assert counters(await service.sync(repository.id)) == (2, 0, 0, 2, 0, 0)


async def dense_found(service: Running, repository_id: str, query: str) -> tuple[set[str], set[str]]:
    """(document paths, code qualified names) that the dense stream alone finds for `query`, embedded
    by the service's own provider as the gateway would."""
    model = await service.provider.info()
    [vector] = await service.provider.embed([query])
    docs = await service.stub.SearchDocChunks(
        pb.SearchDocChunksRequest(
            repository_ids=[repository_id],
            query=query,
            limit=10,
            query_embedding=vector,
            embedding_model=model.name,
            dense_weight=1,
            text_weight=0,
        )
    )
    code = await service.stub.SearchCode(
        pb.SearchCodeRequest(
            repository_ids=[repository_id],
            query=query,
            limit=10,
            query_embedding=vector,
            embedding_model=model.name,
            dense_weight=1,
            text_weight=0,
            symbol_weight=0,
        )
    )
    assert all(hit.ranks.dense > 0 for hit in docs.hits)
    assert all(hit.ranks.dense > 0 for hit in code.hits)
    return {hit.chunk.path for hit in docs.hits}, {hit.node.qualified_name for hit in code.hits}


async def test_vectors_of_the_same_model_at_another_dimension_are_replaced_on_the_next_sync(
    service: Running, tmp_path: Path
) -> None:
    """COGRAPH_EMBEDDING__DIMENSIONS changed, COGRAPH_EMBEDDING__MODEL did not: what was embedded at
    the old dimension is embedded again, or the dense stream (which looks for the query's
    dimension) would never find it."""
    origin = GitRepo(tmp_path / "origin")
    origin.commit(
        "first",
        {"a.md": "# A\n\nAlpha calls `f()`.\n", "b.md": "# B\n\nBeta.\n", "f.py": "def f():\n    pass\n"},
    )
    repository = await service.register("dimensions", clone_url=str(origin.root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
    model = await service.provider.info()
    everything = ({"a.md", "b.md"}, {"f.f"})  # the function f (its module carries no vector)
    assert await dense_found(service, repository.id, "alpha") == everything
    # As if a.md and f were embedded by this model asked for fewer dimensions: same name, shorter vectors.
    old = model.dimension // 2
    connection = await asyncpg.connect(service.settings.database.dsn)
    try:
        await connection.execute(
            "UPDATE repodocs.repo_document_chunks k"
            " SET embedding = subvector(embedding, 1, $1), embedding_dim = $1"
            " FROM repodocs.repo_documents d WHERE d.id = k.document_id AND d.path = 'a.md'",
            old,
        )
        await connection.execute(
            "UPDATE repodocs.code_nodes SET embedding = subvector(embedding, 1, $1), embedding_dim = $1"
            " WHERE embedding IS NOT NULL",
            old,
        )
        assert await dense_found(service, repository.id, "alpha") == ({"b.md"}, set())
        embedded = len(service.provider.texts)
        refreshed = await service.sync(repository.id)
        # Same text, same model name, other dimension: indexed again (not a replaced file), and linked again.
        assert refreshed.status == pb.SYNC_STATUS_SUCCESS, refreshed.error
        assert counters(refreshed) == (2, 1, 1, 1, 0, 0)
        again = service.provider.texts[embedded:]
        assert again == ["a.md\n\n# A\n\nAlpha calls `f()`.", "f.f function def f():"]
        assert refreshed.mentions == 1
        for table in ("repo_document_chunks", "code_nodes"):
            stored = await connection.fetch(
                "SELECT DISTINCT embedding_model, embedding_dim, vector_dims(embedding)"
                f" FROM repodocs.{table} WHERE embedding IS NOT NULL"
            )
            assert [tuple(row) for row in stored] == [(model.name, model.dimension, model.dimension)], table
    finally:
        await connection.close()
    assert await dense_found(service, repository.id, "alpha") == everything
    embedded = len(service.provider.texts)
    assert counters(await service.sync(repository.id)) == (2, 0, 0, 2, 0, 0)
    assert service.provider.texts[embedded:] == []


async def page_path(service: Running, repository_id: str, slug: str) -> str:
    page = await service.stub.GetDocsPage(pb.GetDocsPageRequest(repository_id=repository_id, slug=slug))
    return page.document.summary.path


async def test_a_page_keeps_its_url_when_other_pages_are_added_or_deleted(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# Root\n", "docs/guide.md": "# The original guide\n"})
    rid = (await service.register("urls", clone_url=str(origin.root))).id
    await service.sync(rid)
    assert await page_path(service, rid, "guide") == "docs/guide.md"

    # doc/guide.md has the same slug and sorts first; the existing page still owns /guide.
    origin.commit("second", {"doc/guide.md": "# Another guide\n"})
    await service.sync(rid)
    assert await page_path(service, rid, "guide") == "docs/guide.md"
    suffixed = (await service.documents(rid))["doc/guide.md"].slug
    assert suffixed.startswith("guide-")
    assert len(suffixed) == len("guide-") + 4

    # Deleting the page that owns the bare slug moves no other page's URL.
    origin.remove("docs/guide.md")
    origin.commit("third")
    await service.sync(rid)
    assert await page_path(service, rid, suffixed) == "doc/guide.md"
    with pytest.raises(aio.AioRpcError) as gone:
        await page_path(service, rid, "guide")
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND


async def test_a_stored_slug_the_slug_steps_no_longer_give_is_replaced_on_the_next_sync(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.MD": "# Shouting\n"})
    rid = (await service.register("upper", clone_url=str(origin.root))).id
    await service.sync(rid)
    assert (await service.documents(rid))["README.MD"].slug == "readme"
    # As if stored by a version whose step 2 kept upper-case extensions.
    connection = await asyncpg.connect(service.settings.database.dsn)
    try:
        await connection.execute("UPDATE repodocs.repo_documents SET slug = 'readme-md'")
    finally:
        await connection.close()
    assert counters(await service.sync(rid)) == (1, 0, 0, 1, 0, 0)
    assert await page_path(service, rid, "readme") == "README.MD"


async def test_empty_documents_are_unchanged_on_later_syncs(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit(
        "first", {"README.md": "# Root\n\nText.\n", "CHANGELOG.md": "", "docs/blank.md": " \n\n\t\n"}
    )
    rid = (await service.register("empty", clone_url=str(origin.root))).id
    first = await service.sync(rid)
    # The empty and the blank file are documents without chunks.
    assert counters(first) == (3, 3, 1, 0, 0, 0)
    embedded = len(service.provider.texts)
    for _ in range(2):
        assert counters(await service.sync(rid)) == (3, 0, 0, 3, 0, 0)
    assert len(service.provider.texts) == embedded


async def test_a_failed_sync_never_shows_where_the_checkout_lies(service: Running, tmp_path: Path) -> None:
    """Every reader of a repository sees its syncs' errors; the checkout path is for
    administrators only, so the error names it "<checkout>"."""
    origin = GitRepo(tmp_path / "local-checkout")
    origin.commit("first", {"README.md": "# Local\n"})
    repository = await service.register("local", checkout_path=str(origin.root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
    origin.root.rename(tmp_path / "moved")
    failed = await service.sync(repository.id)
    assert failed.status == pb.SYNC_STATUS_ERROR
    assert failed.error == "checkout path <checkout> is not a directory any more"
    assert str(tmp_path) not in failed.error


async def test_a_sync_given_up_as_abandoned_keeps_nothing_when_it_wakes(
    settings: Settings,
    database: str,
    embedder: EmbeddingProvider,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two replicas. A's sync stalls (held in its embedding) until its heartbeat is stale; B marks
    it abandoned and syncs the repository itself. When A wakes, its write must not land: its row
    stays abandoned and no symbol is indexed twice."""
    checkout = GitRepo(tmp_path / "twin")
    checkout.commit("first", {"docs/a.md": "# A\n\nCall `f` here.\n", "mod.py": "def f():\n    pass\n"})
    async with (
        running_service(settings, database, embedder) as a,
        running_service(settings, database, embedder) as b,
    ):
        repository = await a.register("twin", checkout_path=str(checkout.root))
        assert (await a.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
        checkout.commit(
            "second",
            {
                "docs/a.md": "# A\n\nCall `f` and `g` here.\n",
                "mod.py": "def f():\n    pass\n\ndef g():\n    pass\n",
            },
        )
        a.provider.gate = asyncio.Event()
        stalled = (
            await a.stub.SyncRepository(pb.SyncRepositoryRequest(repository_id=repository.id, wait=False))
        ).sync
        connection = await asyncpg.connect(database)
        try:
            sync_id = uuid.UUID(stalled.id)
            for _ in range(200):  # until A is running (held in the embedding of the changed files)
                if (
                    await connection.fetchval("SELECT status FROM repodocs.repo_syncs WHERE id = $1", sync_id)
                    == "running"
                ):
                    break
                await asyncio.sleep(0.05)
            await connection.execute(
                "UPDATE repodocs.repo_syncs SET heartbeat_at = now() - interval '10 minutes' WHERE id = $1",
                sync_id,
            )
            own = await b.sync(repository.id)
            assert own.status == pb.SYNC_STATUS_SUCCESS, own.error
            caplog.set_level(logging.WARNING, logger="cograph_repodocs.application.syncs")
            a.provider.gate.set()
            for _ in range(400):  # until A's sync has ended (it logs why it failed)
                if any(stalled.id in record.getMessage() for record in caplog.records):
                    break
                await asyncio.sleep(0.05)
            failure = next(record for record in caplog.records if stalled.id in record.getMessage())
            assert failure.exc_info is not None
            assert "marked abandoned by another process" in str(failure.exc_info[1])
            row = await connection.fetchrow(
                "SELECT status, error FROM repodocs.repo_syncs WHERE id = $1", sync_id
            )
            names = await connection.fetch(
                "SELECT name, count(*) AS n FROM repodocs.code_nodes WHERE repository_id = $1 GROUP BY name",
                uuid.UUID(repository.id),
            )
        finally:
            await connection.close()
    assert row["status"] == "error"
    assert row["error"].startswith("abandoned")
    assert {r["name"]: r["n"] for r in names} == {"mod": 1, "f": 1, "g": 1}  # B's index, once


async def test_source_read_during_a_sync_is_the_indexed_commits(service: Running, tmp_path: Path) -> None:
    """A sync moves the managed checkout to the new tip first and indexes it afterwards: a read
    meanwhile answers the indexed commit's lines under its name (before, the new tip's lines,
    labelled with the old commit)."""
    origin = GitRepo(tmp_path / "origin")
    first = origin.commit("first", {"README.md": "# Demo\n", "a.py": "def first():\n    pass\n"})
    repository = await service.register("moving", clone_url=str(origin.root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
    second = origin.commit("second", {"README.md": "# Demo, again\n", "a.py": "def second():\n    pass\n"})
    checkout = f"{service.settings.repodocs.checkout_dir}/{repository.id}"

    def head() -> str:
        return subprocess.run(
            ["git", "-C", checkout, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
        ).stdout.strip()

    async def read() -> pb.ReadFileRangeResponse:
        return await service.stub.ReadFileRange(
            pb.ReadFileRangeRequest(repository_id=repository.id, path="a.py")
        )

    service.provider.gate = asyncio.Event()  # the sync waits at its embedding step
    syncing = asyncio.ensure_future(service.sync(repository.id))
    try:
        for _ in range(200):
            if head() == second:
                break
            await asyncio.sleep(0.05)
        assert head() == second
        during = await read()
        assert (during.content, during.commit_sha) == ("def first():\n    pass\n", first)
    finally:
        service.provider.gate.set()
    assert (await syncing).status == pb.SYNC_STATUS_SUCCESS
    after = await read()
    assert (after.content, after.commit_sha) == ("def second():\n    pass\n", second)


async def test_a_managed_checkout_follows_symlinks_inside_the_commit_only(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.write({"pkg/mod.py": "one\ntwo\n", "node_modules/dep/index.js": "module.exports = 1\n"})
    links = {
        "pkg/alias.ts": "mod.py",
        "pkg/chain.py": "alias.ts",
        "pkg/outside.py": "../../secret.py",
        "pkg/absolute.py": "/etc/passwd",
        "pkg/vendored.js": "../node_modules/dep/index.js",
        "pkg/loop.py": "loop.py",
        "pkg/dangling.py": "nothing.py",
    }
    for link, target in links.items():
        (origin.root / link).symlink_to(target)
    origin.commit("links")
    repository = await service.register("linked", clone_url=str(origin.root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS

    async def read(path: str) -> pb.ReadFileRangeResponse:
        return await service.stub.ReadFileRange(
            pb.ReadFileRangeRequest(repository_id=repository.id, path=path)
        )

    assert (await read("pkg/alias.ts")).content == "one\ntwo\n"
    assert (await read("pkg/chain.py")).content == "one\ntwo\n"
    refused = {
        "pkg/outside.py": (grpc.StatusCode.INVALID_ARGUMENT, "a symlink to a file outside the checkout"),
        "pkg/absolute.py": (grpc.StatusCode.INVALID_ARGUMENT, "a symlink to a file outside the checkout"),
        "pkg/vendored.js": (grpc.StatusCode.INVALID_ARGUMENT, "a symlink into node_modules"),
        "pkg/loop.py": (grpc.StatusCode.INVALID_ARGUMENT, "a symlink loop"),
        "pkg/dangling.py": (grpc.StatusCode.NOT_FOUND, "does not exist at the indexed commit"),
        "pkg/missing.py": (grpc.StatusCode.NOT_FOUND, "does not exist at the indexed commit"),
        "pkg": (grpc.StatusCode.INVALID_ARGUMENT, "only Python"),
    }
    for path, (code, message) in refused.items():
        with pytest.raises(aio.AioRpcError) as error:
            await read(path)
        assert (error.value.code(), message in (error.value.details() or "")) == (code, True), path


async def test_a_checkout_path_leaves_out_what_its_gitignore_ignores(
    service: Running, tmp_path: Path
) -> None:
    """A checkout path is read where it is, working-tree edits included; what its .gitignore
    keeps out of the repository (a local .env with a key in it, a built site, scratch notes and
    code) is not the repository's, and is neither indexed nor searchable. A file ignored once
    indexed is pruned by the next sync."""
    work = GitRepo(tmp_path / "work")
    work.commit(
        "first",
        {
            ".gitignore": ".env.local\nsite/\nnotes-*.md\nscratch.py\n",
            "README.md": "# Local\n\nRun `serve` to start.\n",
            "docs/guide.md": "# Guide\n\nCall serve() first.\n",
            "pkg/app.py": "def serve():\n    pass\n",
        },
    )
    work.write(
        {
            ".env.local": "API_KEY=hunter2\n",  # Config (any .env*) were it not ignored
            "site/index.md": "# Built\n\nA copy of the guide.\n",
            "notes-today.md": "# Notes\n\nMine.\n",
            "scratch.py": "def scratch_helper():\n    pass\n",
            "docs/draft.md": "# Draft\n\nNot committed yet, not ignored.\n",
        }
    )
    repository = await service.register("local", checkout_path=str(work.root))
    first = await service.sync(repository.id)
    assert first.status == pb.SYNC_STATUS_SUCCESS, first.error
    assert sorted(await service.documents(repository.id)) == ["README.md", "docs/draft.md", "docs/guide.md"]
    assert first.counters.discovered_files == 3
    assert first.code_nodes == 2  # the module pkg.app and serve; scratch.py is ignored

    (work.root / ".gitignore").write_text(".env.local\nsite/\nnotes-*.md\nscratch.py\ndocs/draft.md\n")
    second = await service.sync(repository.id)
    assert second.status == pb.SYNC_STATUS_SUCCESS, second.error
    assert sorted(await service.documents(repository.id)) == ["README.md", "docs/guide.md"]
    assert second.counters.deleted_documents == 1
