"""DocumentStore: md_documents with the chunks and links written with them, and the locks that
serialise the writes into a collection (sql/documents.sql)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import msgspec

from cograph_collections.domain.documents import (
    ContentMatch,
    DocumentText,
    PreparedDocument,
    StoredDocument,
    StoredLink,
    wiki_key,
)
from cograph_collections.markdown import ChunkDraft, ChunkerParams, ParsedDocument
from cograph_collections.markdown.links import ROOT_FOLDER_KEY, link_target_key, normalise_source_key
from cograph_db import Connection, Queries
from cograph_errors import NotFound

SQL = Queries.load("cograph_collections.sql", "documents.sql")

CHUNK_COLUMNS = (
    "document_id",
    "collection_id",
    "chunk_index",
    "heading_path",
    "heading_level",
    "section_anchor",
    "content",
    "start_line",
    "end_line",
    "chunker_max_chars",
    "chunker_min_chars",
    "chunker_max_chunks",
)
LINK_COLUMNS = (
    "document_id",
    "collection_id",
    "ordinal",
    "text",
    "href",
    "line",
    "link_type",
    "anchor",
    "target_key",
    "written_key",
)


def _stored_values(document: PreparedDocument) -> tuple[object, ...]:
    """What insert_document and update_document store of a document beyond its key, in their
    parameters' order (normalised_key to line_count)."""
    parsed = document.parsed
    return (
        normalise_source_key(document.source_key),
        wiki_key(document.source_key),
        document.content,
        document.content_hash,
        document.size_bytes,
        parsed.title,
        parsed.frontmatter,
        _structure(parsed),
        parsed.word_count,
        parsed.line_count,
    )


def _structure(parsed: ParsedDocument) -> dict[str, Any]:
    return {
        "heading_tree": msgspec.to_builtins(parsed.heading_tree),
        "code_blocks": msgspec.to_builtins(parsed.code_blocks),
        "tables": msgspec.to_builtins(parsed.tables),
        "warnings": list(parsed.warnings),
    }


class DocumentStore:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    async def hashes(
        self, collection_id: uuid.UUID, source_keys: list[str]
    ) -> dict[str, tuple[uuid.UUID, str]]:
        """source_key -> (document id, content hash) of the keys already stored."""
        rows = await self._db.fetch(SQL.select_hashes, collection_id, source_keys)
        return {row["source_key"]: (row["id"], row["content_hash"]) for row in rows}

    async def lock_collection(self, collection_id: uuid.UUID, *, alone: bool = False) -> None:
        """NotFound unless the collection exists; it then stays until the transaction ends (a
        delete meanwhile waits, rather than pulling the rows being written from under them).

        Writers of documents share the lock: each touches only its own documents' rows, taken
        in key order. Binding links and deleting a document hold it `alone`: they touch links
        of every document, so beside a writer that deletes its own they would deadlock, and a
        bind could name a document deleted after it looked. Requests are served in turn: a
        stream of uploads cannot hold a bind or a delete back."""
        query = SQL.lock_collection_alone if alone else SQL.lock_collection
        if not await self._db.fetchval(query, collection_id):
            raise NotFound(f"collection {collection_id} does not exist")

    async def lock(self, collection_id: uuid.UUID, source_key: str) -> tuple[uuid.UUID, str] | None:
        """The stored (id, hash) of a key, locked until the transaction ends."""
        row = await self._db.fetchrow(SQL.lock_document, collection_id, source_key)
        return (row["id"], row["content_hash"]) if row else None

    async def insert(self, collection_id: uuid.UUID, document: PreparedDocument) -> uuid.UUID | None:
        """The new document's row (write_parts adds its chunks and links); None when a
        concurrent upload created the key first."""
        document_id: uuid.UUID | None = await self._db.fetchval(
            SQL.insert_document, collection_id, document.source_key, *_stored_values(document)
        )
        return document_id

    async def update(self, document_id: uuid.UUID, document: PreparedDocument) -> None:
        """New content under the same id, so links that point at the document stay bound.
        Its old chunks and links go; write_parts brings the new ones."""
        await self._db.execute(SQL.update_document, document_id, *_stored_values(document))
        await self._db.execute(SQL.delete_chunks, document_id)
        await self._db.execute(SQL.delete_links, document_id)

    async def write_parts(
        self, collection_id: uuid.UUID, documents: list[tuple[uuid.UUID, PreparedDocument]]
    ) -> None:
        """Chunks and links of many documents, one COPY each, so the term statistics are updated once."""
        await self._write_chunks(
            collection_id, [(document_id, document.chunks) for document_id, document in documents]
        )
        await self._write_links(collection_id, documents)

    async def outdated(self, collection_id: uuid.UUID, params: ChunkerParams) -> list[DocumentText]:
        """The documents with a chunk made with other chunker parameters."""
        rows = await self._db.fetch(
            SQL.select_outdated_documents,
            collection_id,
            params.max_chars,
            params.min_chars,
            params.max_chunks,
        )
        return [msgspec.convert(dict(row), DocumentText) for row in rows]

    async def rechunk(
        self, collection_id: uuid.UUID, document_id: uuid.UUID, chunks: Sequence[ChunkDraft]
    ) -> None:
        """New chunks for a document whose text is unchanged (chunked with other parameters):
        its links are the same links, and keep the documents they are bound to."""
        await self._db.execute(SQL.delete_chunks, document_id)
        await self._write_chunks(collection_id, [(document_id, chunks)])

    async def _write_chunks(
        self, collection_id: uuid.UUID, documents: list[tuple[uuid.UUID, Sequence[ChunkDraft]]]
    ) -> None:
        chunks = [
            (
                document_id,
                collection_id,
                chunk.chunk_index,
                list(chunk.heading_path),
                chunk.heading_level,
                chunk.section_anchor or "",
                chunk.content,
                chunk.start_line,
                chunk.end_line,
                chunk.params.max_chars,
                chunk.params.min_chars,
                chunk.params.max_chunks,
            )
            for document_id, document_chunks in documents
            for chunk in document_chunks
        ]
        if chunks:
            await self._db.copy_records_to_table("md_chunks", records=chunks, columns=CHUNK_COLUMNS)

    async def _write_links(
        self, collection_id: uuid.UUID, documents: list[tuple[uuid.UUID, PreparedDocument]]
    ) -> None:
        links = []
        for document_id, document in documents:
            for ordinal, link in enumerate(document.parsed.links):
                target, anchor = link_target_key(link.href, link.link_type, document.source_key)
                written: str | None = None
                if target is not None and link.link_type == "wiki":
                    target = target.casefold()
                elif link.link_type in ("markdown", "relative"):
                    written = link_target_key(link.href, link.link_type, "")[0]  # from the root
                    # './' or '..' read from the root is the root: no fallback for a link that
                    # names its own folder or its parent
                    written = None if written in (target, ROOT_FOLDER_KEY) else written
                where = (link.text, link.href, link.line, link.link_type, anchor, target, written)
                links.append((document_id, collection_id, ordinal, *where))
        if links:
            await self._db.copy_records_to_table("md_links", records=links, columns=LINK_COLUMNS)

    async def get(self, collection_id: uuid.UUID, document_id: uuid.UUID) -> StoredDocument | None:
        row = await self._db.fetchrow(SQL.select_document, collection_id, document_id)
        return msgspec.convert(dict(row), StoredDocument) if row else None

    async def by_content(
        self, collection_ids: Sequence[uuid.UUID] | None, content_hashes: Sequence[str]
    ) -> list[ContentMatch]:
        """Documents with these digests, in these collections or in every one (None)."""
        scope = None if collection_ids is None else list(collection_ids)
        rows = await self._db.fetch(SQL.select_documents_by_content, scope, list(content_hashes))
        return [msgspec.convert(dict(row), ContentMatch) for row in rows]

    async def summaries(
        self, collection_id: uuid.UUID, limit: int, after: Sequence[str | None]
    ) -> list[StoredDocument]:
        """Ordered by source key, after that key (a page token's)."""
        rows = await self._db.fetch(SQL.select_document_summaries, collection_id, limit, *after)
        return [msgspec.convert(dict(row), StoredDocument) for row in rows]

    async def links(self, document_id: uuid.UUID) -> list[StoredLink]:
        return [
            msgspec.convert(dict(row), StoredLink)
            for row in await self._db.fetch(SQL.select_links, document_id)
        ]

    async def delete(self, collection_id: uuid.UUID, document_id: uuid.UUID) -> bool:
        """Chunks and links go with it; links of other documents that pointed here become unresolved."""
        return await self._db.fetchval(SQL.delete_document, collection_id, document_id) is not None

    async def resolve_links(self, collection_id: uuid.UUID) -> int:
        """Bind what can be bound; answers how many links are still unresolved."""
        await self._db.execute(SQL.resolve_links, collection_id)
        unresolved: int = await self._db.fetchval(SQL.count_unresolved_links, collection_id)
        return unresolved
