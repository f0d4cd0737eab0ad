"""Ingestion: validate, hash, and only for new or changed content parse, chunk and write.

A bad document is refused before anything is written, with its own reason, and never
affects the others. The good ones of a batch are written in one transaction (all or
nothing: never a partial write), together with the embed and resolve_links jobs that
follow them: a written document always has its jobs queued, however the upload call ends.
Only a batch that passes one of PostgreSQL's own limits is written again one document per
transaction, so that the document past the limit fails alone.
An unchanged document costs one hash comparison: no parse, no chunk, no write, no embedding.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from typing import Any

import asyncpg

from cograph_collections.domain.documents import PreparedDocument
from cograph_collections.domain.jobs import Kind
from cograph_collections.domain.uploads import Failure, Outcome, Reason, State, Upload, decode
from cograph_collections.markdown import TooManyTableCellsError, parse_markdown
from cograph_collections.markdown.chunker import MarkdownChunker, TooManyChunksError
from cograph_collections.markdown.links import normalise_source_key
from cograph_collections.stores.documents import DocumentStore
from cograph_collections.stores.jobs import JobStore


def _too_large(document: PreparedDocument, error: asyncpg.PostgresError) -> Outcome:
    reason = f"{document.source_key}: too large for the database to index ({error.message})"
    return Outcome(document.source_key, failure=Failure(Reason.TOO_LARGE, reason))


class Ingestor:
    def __init__(self, pool: asyncpg.Pool[Any], max_document_bytes: int, chunker: MarkdownChunker) -> None:
        self._pool = pool
        self._max_bytes = max_document_bytes
        self._chunker = chunker

    def _prepare(
        self, source_key: str, text: str, content_hash: str, size: int
    ) -> PreparedDocument | Failure:
        try:
            parsed = parse_markdown(text)
            chunks = self._chunker.chunk(parsed)
        except (TooManyTableCellsError, TooManyChunksError) as error:
            return Failure(Reason.TOO_LARGE, f"{source_key}: {error}")
        return PreparedDocument(source_key, text, content_hash, size, parsed, chunks)

    async def ingest(
        self, collection_id: uuid.UUID, uploads: list[Upload], requested_by: str
    ) -> list[Outcome]:
        """Results in upload order; the collection must exist (the caller checked)."""
        uploads = list(uploads)  # accepted ones get their canonical key, the caller's list stays
        outcomes: list[Outcome | None] = [None] * len(uploads)
        texts: dict[int, str] = {}
        seen: set[str] = set()
        for index, upload in enumerate(uploads):
            decoded = decode(upload, self._max_bytes)
            if isinstance(decoded, Failure):
                outcomes[index] = Outcome(upload.source_key, failure=decoded)
                continue
            # One document per path: './a.md', '/a.md', 'a\\b.md' and 'a//b.md' are stored (and
            # reported) under their canonical key, so spelling a path two ways is no duplicate.
            key = normalise_source_key(upload.source_key)
            uploads[index] = Upload(key, upload.content)
            if key in seen:
                failure = Failure(Reason.DUPLICATE_IN_BATCH, f"{key} appears twice in this batch")
                outcomes[index] = Outcome(key, failure=failure)
            else:
                seen.add(key)
                texts[index] = decoded
        hashes = {index: hashlib.sha256(uploads[index].content).hexdigest() for index in texts}
        async with self._pool.acquire() as connection:
            stored = await DocumentStore(connection).hashes(
                collection_id, [uploads[i].source_key for i in texts]
            )
        changed: list[int] = []
        for index in texts:
            key = uploads[index].source_key
            if key in stored and stored[key][1] == hashes[index]:
                outcomes[index] = Outcome(key, document_id=stored[key][0], state=State.UNCHANGED)
            else:
                changed.append(index)
        if changed:
            # Parsing is CPU work: off the event loop, which other services may share.
            prepared = await asyncio.to_thread(
                lambda: [
                    self._prepare(uploads[i].source_key, texts[i], hashes[i], len(uploads[i].content))
                    for i in changed
                ]
            )
            writable: dict[int, PreparedDocument] = {}
            for index, document in zip(changed, prepared, strict=True):
                if isinstance(document, Failure):
                    outcomes[index] = Outcome(uploads[index].source_key, failure=document)
                else:
                    writable[index] = document
            for index, outcome in (await self._write(collection_id, writable, requested_by)).items():
                outcomes[index] = outcome
        return [outcome for outcome in outcomes if outcome is not None]

    async def _write(
        self, collection_id: uuid.UUID, documents: dict[int, PreparedDocument], requested_by: str
    ) -> dict[int, Outcome]:
        """The batch in one transaction; when a document passes one of PostgreSQL's own limits
        (an index row, a tsvector: text no check before it foresees), the documents one by one,
        so that one refuses with the reason and the others are written."""
        try:
            return await self._write_together(collection_id, documents, requested_by)
        except asyncpg.ProgramLimitExceededError as error:
            if len(documents) == 1:
                return {index: _too_large(document, error) for index, document in documents.items()}
        results: dict[int, Outcome] = {}
        for index, document in documents.items():
            try:
                results |= await self._write_together(collection_id, {index: document}, requested_by)
            except asyncpg.ProgramLimitExceededError as error:
                results[index] = _too_large(document, error)
        return results

    async def _write_together(
        self, collection_id: uuid.UUID, documents: dict[int, PreparedDocument], requested_by: str
    ) -> dict[int, Outcome]:
        """One transaction, with the jobs that embed and link what it writes. Keys are locked
        in sorted order, so concurrent uploads of the same keys serialise on the row locks and
        never deadlock."""
        results: dict[int, Outcome] = {}
        parts: list[tuple[uuid.UUID, PreparedDocument]] = []
        async with self._pool.acquire() as connection, connection.transaction():
            store = DocumentStore(connection)
            await store.lock_collection(collection_id)  # it may have been deleted while we parsed
            for index, document in sorted(documents.items(), key=lambda item: item[1].source_key):
                key = document.source_key
                existing = await store.lock(collection_id, key)
                if existing is None:
                    document_id = await store.insert(collection_id, document)
                    if document_id is not None:
                        warnings = document.parsed.warnings
                        results[index] = Outcome(key, document_id, State.CREATED, warnings=warnings)
                        parts.append((document_id, document))
                        continue
                    existing = await store.lock(collection_id, key)  # created meanwhile by another upload
                    assert existing is not None
                document_id, stored_hash = existing
                if stored_hash == document.content_hash:
                    results[index] = Outcome(key, document_id=document_id, state=State.UNCHANGED)
                    continue
                await store.update(document_id, document)
                results[index] = Outcome(key, document_id, State.REPLACED, warnings=document.parsed.warnings)
                parts.append((document_id, document))
            await store.write_parts(collection_id, parts)
            if parts:
                jobs = JobStore(connection)
                await jobs.enqueue(collection_id, Kind.EMBED, requested_by=requested_by)
                await jobs.enqueue(collection_id, Kind.RESOLVE_LINKS, requested_by=requested_by)
        return results
