"""Migration 0011: document chunks indexed by an earlier release are indexed again with their
format characters dealt with, as a query is read, and the term statistics are counted again."""

from __future__ import annotations

import unicodedata

from cograph_db import apply_migrations, connect
from cograph_repodocs.app import MIGRATIONS
from cograph_retrieval.hybrid import without_format_characters
from support.migrations import before


async def test_stored_document_chunks_are_indexed_again_and_their_statistics_follow(database: str) -> None:
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 11))
        await connection.execute("SET search_path = repodocs")
        repository = await connection.fetchval(
            "INSERT INTO repositories (host, owner, name, clone_url, visibility, owner_subject)"
            " VALUES ('example.com', 'acme', 'tools', 'https://x.example/t', 'public', 'a') RETURNING id"
        )
        document = await connection.fetchval(
            "INSERT INTO repo_documents (repository_id, path, kind, title, slug, content,"
            " content_hash, size_bytes) VALUES ($1, 'README.md', 'repo_doc', 'R', 'r', 'x', 'h', 1)"
            " RETURNING id",
            repository,
        )
        await connection.execute(
            "INSERT INTO repo_document_chunks (document_id, repository_id, chunk_index, heading_path,"
            " content, chunker_max_words, chunker_overlap_words) VALUES ($1, $2, 0, $3, $4, 500, 50)",
            document,
            repository,
            ["Glos\u00adsary"],
            "A zor\u00adblax reconciles alpha\u200bomega",
        )
        lexemes = "SELECT tsvector_to_array(search_text) FROM repo_document_chunks"
        assert "zorblax" not in await connection.fetchval(lexemes)
        assert 11 in await apply_migrations(connection, MIGRATIONS)
        await connection.execute("SET search_path = repodocs")
        assert {"zorblax", "glossari", "alpha", "omega"} <= set(await connection.fetchval(lexemes))
        stats = dict(
            await connection.fetch("SELECT lexeme, df FROM repo_term_stats WHERE scope_id = $1", repository)
        )
        assert stats["zorblax"] == 1
        assert not [lexeme for lexeme in stats if "\u00ad" in lexeme or "\u200b" in lexeme]
        scope = await connection.fetchrow(
            "SELECT chunks, lexemes FROM repo_scope_stats WHERE scope_id = $1", repository
        )
        assert (scope["chunks"], scope["lexemes"]) == (1, len(stats))
        index = await connection.fetchval(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'repo_document_chunks_search_text'"
        )
        assert "USING gin (search_text)" in index
        # Planned on statistics of the new column, not on a fixed guess.
        assert await connection.fetchval(
            "SELECT count(*) FROM pg_stats"
            " WHERE tablename = 'repo_document_chunks' AND attname = 'search_text'"
        )
        # Every format character is dealt with as the query side deals with it.
        characters = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
        stored = await connection.fetch(
            "SELECT c, searchable_text('a' || c || 'b') AS text FROM unnest($1::text[]) AS c", characters
        )
        differing = [
            f"U+{ord(row['c']):04X}"
            for row in stored
            if row["text"] != without_format_characters(f"a{row['c']}b")
        ]
        assert differing == []
    finally:
        await connection.close()
