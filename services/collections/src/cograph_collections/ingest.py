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
import enum
import hashlib
import uuid
from typing import Any

import asyncpg
import msgspec

from cograph_collections.documents import DocumentStore, PreparedDocument
from cograph_collections.jobs import JobStore, Kind
from cograph_collections.markdown import TooManyTableCellsError, parse_markdown
from cograph_collections.markdown.chunker import MarkdownChunker, TooManyChunksError
from cograph_collections.markdown.links import normalise_source_key, validate_source_key

# Control bytes that never occur in text: a file holding them is binary.
_BINARY_BYTES = b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"


def _looks_binary(content: bytes) -> bool:
    """Whether the content holds a NUL anywhere (PostgreSQL text cannot store one) or another
    control byte in its first 64 KiB. bytes.translate deletes those in one C pass: a set test
    per byte cost half of an unchanged re-upload."""
    head = content[:65536]
    return len(head.translate(None, _BINARY_BYTES)) != len(head) or b"\x00" in content


class State(enum.StrEnum):
    CREATED = "created"
    REPLACED = "replaced"
    UNCHANGED = "unchanged"


class Reason(enum.StrEnum):
    INVALID_SOURCE_KEY = "invalid_source_key"
    NOT_UTF8 = "not_utf8"
    BINARY = "binary"
    TOO_LARGE = "too_large"
    DUPLICATE_IN_BATCH = "duplicate_in_batch"


class Failure(msgspec.Struct, frozen=True):
    reason: Reason
    message: str


class Outcome(msgspec.Struct, frozen=True):
    """Exactly one of state and failure is set."""

    source_key: str
    document_id: uuid.UUID | None = None
    state: State | None = None
    failure: Failure | None = None
    warnings: tuple[str, ...] = ()  # the parser's, for a created or replaced document


class Upload(msgspec.Struct, frozen=True):
    source_key: str
    content: bytes


def _decode(upload: Upload, max_bytes: int) -> str | Failure:
    problem = validate_source_key(upload.source_key)
    if problem is not None:
        return Failure(Reason.INVALID_SOURCE_KEY, problem)
    if len(upload.content) > max_bytes:
        return Failure(
            Reason.TOO_LARGE,
            f"{upload.source_key}: {len(upload.content):,} bytes is over the limit of {max_bytes:,} bytes",
        )
    if _looks_binary(upload.content):
        return Failure(Reason.BINARY, f"{upload.source_key}: this is a binary file, not markdown text")
    try:
        return upload.content.decode("utf-8")
    except UnicodeDecodeError as error:
        return Failure(
            Reason.NOT_UTF8,
            f"{upload.source_key}: not valid UTF-8 (at byte {error.start});"
            " save the file as UTF-8 and upload again",
        )


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
            decoded = _decode(upload, self._max_bytes)
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
