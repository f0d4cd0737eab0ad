"""Collection search: the shared hybrid retriever over md_chunks, restricted to the scope given."""

from __future__ import annotations

from typing import Any

import asyncpg

from cograph_collections.domain.documents import ChunkHit
from cograph_collections.stores.chunks import TABLE, ChunkStore
from cograph_retrieval import HybridRetriever, Query, StreamHit


class ChunkSearch:
    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool
        self._retriever = HybridRetriever(TABLE)

    async def search(self, query: Query, *, fill_to_limit: bool = False) -> list[ChunkHit]:
        """The fused hits; with fill_to_limit, topped up to the limit with the scope's chunks in a
        fixed order at score 0 (a route's promise: collections up to its count, whatever matched)."""
        hits = await self._retriever.search(self._pool, query)
        async with self._pool.acquire() as connection:
            store = ChunkStore(connection)
            if fill_to_limit and len(hits) < query.limit:
                filler = await store.filler(query.scope, [hit.id for hit in hits], query.limit - len(hits))
                hits += [StreamHit(chunk_id, 0.0, {}) for chunk_id in filler]
            found = await store.hits([hit.id for hit in hits])
        # A chunk deleted between the two statements is left out.
        return [ChunkHit(*found[hit.id], hit.score, hit.ranks) for hit in hits if hit.id in found]
