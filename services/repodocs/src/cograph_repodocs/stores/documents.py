"""DocumentStore: repo_documents with their chunks and the chunks' symbol mentions.

Takes a connection: the sync writes everything of one run in one transaction.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence

import msgspec
from pgvector import Vector

from cograph_db import Connection, Queries
from cograph_embeddings import ModelInfo
from cograph_repodocs.domain.chunking import Chunk
from cograph_repodocs.domain.discovery import DiscoveredFile, DocumentKind
from cograph_repodocs.domain.mentions import MentionForm
from cograph_repodocs.domain.resolution import Reason
from cograph_retrieval import RECIPE

SQL = Queries.load("cograph_repodocs.sql", "documents.sql")

DOCUMENT_COLUMNS = (
    "id",
    "repository_id",
    "path",
    "kind",
    "title",
    "slug",
    "content",
    "content_hash",
    "size_bytes",
)
CHUNK_COLUMNS = (
    "id",
    "document_id",
    "repository_id",
    "chunk_index",
    "heading_path",
    "heading_anchor",
    "content",
    "chunker_max_words",
    "chunker_overlap_words",
    "embedding",
    "embedding_model",
    "embedding_dim",
    "embedding_recipe",
)
WINDOW_COLUMNS = (
    "chunk_id",
    "window_index",
    "repository_id",
    "embedding",
    "embedding_model",
    "embedding_dim",
)
MENTION_COLUMNS = ("chunk_id", "code_node_id", "form", "mention", "mention_start", "reason")


class DocumentState(msgspec.Struct, frozen=True, kw_only=True):
    """An indexed document as a sync compares it with the checkout."""

    id: uuid.UUID
    path: str
    content_hash: str
    kind: DocumentKind
    slug: str
    stale: bool
    """Some chunk was embedded by another model, or by this one at another dimension or by another
    recipe, or built with other chunker parameters: the document is indexed again although its
    text did not change."""


class ContentMatch(msgspec.Struct, frozen=True):
    content_hash: str
    repository_id: uuid.UUID
    repository: str  # host/owner/name
    document_id: uuid.UUID
    path: str


class DocumentRow(msgspec.Struct, frozen=True, kw_only=True):
    id: uuid.UUID
    repository_id: uuid.UUID
    path: str
    kind: DocumentKind
    title: str
    slug: str
    content_hash: str
    indexed_at: dt.datetime
    chunk_count: int
    content: str = ""


class PageRow(msgspec.Struct, frozen=True, kw_only=True):
    id: uuid.UUID
    path: str
    title: str
    slug: str


class ChunkRow(msgspec.Struct, frozen=True, kw_only=True):
    id: uuid.UUID
    document_id: uuid.UUID
    repository_id: uuid.UUID
    chunk_index: int
    heading_path: list[str]
    heading_anchor: str
    content: str
    embedding_model: str | None
    path: str
    slug: str
    kind: DocumentKind
    document_title: str


class RelatedChunkRow(ChunkRow, frozen=True, kw_only=True):
    code_node_id: uuid.UUID
    form: MentionForm
    reason: Reason | None  # None: linked before reasons were stored


class NewChunk(msgspec.Struct, frozen=True):
    id: uuid.UUID
    document_id: uuid.UUID
    chunk: Chunk
    vector: Vector | None
    """The first window's vector (cograph_retrieval.passages), by the current recipe."""
    windows: Sequence[Vector] = ()
    """The vectors of the windows after the first, of a chunk longer than the model reads."""


class MentionRow(msgspec.Struct, frozen=True):
    chunk_id: uuid.UUID
    code_node_id: uuid.UUID
    form: MentionForm
    mention: str
    start: int
    """Offset of the mention in its chunk's text: a page's related code follows it."""
    reason: Reason | None = None
    """Why the mention resolved to this node."""


class DocumentStore:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    # The sync's reads and writes.

    async def states(
        self, repository_id: uuid.UUID, model: ModelInfo, max_words: int, overlap_words: int
    ) -> list[DocumentState]:
        """Every document; `stale` when a chunk was not embedded by `model` at its dimension by the
        current recipe, or was built with other chunker parameters."""
        rows = await self._db.fetch(
            SQL.select_document_states,
            repository_id,
            model.name,
            model.dimension,
            max_words,
            overlap_words,
            RECIPE,
        )
        return [msgspec.convert(dict(row), DocumentState) for row in rows]

    async def delete(self, document_ids: Sequence[uuid.UUID]) -> None:
        if document_ids:
            await self._db.execute(SQL.delete_documents, list(document_ids))

    async def delete_chunks(self, document_ids: Sequence[uuid.UUID]) -> None:
        if document_ids:
            await self._db.execute(SQL.delete_chunks_of_documents, list(document_ids))

    async def update(self, documents: Sequence[tuple[uuid.UUID, DiscoveredFile, str]]) -> None:
        """(id, file, title) each: the document keeps its id, and so its slug and its URL."""
        if documents:
            await self._db.executemany(
                SQL.update_document,
                [
                    (doc_id, f.kind.value, title, f.content, f.content_hash, f.size_bytes)
                    for doc_id, f, title in documents
                ],
            )

    async def insert(
        self, repository_id: uuid.UUID, documents: Sequence[tuple[uuid.UUID, DiscoveredFile, str, str]]
    ) -> None:
        """(id, file, title, slug) each."""
        if documents:
            await self._db.copy_records_to_table(
                "repo_documents",
                columns=DOCUMENT_COLUMNS,
                records=[
                    (
                        doc_id,
                        repository_id,
                        f.path,
                        f.kind.value,
                        title,
                        slug,
                        f.content,
                        f.content_hash,
                        f.size_bytes,
                    )
                    for doc_id, f, title, slug in documents
                ],
            )

    async def set_slugs(self, slugs: dict[uuid.UUID, str]) -> None:
        if slugs:
            await self._db.execute(SQL.update_slugs, list(slugs), list(slugs.values()))

    async def insert_chunks(
        self,
        repository_id: uuid.UUID,
        chunks: Sequence[NewChunk],
        model: ModelInfo,
        max_words: int,
        overlap_words: int,
    ) -> None:
        if chunks:
            await self._db.copy_records_to_table(
                "repo_document_chunks",
                columns=CHUNK_COLUMNS,
                records=[
                    (
                        c.id,
                        c.document_id,
                        repository_id,
                        c.chunk.chunk_index,
                        c.chunk.heading_path,
                        c.chunk.heading_anchor,
                        c.chunk.text,
                        max_words,
                        overlap_words,
                        c.vector,
                        model.name if c.vector is not None else None,
                        model.dimension if c.vector is not None else None,
                        RECIPE if c.vector is not None else None,
                    )
                    for c in chunks
                ],
            )
            await self._db.copy_records_to_table(
                "repo_document_chunk_windows",
                columns=WINDOW_COLUMNS,
                records=[
                    (c.id, index, repository_id, vector, model.name, model.dimension)
                    for c in chunks
                    for index, vector in enumerate(c.windows, start=1)
                ],
            )

    async def chunk_texts(self, repository_id: uuid.UUID) -> list[tuple[uuid.UUID, str, str, int, list[str]]]:
        """(id, document path, text, chunk index, heading path) of every chunk of the repository."""
        rows = await self._db.fetch(SQL.select_chunk_texts, repository_id)
        return [
            (row["id"], row["path"], row["content"], row["chunk_index"], list(row["heading_path"]))
            for row in rows
        ]

    async def delete_mentions(self, repository_id: uuid.UUID) -> None:
        await self._db.execute(SQL.delete_mentions_of_repository, repository_id)

    async def insert_mentions(self, mentions: Sequence[MentionRow]) -> None:
        if mentions:
            await self._db.copy_records_to_table(
                "repo_document_chunk_mentions",
                columns=MENTION_COLUMNS,
                records=[
                    (
                        m.chunk_id,
                        m.code_node_id,
                        m.form.value,
                        m.mention,
                        m.start,
                        m.reason.value if m.reason is not None else None,
                    )
                    for m in mentions
                ],
            )

    async def count_mentions(self, repository_id: uuid.UUID) -> int:
        count: int = await self._db.fetchval(SQL.count_mentions, repository_id)
        return count

    # Reads for the RPCs.

    async def summaries(
        self,
        repository_id: uuid.UUID,
        kinds: Sequence[DocumentKind],
        *,
        limit: int,
        after: Sequence[str | None],
    ) -> list[DocumentRow]:
        """Ordered by path, after that path (a page token's)."""
        rows = await self._db.fetch(
            SQL.select_documents, repository_id, [k.value for k in kinds], limit, *after
        )
        return [msgspec.convert(dict(row), DocumentRow) for row in rows]

    async def by_content(
        self, repository_ids: Sequence[uuid.UUID] | None, content_hashes: Sequence[str]
    ) -> list[ContentMatch]:
        """Documents with these digests, in these repositories or in every one (None)."""
        scope = None if repository_ids is None else list(repository_ids)
        rows = await self._db.fetch(SQL.select_documents_by_content, scope, list(content_hashes))
        return [msgspec.convert(dict(row), ContentMatch) for row in rows]

    async def get(self, repository_id: uuid.UUID, document_id: uuid.UUID) -> DocumentRow | None:
        row = await self._db.fetchrow(SQL.select_document, repository_id, document_id)
        return msgspec.convert(dict(row), DocumentRow) if row else None

    async def by_slug(self, repository_id: uuid.UUID, slug: str) -> DocumentRow | None:
        row = await self._db.fetchrow(SQL.select_document_by_slug, repository_id, slug)
        return msgspec.convert(dict(row), DocumentRow) if row else None

    async def pages(self, repository_id: uuid.UUID) -> list[PageRow]:
        rows = await self._db.fetch(SQL.select_pages, repository_id)
        return [msgspec.convert(dict(row), PageRow) for row in rows]

    async def chunk(self, repository_id: uuid.UUID, chunk_id: uuid.UUID) -> ChunkRow | None:
        row = await self._db.fetchrow(SQL.select_chunk, repository_id, chunk_id)
        return msgspec.convert(dict(row), ChunkRow) if row else None

    async def related(
        self, code_node_ids: Sequence[uuid.UUID], repository_ids: Sequence[uuid.UUID], limit: int
    ) -> list[RelatedChunkRow]:
        rows = await self._db.fetch(
            SQL.select_related_chunks, list(code_node_ids), list(repository_ids), limit
        )
        return [msgspec.convert(dict(row), RelatedChunkRow) for row in rows]
