"""Search over repository documents and code, with the shared hybrid retriever (libs/retrieval).

Doc chunks: dense + BM25 (english). Code nodes: dense + BM25 over identifier lexemes (whole,
dotted parts, snake_case and camelCase parts) + an exact symbol stream on name and
qualified_name. Every query is restricted to the repository ids passed in.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import asyncpg
import msgspec

from cograph_db import Connection
from cograph_repodocs.domain.discovery import DocumentKind
from cograph_repodocs.stores.code import CodeNodeRow
from cograph_repodocs.stores.documents import ChunkRow
from cograph_repodocs.stores.search import CODE_NODES, DOC_CHUNKS, SearchStore, of_kinds
from cograph_retrieval import HybridRetriever, Query, Stream

# Identifier-shaped words of a query: ParseConfig, parse_config, pkg.module.Class, `validate()`.
# A name as the indexed languages write one: letters (any script), digits, '_' and '$' ($http),
# dotted (app.Vue2Router.$route).
_IDENTIFIER = re.compile(r"(?:[^\W\d]|\$)[\w$]*(?:\.(?:[^\W\d]|\$)[\w$]*)*")


class DocHit(msgspec.Struct, frozen=True):
    chunk: ChunkRow
    score: float
    ranks: dict[str, int]


class CodeHit(msgspec.Struct, frozen=True):
    node: CodeNodeRow
    score: float
    ranks: dict[str, int]


def symbol_candidates(text: str) -> list[str]:
    return list(
        dict.fromkeys(match.group(0) for match in _IDENTIFIER.finditer(text) if len(match.group(0)) > 1)
    )


class Search:
    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool
        self._docs = HybridRetriever(DOC_CHUNKS)
        self._code = HybridRetriever(CODE_NODES)

    async def docs(self, query: Query, kinds: list[DocumentKind]) -> list[DocHit]:
        hits = await self._docs.search(self._pool, of_kinds(query, kinds))
        async with self._pool.acquire() as connection:
            by_id = await SearchStore(connection).chunk_hits([hit.id for hit in hits])
        return [DocHit(by_id[hit.id], hit.score, hit.ranks) for hit in hits if hit.id in by_id]

    async def code(self, query: Query, symbol_weight: float) -> list[CodeHit]:
        async def symbols(connection: Connection) -> list[uuid.UUID]:
            if not query.scope:
                return []
            words = symbol_candidates(query.text)
            return await SearchStore(connection).symbol_matches(query.scope, words, query.candidates)

        hits = await self._code.search(self._pool, query, {"symbol": Stream(symbol_weight, symbols)})
        async with self._pool.acquire() as connection:
            by_id = await SearchStore(connection).node_hits([hit.id for hit in hits])
        return [CodeHit(by_id[hit.id], hit.score, hit.ranks) for hit in hits if hit.id in by_id]
