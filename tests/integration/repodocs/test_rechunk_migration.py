"""Migration 0009: documents chunked under the old reading of non-markdown files (no headings)
are marked changed, so the next sync chunks them the way the spec reads them."""

from __future__ import annotations

from cograph_db import apply_migrations, connect
from cograph_repodocs.app import MIGRATIONS
from support.migrations import before


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
        assert 9 in await apply_migrations(connection, MIGRATIONS)
        hashes = dict(await connection.fetch("SELECT path, content_hash FROM repodocs.repo_documents"))
        assert hashes == {
            "README.md": "h",
            "docs/a.RST": "h",
            "Dockerfile": "rechunk:h",
            "deploy/v.yaml": "rechunk:h",
        }
    finally:
        await connection.close()
