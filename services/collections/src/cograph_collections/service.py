"""The collections application: what an RPC or a job asks for, in domain terms.

Uploads run inline and are recorded as `upload` jobs; embedding and link resolution are
queued for the workers. The servicer maps protobuf to these calls; the worker runs the
handlers.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg
import msgspec

from cograph_collections.documents import SQL as DOCUMENT_SQL
from cograph_collections.documents import DocumentStore
from cograph_collections.embedding import ChunkEmbedder, Progress
from cograph_collections.ingest import Failure, Ingestor, Outcome, Reason, Upload
from cograph_collections.jobs import Claimed, Job, JobStore, Kind, Status, beat
from cograph_collections.markdown import ChunkDraft, parse_markdown
from cograph_collections.markdown.chunker import MarkdownChunker
from cograph_embeddings import EmbeddingProvider
from cograph_grpc import FailedPrecondition, NotFound, shown


class EmbedStatus(msgspec.Struct, frozen=True):
    total: int
    embedded: int
    pending: int
    stale: int
    outdated_chunker: int
    model: str


class Collections:
    def __init__(
        self,
        pool: asyncpg.Pool[Any],
        embedder: EmbeddingProvider,
        *,
        max_document_bytes: int,
        chunker: MarkdownChunker | None = None,
        heartbeat_seconds: float = 10.0,
    ) -> None:
        self._pool = pool
        self._embedder = embedder
        self._chunker = chunker or MarkdownChunker()
        self._ingestor = Ingestor(pool, max_document_bytes, self._chunker)
        self._chunk_embedder = ChunkEmbedder(pool, embedder)
        self._heartbeat_seconds = heartbeat_seconds

    async def upload(
        self, collection_id: uuid.UUID, uploads: list[Upload], requested_by: str
    ) -> tuple[list[Outcome], uuid.UUID]:
        """Ingest a batch, recorded as an upload job (ingestion queues embedding and linking)."""
        async with self._pool.acquire() as connection:
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
        refused = _all_refused(outcomes)
        await asyncio.shield(self._finish(job_id, refused, done=len(outcomes), total=len(uploads)))
        return outcomes, job_id

    async def _finish(self, job_id: uuid.UUID, error: str | None, **progress: int) -> None:
        async with self._pool.acquire() as connection:
            await JobStore(connection).finish(job_id, error, **progress)

    async def delete_document(
        self, collection_id: uuid.UUID, document_id: uuid.UUID, requested_by: str
    ) -> None:
        async with self._pool.acquire() as connection, connection.transaction():
            store = DocumentStore(connection)
            await store.lock_collection(collection_id, alone=True)
            if not await store.delete(collection_id, document_id):
                raise NotFound(f"document {document_id} does not exist in collection {collection_id}")
            # Links that pointed at it are unresolved now; another document may fit them.
            await JobStore(connection).enqueue(collection_id, Kind.RESOLVE_LINKS, requested_by=requested_by)

    async def re_embed(self, collection_id: uuid.UUID, requested_by: str) -> Job:
        """Re-chunk what older chunker parameters built, then embed every chunk anew."""
        async with self._pool.acquire() as connection:
            jobs = JobStore(connection)
            job_id = await jobs.enqueue(
                collection_id, Kind.EMBED, requested_by=requested_by, payload={"all": True}
            )
            job = await jobs.get(job_id)
        assert job is not None
        return job

    async def retry(self, job_id: uuid.UUID, requested_by: str) -> Job:
        """A new job row for the same work. Uploads cannot be retried: their content is gone."""
        async with self._pool.acquire() as connection:
            jobs = JobStore(connection)
            job = await jobs.get(job_id)
            if job is None:
                raise NotFound(f"job {job_id} does not exist")
            if job.kind is Kind.UPLOAD:
                raise FailedPrecondition(
                    "an upload job cannot be retried: the uploaded content is not kept; re-upload the batch"
                )
            if job.status in (Status.QUEUED, Status.RUNNING):
                raise FailedPrecondition(f"job {job_id} is {job.status.value}: there is nothing to retry yet")
            new_id = await jobs.enqueue(
                job.collection_id, job.kind, requested_by=requested_by, retry_of=job.id, payload=job.payload
            )
            retried = await jobs.get(new_id)
        assert retried is not None
        return retried

    async def embed_status(self, collection_id: uuid.UUID) -> EmbedStatus:
        model = await self._embedder.info()
        params = self._chunker.params
        async with self._pool.acquire() as connection:
            row = await connection.fetchrow(
                DOCUMENT_SQL.embed_status,
                collection_id,
                model.name,
                model.dimension,
                params.max_chars,
                params.min_chars,
                params.max_chunks,
            )
        assert row is not None
        return EmbedStatus(
            total=row["total"],
            embedded=row["embedded"],
            pending=row["pending"],
            stale=row["stale"],
            outdated_chunker=row["outdated_chunker"],
            model=model.name,
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
        params = self._chunker.params
        async with self._pool.acquire() as connection:
            rows = await connection.fetch(
                DOCUMENT_SQL.select_outdated_documents,
                collection_id,
                params.max_chars,
                params.min_chars,
                params.max_chunks,
            )
        for row in rows:
            # Parsing is CPU work: off the event loop, where heartbeats and requests run.
            chunks = await asyncio.to_thread(self._chunks, row["content"])
            async with self._pool.acquire() as connection, connection.transaction():
                store = DocumentStore(connection)
                await store.lock_collection(collection_id)
                # An upload may have replaced or deleted it since it was read: that upload chunked
                # its own text with today's parameters, and must not be undone from the old copy.
                if await store.lock(collection_id, row["source_key"]) != (row["id"], row["content_hash"]):
                    continue
                await store.rechunk(collection_id, row["id"], chunks)

    def handlers(self) -> dict[Kind, Any]:
        return {Kind.EMBED: self.run_embed, Kind.RESOLVE_LINKS: self.run_resolve_links}


def _all_refused(outcomes: list[Outcome]) -> str | None:
    """The error of an upload that stored nothing (each document refused), else None: the job
    list must not show a success for a batch that left the collection as it was."""
    refused = [(outcome.source_key, outcome.failure) for outcome in outcomes if outcome.failure is not None]
    if not refused or len(refused) < len(outcomes):
        return None
    reason = _refusal(*refused[0])
    if len(refused) == 1:
        return f"the document was refused: {reason}"
    return f"all {len(refused)} documents were refused; the first: {reason}"


def _refusal(key: str, failure: Failure) -> str:
    """The refusal as the job list shows it. Other refusals name their (valid) key already; a
    refused key is shown escaped and cut short, since it may hold a NUL, which PostgreSQL's text
    cannot store, or be megabytes long."""
    if failure.reason is not Reason.INVALID_SOURCE_KEY:
        return failure.message
    return f"{shown(key)}: {failure.message}"
