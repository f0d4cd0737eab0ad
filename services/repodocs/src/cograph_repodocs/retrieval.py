"""Retrieval over repository documents and code, with the shared hybrid retriever.

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

from cograph_db import Connection, Queries
from cograph_repodocs.code_store import CodeNodeRow
from cograph_repodocs.document_store import ChunkRow
from cograph_repodocs.domain.discovery import DocumentKind
from cograph_retrieval import ChunkTable, HybridRetriever, Query, Stream

SQL = Queries.load("cograph_repodocs.sql", "retrieval.sql")

DOC_CHUNKS = ChunkTable(
    table="repo_document_chunks",
    scope_column="repository_id",
    term_stats="repo_term_stats",
    scope_stats="repo_scope_stats",
)
CODE_NODES = ChunkTable(
    table="code_nodes",
    scope_column="repository_id",
    term_stats="code_term_stats",
    scope_stats="code_scope_stats",
    text_config="simple",
    lexemes_function="identifier_lexemes",
    positional=False,
)
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


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class RepoSearch:
    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool
        self._docs = HybridRetriever(DOC_CHUNKS)
        self._code = HybridRetriever(CODE_NODES)

    async def docs(self, query: Query, kinds: list[DocumentKind]) -> list[DocHit]:
        if kinds:
            query = msgspec.structs.replace(
                query,
                condition="k.document_id IN (SELECT id FROM repo_documents WHERE kind = ANY($1::text[]))",
                condition_args=([kind.value for kind in kinds],),
            )
        hits = await self._docs.search(self._pool, query)
        async with self._pool.acquire() as connection:
            rows = await connection.fetch(SQL.select_chunk_hits, [hit.id for hit in hits])
        by_id = {row["id"]: msgspec.convert(dict(row), ChunkRow) for row in rows}
        return [DocHit(by_id[hit.id], hit.score, hit.ranks) for hit in hits if hit.id in by_id]

    async def code(self, query: Query, symbol_weight: float) -> list[CodeHit]:
        async def symbols(connection: Connection) -> list[uuid.UUID]:
            if not query.scope:
                return []
            words = symbol_candidates(query.text)
            dotted = [_like_escaped(word) for word in words]
            rows = await connection.fetch(
                SQL.symbol_stream, list(query.scope), words, dotted, query.candidates
            )
            return [row["id"] for row in rows]

        hits = await self._code.search(self._pool, query, {"symbol": Stream(symbol_weight, symbols)})
        async with self._pool.acquire() as connection:
            rows = await connection.fetch(SQL.select_node_hits, [hit.id for hit in hits])
        by_id = {row["id"]: msgspec.convert(dict(row), CodeNodeRow) for row in rows}
        return [CodeHit(by_id[hit.id], hit.score, hit.ranks) for hit in hits if hit.id in by_id]
