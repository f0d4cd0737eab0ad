"""Migration 0010: code indexed by an earlier release is split into lexemes again, so names with
'$' or letters beyond ASCII are found by full text as written, and the statistics follow."""

from __future__ import annotations

from cograph_db import apply_migrations, connect
from cograph_repodocs.app import MIGRATIONS
from support.migrations import before


async def test_stored_code_is_split_the_new_way_and_its_statistics_follow(database: str) -> None:
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 10))
        repository = await connection.fetchval(
            "INSERT INTO repodocs.repositories (host, owner, name, clone_url, visibility, owner_subject)"
            " VALUES ('example.com', 'acme', 'web', 'https://x.example/w', 'public', 'a') RETURNING id"
        )
        await connection.execute(
            "INSERT INTO repodocs.code_files (repository_id, path, content_hash)"
            " VALUES ($1, 'web/app.js', 'h')",
            repository,
        )
        await connection.execute(
            "INSERT INTO repodocs.code_nodes (repository_id, path, name, qualified_name, kind, language,"
            " start_line, end_line, signature) VALUES ($1, 'web/app.js', '$http', 'web.app.$http',"
            " 'function', 'javascript', 1, 1, 'function $http(größe)')",
            repository,
        )
        await connection.execute(
            "INSERT INTO repodocs.code_nodes (repository_id, path, name, qualified_name, kind, language,"
            " start_line, end_line, signature) VALUES ($1, 'web/app.js', 'plain', 'web.app.plain',"
            " 'function', 'javascript', 2, 2, 'function plain(a, b)')",
            repository,
        )
        lexemes = "SELECT tsvector_to_array(search_text) FROM repodocs.code_nodes WHERE name = '$http'"
        row_version = "SELECT xmin::text FROM repodocs.code_nodes WHERE name = 'plain'"
        assert "$http" not in await connection.fetchval(lexemes)
        plain_before = await connection.fetchval(row_version)
        assert 10 in await apply_migrations(connection, MIGRATIONS)
        assert {"$http", "web.app.$http", "größe", "http"} <= set(await connection.fetchval(lexemes))
        # Only rows whose lexemes change are written (each write re-indexes the row's vector too).
        assert await connection.fetchval(row_version) == plain_before
        # Spaces and punctuation beyond ASCII still separate (a query copied from a web page).
        split = await connection.fetchval(
            "SELECT repodocs.identifier_lexemes($1)", "parse\u00a0config → “x2”"
        )
        assert sorted(split) == ["config", "parse", "x2"]
        # Full-width punctuation separates; letters that may stand in an identifier do not.
        split = await connection.fetchval("SELECT repodocs.identifier_lexemes($1)", "函数：人々 timeout_µs？")
        assert sorted(split) == sorted(["timeout", "timeout_µs", "µs", "人々", "函数"])
        df = await connection.fetchval(
            "SELECT df FROM repodocs.code_term_stats WHERE scope_id = $1 AND lexeme = '$http'", repository
        )
        assert df == 1
    finally:
        await connection.close()
