"""Migrations 0009, 0012 and 0014: documents chunked under an old reading of non-markdown files (no
headings; then markdown's, with setext headings) are chunked again by the next sync, the way the
spec reads them, as documents whose content did not change."""

from __future__ import annotations

import hashlib
from pathlib import Path

from integration.repodocs.helpers import GitRepo, Running, counters

import cograph_repodocs
from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph_db import apply_migrations, connect
from cograph_repodocs.app import MIGRATIONS
from support.migrations import before

MIGRATIONS_DIR = Path(cograph_repodocs.__file__).parent / "migrations"


async def test_only_documents_outside_markdown_and_rst_are_marked_for_a_new_chunking(database: str) -> None:
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 9))
        repository = await connection.fetchval(
            "INSERT INTO repodocs.repositories (host, owner, name, clone_url, visibility, owner_subject)"
            " VALUES ('example.com', 'acme', 'tools', 'https://x.example/t', 'public', 'a') RETURNING id"
        )
        paths = {
            "README.md": "repo_doc",
            "docs/a.RST": "repo_doc",
            "Dockerfile": "config",
            "deploy/v.yaml": "config",
        }
        for path, kind in paths.items():
            await connection.execute(
                "INSERT INTO repodocs.repo_documents (repository_id, path, kind, title, slug, content,"
                " content_hash, size_bytes) VALUES ($1, $2, $3, $2, $2, 'x', 'h', 1)",
                repository,
                path,
                kind,
            )
            await connection.execute(
                "INSERT INTO repodocs.repo_document_chunks (document_id, repository_id, chunk_index, content,"
                " chunker_max_words, chunker_overlap_words)"
                " SELECT id, repository_id, 0, 'x', 512, 64 FROM repodocs.repo_documents WHERE path = $1",
                path,
            )
        hashes = "SELECT path, content_hash FROM repodocs.repo_documents"
        assert 9 in await apply_migrations(connection, before(MIGRATIONS, 10))
        assert dict(await connection.fetch(hashes)) == {
            "README.md": "h",
            "docs/a.RST": "h",
            "Dockerfile": "rechunk:h",
            "deploy/v.yaml": "rechunk:h",
        }
        # 0012: the real hash back (FindDocumentsByContent finds them), the chunks marked as made
        # by other chunker parameters, which the next sync re-chunks without calling it a new file.
        assert 12 in await apply_migrations(connection, MIGRATIONS)
        assert set(await connection.fetch(hashes)) == {(path, "h") for path in paths}
        windows = dict(
            await connection.fetch(
                "SELECT d.path, k.chunker_max_words FROM repodocs.repo_document_chunks k"
                " JOIN repodocs.repo_documents d ON d.id = k.document_id"
            )
        )
        assert windows == {"README.md": 512, "docs/a.RST": 512, "Dockerfile": 0, "deploy/v.yaml": 0}
    finally:
        await connection.close()


DOCKERFILE = "# build stage\nFROM python:3.11\nRUN make\n"


async def test_a_document_marked_by_0009_is_chunked_again_as_unchanged_content(
    service: Running, database: str, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"README.md": "# Demo\n\nHello.\n", "Dockerfile": DOCKERFILE})
    repository = await service.register("demo", clone_url=str(origin.root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
    connection = await connect(database)
    try:
        await connection.execute("SET search_path TO repodocs, public")
        # The Dockerfile as the release before 0009 chunked it (no headings), then both migrations.
        await connection.execute(
            "UPDATE repo_documents SET title = 'Dockerfile' WHERE path = 'Dockerfile';"
            "UPDATE repo_document_chunks k SET heading_path = '{}', heading_anchor = ''"
            " FROM repo_documents d WHERE d.id = k.document_id AND d.path = 'Dockerfile'"
        )
        for migration in ("0009_rechunk_non_markdown.sql", "0012_rechunk_by_chunker_parameters.sql"):
            await connection.execute((MIGRATIONS_DIR / migration).read_text())
    finally:
        await connection.close()
    dockerfile_hash = hashlib.sha256(DOCKERFILE.encode()).hexdigest()
    found = await service.stub.FindDocumentsByContent(
        pb.FindDocumentsByContentRequest(content_hashes=[dockerfile_hash], repository_ids=[repository.id])
    )
    assert [m.path for m in found.matches] == ["Dockerfile"]

    again = await service.sync(repository.id)
    assert again.status == pb.SYNC_STATUS_SUCCESS, again.error
    chunks = (await service.documents(repository.id))["Dockerfile"].chunk_count
    # (discovered, indexed, chunks, unchanged, deleted, replaced): chunked again, no file replaced.
    assert counters(again) == (2, 1, chunks, 1, 0, 0)
    assert (await service.documents(repository.id))["Dockerfile"].title == "build stage"
    # Once chunked again, it is unchanged like the README.
    assert counters(await service.sync(repository.id)) == (2, 0, 0, 2, 0, 0)


# Content of each document, and whether 0014 marks it for a new chunking.
READINGS = {
    "README.md": ("Title\n---\n# x\n", False),  # markdown keeps markdown's reading
    "docs/a.rst": ("# x\n", False),
    "deploy/app.yaml": ("kind: A\n---\nkind: B\n", True),  # a setext heading before
    "Dockerfile": ("# build\nFROM x\n", True),
    "tests/test_a.py": ("x = 1\r  - # in a list item\r", True),  # lone \r ends lines too
    ".github/workflows/ci.yml": ("steps:\n-\t# a heading in a list item\n", True),
    "examples/values.yaml": ("items:\n  - a  # trailing comment\n", False),
    "package-lock.json": ('{"a": "#1",\n "b": "---"}\n', False),  # no heading in either reading
    "cmd/app_test.go": ("// ---\nfunc TestX() {}\n", False),
}


async def test_0014_marks_the_documents_whose_headings_markdown_read_differently(database: str) -> None:
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 14))
        repository = await connection.fetchval(
            "INSERT INTO repodocs.repositories (host, owner, name, clone_url, visibility, owner_subject)"
            " VALUES ('example.com', 'acme', 'tools', 'https://x.example/t', 'public', 'a') RETURNING id"
        )
        for path, (content, _) in READINGS.items():
            await connection.execute(
                "INSERT INTO repodocs.repo_documents (repository_id, path, kind, title, slug, content,"
                " content_hash, size_bytes) VALUES ($1, $2, 'config', $2, $2, $3, 'h', 1)",
                repository,
                path,
                content,
            )
            await connection.execute(
                "INSERT INTO repodocs.repo_document_chunks (document_id, repository_id, chunk_index, content,"
                " chunker_max_words, chunker_overlap_words)"
                " SELECT id, repository_id, i, 'x', 512, 64 FROM repodocs.repo_documents,"
                " generate_series(0, 1) AS i WHERE path = $1",
                path,
            )
        assert 14 in await apply_migrations(connection, MIGRATIONS)
        windows = await connection.fetch(
            "SELECT d.path, k.chunker_max_words FROM repodocs.repo_document_chunks k"
            " JOIN repodocs.repo_documents d ON d.id = k.document_id"
        )
        hashes = await connection.fetch("SELECT content_hash FROM repodocs.repo_documents")
    finally:
        await connection.close()
    assert sorted(windows) == sorted(
        (path, 0 if marked else 512) for path, (_, marked) in READINGS.items() for _ in range(2)
    )
    assert {row["content_hash"] for row in hashes} == {"h"}  # FindDocumentsByContent still finds them


MANIFESTS = "# The gateway\napiVersion: apps/v1\nkind: Deployment\n---\n# Its Service\nkind: Service\n"


async def test_a_document_marked_by_0014_is_chunked_again_without_setext_headings(
    service: Running, database: str, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    files = {"README.md": "# Demo\n\nHello.\n", "deploy/app.yaml": MANIFESTS, "package.json": '{"a": 1}\n'}
    origin.commit("first", files)
    repository = await service.register("demo", clone_url=str(origin.root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
    chunks_of_manifests = (
        "SELECT heading_path, heading_anchor FROM repo_document_chunks k JOIN repo_documents d"
        " ON d.id = k.document_id WHERE d.path = 'deploy/app.yaml' ORDER BY chunk_index"
    )
    connection = await connect(database)
    try:
        await connection.execute("SET search_path TO repodocs, public")
        expected = [tuple(row) for row in await connection.fetch(chunks_of_manifests)]
        # The manifests as markdown's reading chunked them (the Deployment a setext heading).
        await connection.execute(
            "UPDATE repo_document_chunks k SET heading_path = ARRAY['The gateway',"
            " 'apiVersion: apps/v1 kind: Deployment'], heading_anchor = 'apiversion-appsv1kind-deployment'"
            " FROM repo_documents d WHERE d.id = k.document_id AND d.path = 'deploy/app.yaml'"
        )
        await connection.execute((MIGRATIONS_DIR / "0014_rechunk_comment_headings.sql").read_text())
    finally:
        await connection.close()

    again = await service.sync(repository.id)
    assert again.status == pb.SYNC_STATUS_SUCCESS, again.error
    chunks = (await service.documents(repository.id))["deploy/app.yaml"].chunk_count
    # (discovered, indexed, chunks, unchanged, deleted, replaced): the manifests chunked again, the
    # README and package.json (no `#` line) left alone, no file replaced.
    assert counters(again) == (3, 1, chunks, 2, 0, 0)
    connection = await connect(database)
    try:
        await connection.execute("SET search_path TO repodocs, public")
        assert [tuple(row) for row in await connection.fetch(chunks_of_manifests)] == expected
    finally:
        await connection.close()
    assert expected == [(["The gateway"], "the-gateway"), (["Its Service"], "its-service")]
    assert counters(await service.sync(repository.id)) == (3, 0, 0, 3, 0, 0)
