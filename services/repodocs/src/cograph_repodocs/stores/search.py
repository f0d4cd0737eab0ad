"""SearchStore: what a search reads beside the shared hybrid retriever (libs/retrieval): the exact
symbol stream over code nodes, and the rows of the hits it fused. The two tables the retriever
searches are described here, with the HNSW indexes its dense stream is planned on.

Takes a connection, as every store does.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import msgspec

from cograph_db import Connection, Queries
from cograph_repodocs.domain.discovery import DocumentKind
from cograph_repodocs.stores.code import CodeNodeRow
from cograph_repodocs.stores.documents import ChunkRow
from cograph_retrieval import ChunkTable, Query, ensure_vector_index

SQL = Queries.load("cograph_repodocs.sql", "search.sql")

DOC_CHUNKS = ChunkTable(
    table="repo_document_chunks",
    scope_column="repository_id",
    term_stats="repo_term_stats",
    scope_stats="repo_scope_stats",
    windows="repo_document_chunk_windows",
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
# The retriever's extra condition on a doc chunk `k`, its parameter being the kinds' values.
_OF_KINDS = "k.document_id IN (SELECT id FROM repo_documents WHERE kind = ANY($1::text[]))"


def of_kinds(query: Query, kinds: Sequence[DocumentKind]) -> Query:
    """`query` over doc chunks, limited to the documents of these kinds (of any kind when none)."""
    if not kinds:
        return query
    return msgspec.structs.replace(query, condition=_OF_KINDS, condition_args=([k.value for k in kinds],))


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class SearchStore:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    async def ensure_vector_indexes(self, dimension: int) -> None:
        """The dense stream's index over vectors of this dimension, on doc chunks and code nodes."""
        for table in (DOC_CHUNKS, CODE_NODES):
            await ensure_vector_index(self._db, table, dimension)

    async def symbol_matches(
        self, repository_ids: Sequence[uuid.UUID], words: list[str], limit: int
    ) -> list[uuid.UUID]:
        """Code nodes named by one of `words` (as a name, a qualified name or its dotted suffix),
        the most exact first."""
        dotted = [_like_escaped(word) for word in words]
        rows = await self._db.fetch(SQL.symbol_stream, list(repository_ids), words, dotted, limit)
        return [row["id"] for row in rows]

    async def chunk_hits(self, chunk_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, ChunkRow]:
        """The doc chunks of these ids that still exist."""
        rows = await self._db.fetch(SQL.select_chunk_hits, list(chunk_ids))
        return {row["id"]: msgspec.convert(dict(row), ChunkRow) for row in rows}

    async def node_hits(self, node_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, CodeNodeRow]:
        """The code nodes of these ids that still exist."""
        rows = await self._db.fetch(SQL.select_node_hits, list(node_ids))
        return {row["id"]: msgspec.convert(dict(row), CodeNodeRow) for row in rows}
