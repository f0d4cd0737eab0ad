"""Collection search: the shared hybrid retriever over md_chunks, restricted to the scope given."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import msgspec

from cograph_collections.documents import SQL, StoredChunk
from cograph_retrieval import ChunkTable, HybridRetriever, Query, StreamHit

TABLE = ChunkTable(
    table="md_chunks", scope_column="collection_id", term_stats="md_term_stats", scope_stats="md_scope_stats"
)


class ChunkHit(msgspec.Struct, frozen=True):
    chunk: StoredChunk
    document_title: str
    score: float
    ranks: dict[str, int]


class ChunkSearch:
    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool
        self._retriever = HybridRetriever(TABLE)

    async def search(self, query: Query, *, fill_to_limit: bool = False) -> list[ChunkHit]:
        """The fused hits; with fill_to_limit, topped up to the limit with the scope's chunks in a
        fixed order at score 0 (a route's promise: collections up to its count, whatever matched)."""
        hits = await self._retriever.search(self._pool, query)
        async with self._pool.acquire() as connection:
            if fill_to_limit and len(hits) < query.limit:
                found = [hit.id for hit in hits]
                filler = await connection.fetch(
                    SQL.select_filler_chunks, list(query.scope), found, query.limit - len(hits)
                )
                hits += [StreamHit(row["id"], 0.0, {}) for row in filler]
            rows = await connection.fetch(SQL.select_hits, [hit.id for hit in hits])
        by_id: dict[uuid.UUID, Any] = {row["id"]: row for row in rows}
        results = []
        for hit in hits:
            row = by_id.get(hit.id)
            if row is None:  # deleted between the two statements
                continue
            fields = dict(row)
            title = fields.pop("title") or fields["source_key"]
            results.append(ChunkHit(msgspec.convert(fields, StoredChunk), title, hit.score, hit.ranks))
        return results
