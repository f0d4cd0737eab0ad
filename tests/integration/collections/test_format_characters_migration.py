"""Migration 0011: chunks indexed by an earlier release are indexed again with their format
characters dealt with, stay inline and indexed, and the term statistics are counted again."""

from __future__ import annotations

from cograph_collections.app import MIGRATIONS
from cograph_db import apply_migrations, connect
from support.collections import insert_stored_documents
from support.migrations import before


async def test_stored_chunks_are_indexed_again_and_their_statistics_follow(database: str) -> None:
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 11))
        await connection.execute("SET search_path = collections")
        collection_id, documents = await insert_stored_documents(connection, "a.md")
        await connection.execute(
            "INSERT INTO md_chunks (document_id, collection_id, chunk_index, heading_path, content,"
            " start_line, end_line, chunker_max_chars, chunker_min_chars, chunker_max_chunks)"
            " VALUES ($1, $2, 0, $3, $4, 1, 3, 4000, 400, 512)",
            documents["a.md"],
            collection_id,
            ["Glos\u00adsary"],
            "A zor\u00adblax reconciles alpha\u200bomega " + " ".join(f"term{n}" for n in range(420)),
        )
        lexemes = "SELECT tsvector_to_array(search_text) FROM md_chunks"
        assert "zorblax" not in await connection.fetchval(lexemes)
        assert 11 in await apply_migrations(connection, MIGRATIONS)
        await connection.execute("SET search_path = collections")
        assert {"zorblax", "glossari", "alpha", "omega"} <= set(await connection.fetchval(lexemes))
        stats = dict(
            await connection.fetch("SELECT lexeme, df FROM md_term_stats WHERE scope_id = $1", collection_id)
        )
        assert stats["zorblax"] == 1
        assert not [lexeme for lexeme in stats if "\u00ad" in lexeme or "\u200b" in lexeme]
        scope = await connection.fetchrow(
            "SELECT chunks, lexemes FROM md_scope_stats WHERE scope_id = $1", collection_id
        )
        assert (scope["chunks"], scope["lexemes"]) == (1, len(stats))
        # Still inside the row (0004), and found through its index.
        assert await connection.fetchval(
            "SELECT pg_column_toast_chunk_id(search_text) IS NULL FROM md_chunks"
        )
        index = await connection.fetchval(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'md_chunks_search_text'"
        )
        assert "USING gin (search_text)" in index
        # Planned on statistics of the new column, not on a fixed guess.
        assert await connection.fetchval(
            "SELECT count(*) FROM pg_stats WHERE tablename = 'md_chunks' AND attname = 'search_text'"
        )
        assert (
            await connection.fetchval(
                "SELECT count(*) FROM md_chunks WHERE search_text @@ 'zorblax'::tsquery"
            )
            == 1
        )
    finally:
        await connection.close()
