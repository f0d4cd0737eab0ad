"""Documents: uploads, reads and deletes, and the work of the jobs that follow an upload.

Uploads run inline and are recorded as `upload` jobs; embedding and link resolution are queued
for the workers, which run this module's handlers.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg

from cograph_collections.application.embedding import ChunkEmbedder
from cograph_collections.application.ingest import Ingestor
from cograph_collections.application.jobs import Progress, beat
from cograph_collections.domain.documents import (
    ContentMatch,
    EmbedStatus,
    StoredChunk,
    StoredDocument,
    StoredLink,
)
from cograph_collections.domain.jobs import Claimed, Kind
from cograph_collections.domain.uploads import Outcome, Upload, all_refused, check_batch
from cograph_collections.markdown import ChunkDraft, parse_markdown
from cograph_collections.markdown.chunker import MarkdownChunker
from cograph_collections.stores.chunks import ChunkStore
from cograph_collections.stores.collections import CollectionStore
from cograph_collections.stores.documents import DocumentStore
from cograph_collections.stores.jobs import JobStore
from cograph_embeddings import EmbeddingProvider
from cograph_errors import NotFound


class Documents:
    def __init__(
        self,
        pool: asyncpg.Pool[Any],
        embedder: EmbeddingProvider,
        *,
        max_document_bytes: int,
        max_batch_documents: int,
        chunker: MarkdownChunker | None = None,
        heartbeat_seconds: float = 10.0,
    ) -> None:
        self._pool = pool
        self._embedder = embedder
        self._chunker = chunker or MarkdownChunker()
        self._max_batch = max_batch_documents
        self._ingestor = Ingestor(pool, max_document_bytes, self._chunker)
        self._chunk_embedder = ChunkEmbedder(pool, embedder)
        self._heartbeat_seconds = heartbeat_seconds

    async def upload(
        self, collection_id: uuid.UUID, uploads: list[Upload], requested_by: str
    ) -> tuple[list[Outcome], uuid.UUID]:
        """Ingest a batch, recorded as an upload job (ingestion queues embedding and linking)."""
        async with self._pool.acquire() as connection:
            await CollectionStore(connection).get(collection_id)
            check_batch(len(uploads), self._max_batch)
            job_id = await JobStore(connection).start_inline(collection_id, Kind.UPLOAD, requested_by)
        # The upload runs here, not in a worker: it beats like a worker's job, or a long batch
        # would be swept as a dead one while it is still being written.
        beating = asyncio.create_task(
            beat(self._pool, job_id, self._heartbeat_seconds, lambda: (0, len(uploads)))
        )
        try:
            outcomes = await self._ingestor.ingest(collection_id, uploads, requested_by)
        except BaseException as error:
            await asyncio.shield(self._finish(job_id, f"{type(error).__name__}: {error}"))
            raise
        finally:
            beating.cancel()
        # Shielded: a caller that gives up now (a deadline) must not leave the job running
        # until the sweep calls its worker dead; what it wrote is committed, its jobs queued.
        refused = all_refused(outcomes)
        await asyncio.shield(self._finish(job_id, refused, done=len(outcomes), total=len(uploads)))
        return outcomes, job_id

    async def _finish(self, job_id: uuid.UUID, error: str | None, **progress: int) -> None:
        async with self._pool.acquire() as connection:
            await JobStore(connection).finish(job_id, error, **progress)

    async def get(
        self, collection_id: uuid.UUID, document_id: uuid.UUID
    ) -> tuple[StoredDocument, list[StoredLink]]:
        """The document with its links."""
        # One snapshot: a replacement committed between the two reads gave one version's content
        # with the other's links.
        async with (
            self._pool.acquire() as connection,
            connection.transaction(isolation="repeatable_read", readonly=True),
        ):
            store = DocumentStore(connection)
            document = await store.get(collection_id, document_id)
            if document is None:
                raise NotFound(f"document {document_id} does not exist in collection {collection_id}")
            return document, await store.links(document_id)

    async def summaries(
        self, collection_id: uuid.UUID, *, limit: int, after: Sequence[str | None]
    ) -> list[StoredDocument]:
        """The documents without their content, by source key after that key. The caller has
        looked the collection up: of one that does not exist, there are none."""
        async with self._pool.acquire() as connection:
            return await DocumentStore(connection).summaries(collection_id, limit, after)

    async def delete(self, collection_id: uuid.UUID, document_id: uuid.UUID, requested_by: str) -> None:
        async with self._pool.acquire() as connection, connection.transaction():
            store = DocumentStore(connection)
            await store.lock_collection(collection_id, alone=True)
            if not await store.delete(collection_id, document_id):
                raise NotFound(f"document {document_id} does not exist in collection {collection_id}")
            # Links that pointed at it are unresolved now; another document may fit them.
            await JobStore(connection).enqueue(collection_id, Kind.RESOLVE_LINKS, requested_by=requested_by)

    async def by_content(
        self, scope: list[uuid.UUID] | None, content_hashes: list[str]
    ) -> list[ContentMatch]:
        """The documents that hold exactly those bytes, in those collections or in every one (None)."""
        if not content_hashes or (scope is not None and not scope):
            return []
        async with self._pool.acquire() as connection:
            return await DocumentStore(connection).by_content(scope, content_hashes)

    async def chunks(
        self, collection_id: uuid.UUID, document_id: uuid.UUID, *, limit: int, after: Sequence[str | None]
    ) -> list[StoredChunk]:
        """A document's chunks in document order, after that chunk index."""
        async with self._pool.acquire() as connection:
            if await DocumentStore(connection).get(collection_id, document_id) is None:
                raise NotFound(f"document {document_id} does not exist in collection {collection_id}")
            return await ChunkStore(connection).chunks(collection_id, document_id, limit, after)

    async def chunk(self, collection_id: uuid.UUID, chunk_id: uuid.UUID) -> StoredChunk:
        async with self._pool.acquire() as connection:
            chunk = await ChunkStore(connection).chunk(collection_id, chunk_id)
        if chunk is None:
            raise NotFound(f"chunk {chunk_id} does not exist in collection {collection_id}")
        return chunk

    async def embed_status(self, collection_id: uuid.UUID) -> EmbedStatus:
        async with self._pool.acquire() as connection:
            await CollectionStore(connection).get(collection_id)
        model = await self._embedder.info()
        async with self._pool.acquire() as connection:
            return await ChunkStore(connection).embed_status(
                collection_id, model.name, model.dimension, self._chunker.params
            )

    # Job handlers, run by the worker.

    async def run_embed(self, job: Claimed, progress: Progress) -> None:
        everything = bool(job.payload.get("all"))
        if everything:
            await self._rechunk_outdated(job.collection_id)
        await self._chunk_embedder.embed_collection(
            job.collection_id, everything=everything, progress=progress
        )

    async def run_resolve_links(self, job: Claimed, progress: Progress) -> None:
        # Links no document fits stay unresolved, visible on their documents.
        async with self._pool.acquire() as connection, connection.transaction():
            store = DocumentStore(connection)
            await store.lock_collection(job.collection_id, alone=True)
            await store.resolve_links(job.collection_id)
        await progress(1, 1)

    def _chunks(self, content: str) -> Sequence[ChunkDraft]:
        return self._chunker.chunk(parse_markdown(content))

    async def _rechunk_outdated(self, collection_id: uuid.UUID) -> None:
        """Rebuild the chunks of documents chunked with other parameters. Their text is
        unchanged, so their links are too: they keep their bindings, and a re-embed stopped
        half-way leaves none unbound."""
        async with self._pool.acquire() as connection:
            outdated = await DocumentStore(connection).outdated(collection_id, self._chunker.params)
        for document in outdated:
            # Parsing is CPU work: off the event loop, where heartbeats and requests run.
            chunks = await asyncio.to_thread(self._chunks, document.content)
            async with self._pool.acquire() as connection, connection.transaction():
                store = DocumentStore(connection)
                await store.lock_collection(collection_id)
                # An upload may have replaced or deleted it since it was read: that upload chunked
                # its own text with today's parameters, and must not be undone from the old copy.
                locked = await store.lock(collection_id, document.source_key)
                if locked != (document.id, document.content_hash):
                    continue
                await store.rechunk(collection_id, document.id, chunks)

    def handlers(self) -> dict[Kind, Any]:
        return {Kind.EMBED: self.run_embed, Kind.RESOLVE_LINKS: self.run_resolve_links}
