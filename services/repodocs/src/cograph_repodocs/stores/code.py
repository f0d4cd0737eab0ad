"""CodeStore: code_files (one content hash per source file) and code_nodes (their symbols).

Takes a connection: the sync writes everything of one run in one transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import msgspec
from pgvector import Vector

from cograph_db import Connection, Queries
from cograph_embeddings import ModelInfo
from cograph_repodocs.domain.mentions import MentionForm
from cograph_repodocs.domain.resolution import Reason
from cograph_repodocs.domain.symbols import EMBEDDED_KINDS, Alias, Symbol, SymbolKind

SQL = Queries.load("cograph_repodocs.sql", "code.sql")

NODE_COLUMNS = (
    "id",
    "repository_id",
    "path",
    "name",
    "qualified_name",
    "kind",
    "language",
    "start_line",
    "end_line",
    "signature",
    "embedding",
    "embedding_model",
    "embedding_dim",
)


class StoredNode(msgspec.Struct, frozen=True, kw_only=True):
    """What a sync needs of an existing node to keep its id and decide whether to re-embed it."""

    id: uuid.UUID
    path: str
    name: str
    qualified_name: str
    kind: SymbolKind
    signature: str
    start_line: int
    embedding_model: str | None
    embedding_dim: int | None

    def embedded_by(self, model: ModelInfo) -> bool:
        """Whether its vector is the current one: this model's name and dimension (one model name can
        give vectors of several dimensions, and the dense stream looks for the query's only)."""
        return self.embedding_model == model.name and self.embedding_dim == model.dimension


class CodeNodeRow(Symbol, frozen=True, kw_only=True):
    """A symbol as stored: with its id and repository."""

    id: uuid.UUID
    repository_id: uuid.UUID


class MentionedNodeRow(CodeNodeRow, frozen=True, kw_only=True):
    """A node a docs page mentions, with the page's most deliberate mention of it."""

    mention: str
    """The identifier as the page writes it."""
    form: MentionForm
    reason: Reason | None  # None: linked before reasons were stored


class NewNode(msgspec.Struct, frozen=True):
    id: uuid.UUID
    symbol: Symbol


class CodeStore:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    async def file_hashes(self, repository_id: uuid.UUID) -> dict[str, str]:
        rows = await self._db.fetch(SQL.select_code_files, repository_id)
        return {row["path"]: row["content_hash"] for row in rows}

    async def nodes_of_files(self, repository_id: uuid.UUID, paths: Sequence[str]) -> list[StoredNode]:
        rows = await self._db.fetch(SQL.select_nodes_of_files, repository_id, list(paths))
        return [msgspec.convert(dict(row), StoredNode) for row in rows]

    async def nodes_to_embed(self, repository_id: uuid.UUID, model: ModelInfo) -> list[StoredNode]:
        """Nodes of the embedded kinds whose vector is missing or was not made by `model` at its
        dimension."""
        rows = await self._db.fetch(
            SQL.select_nodes_to_embed,
            repository_id,
            model.name,
            model.dimension,
            sorted(kind.value for kind in EMBEDDED_KINDS),
        )
        return [msgspec.convert(dict(row), StoredNode) for row in rows]

    async def delete_files(self, repository_id: uuid.UUID, paths: Sequence[str]) -> None:
        if paths:
            await self._db.execute(SQL.delete_code_files, repository_id, list(paths))

    async def put_files(self, repository_id: uuid.UUID, hashes: dict[str, str]) -> None:
        if hashes:
            await self._db.execute(SQL.upsert_code_files, repository_id, list(hashes), list(hashes.values()))

    async def delete_nodes(self, node_ids: Sequence[uuid.UUID]) -> None:
        if node_ids:
            await self._db.execute(SQL.delete_nodes, list(node_ids))

    async def update_nodes(self, nodes: Sequence[NewNode]) -> None:
        if nodes:
            await self._db.executemany(
                SQL.update_node,
                [
                    (
                        n.id,
                        n.symbol.name,
                        n.symbol.language.value,
                        n.symbol.start_line,
                        n.symbol.end_line,
                        n.symbol.signature,
                    )
                    for n in nodes
                ],
            )

    async def insert_nodes(
        self,
        repository_id: uuid.UUID,
        nodes: Sequence[NewNode],
        vectors: dict[uuid.UUID, Vector],
        model: ModelInfo,
    ) -> None:
        if not nodes:
            return
        # COPY: a first sync of a large repository writes tens of thousands of nodes.
        await self._db.copy_records_to_table(
            "code_nodes",
            columns=NODE_COLUMNS,
            records=[
                (
                    n.id,
                    repository_id,
                    n.symbol.path,
                    n.symbol.name,
                    n.symbol.qualified_name,
                    n.symbol.kind.value,
                    n.symbol.language.value,
                    n.symbol.start_line,
                    n.symbol.end_line,
                    n.symbol.signature,
                    vectors.get(n.id),
                    model.name if n.id in vectors else None,
                    model.dimension if n.id in vectors else None,
                )
                for n in nodes
            ],
        )

    async def set_embeddings(self, vectors: dict[uuid.UUID, Vector], model: ModelInfo) -> None:
        if vectors:
            await self._db.executemany(
                SQL.update_node_embedding,
                [(node_id, vector, model.name, model.dimension) for node_id, vector in vectors.items()],
            )

    async def symbol_rows(self, repository_id: uuid.UUID) -> list[tuple[str, str, str, str, str]]:
        """(id, name, qualified_name, path, kind) of every node: what mentions are resolved against."""
        rows = await self._db.fetch(SQL.select_symbol_index, repository_id)
        return [
            (str(row["id"]), row["name"], row["qualified_name"], row["path"], row["kind"]) for row in rows
        ]

    async def replace_aliases(self, repository_id: uuid.UUID, aliases: dict[str, list[Alias]]) -> None:
        """The re-exports of the files in `aliases` (path -> its aliases), in place of those stored."""
        if not aliases:
            return
        await self._db.execute(SQL.delete_aliases_of_files, repository_id, list(aliases))
        await self._db.copy_records_to_table(
            "code_aliases",
            columns=("repository_id", "path", "name", "target", "public"),
            records=[
                (repository_id, path, a.name, a.target, a.public)
                for path, items in aliases.items()
                for a in items
            ],
        )

    async def aliases(self, repository_id: uuid.UUID) -> list[Alias]:
        rows = await self._db.fetch(SQL.select_aliases, repository_id)
        return [Alias(name=row["name"], target=row["target"], public=row["public"]) for row in rows]

    async def in_scope(
        self, node_ids: Sequence[uuid.UUID], repository_ids: Sequence[uuid.UUID]
    ) -> set[uuid.UUID]:
        """Those of node_ids that belong to one of repository_ids."""
        rows = await self._db.fetch(SQL.select_nodes_in_scope, list(node_ids), list(repository_ids))
        return {row["id"] for row in rows}

    async def count(self, repository_id: uuid.UUID) -> int:
        count: int = await self._db.fetchval(SQL.count_nodes, repository_id)
        return count

    async def mentioned_by_document(self, document_id: uuid.UUID) -> list[MentionedNodeRow]:
        """The nodes the document mentions, in the order it first mentions them, each with its most
        deliberate mention there (a reference, a backticked name, a call, a dotted name)."""
        rows = await self._db.fetch(SQL.select_nodes_mentioned_by_document, document_id)
        return [msgspec.convert(dict(row), MentionedNodeRow) for row in rows]
