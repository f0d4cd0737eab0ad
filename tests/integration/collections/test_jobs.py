"""Jobs: the row is the queue; workers claim once and heartbeat; the sweep finds jobs of a dead
worker (requeued: see test_job_requeue.py; an upload's ends as an error); retry makes a new job,
except for uploads."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence

import asyncpg
import grpc
import msgspec
import pytest
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_collections.application import documents as documents_application
from cograph_collections.application.documents import Documents
from cograph_collections.application.jobs import Jobs
from cograph_collections.application.worker import Worker
from cograph_collections.domain.jobs import Claimed, Kind
from cograph_collections.domain.uploads import State, Upload
from cograph_collections.markdown import MarkdownChunker, ParsedDocument, parse_markdown
from cograph_collections.stores.jobs import JobStore
from cograph_db import connect, create_pool
from cograph_embeddings import EmbeddingProvider
from cograph_errors import FailedPrecondition, NotFound
from support.collections import Running
from support.embedding import CountingProvider
from support.threads import in_another_thread


async def test_upload_queues_embedding_which_the_worker_runs(
    service: Running, collection: pb.Collection
) -> None:
    response = await service.upload(
        collection.id, ("a.md", b"# Alpha\n\nFirst."), ("b.md", b"# Beta\n\nSecond.")
    )
    jobs = await service.wait_for_jobs(collection.id)
    by_kind = {job.kind: job for job in jobs}
    assert set(by_kind) == {pb.JOB_KIND_UPLOAD, pb.JOB_KIND_EMBED, pb.JOB_KIND_RESOLVE_LINKS}
    assert all(job.status == pb.JOB_STATUS_SUCCESS for job in jobs)
    assert by_kind[pb.JOB_KIND_UPLOAD].id == response.job_id
    assert by_kind[pb.JOB_KIND_UPLOAD].progress_done == 2
    assert by_kind[pb.JOB_KIND_EMBED].progress_done == 2
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert (status.total_chunks, status.embedded_chunks, status.pending_chunks, status.stale_chunks) == (
        2,
        2,
        0,
        0,
    )
    assert status.model == "all-MiniLM-L6-v2"
    chunk = (
        await service.stub.ListChunks(
            pb.ListChunksRequest(collection_id=collection.id, document_id=response.results[0].document_id)
        )
    ).chunks[0]
    assert chunk.embedding_model == "all-MiniLM-L6-v2"


async def test_an_upload_that_stores_nothing_ends_as_an_error_saying_why(
    service: Running, collection: pb.Collection
) -> None:
    """Each document refused: the job says so (it is no success), and starts no other job."""
    alone = await service.upload(collection.id, ("../escape.md", b"# Out\n"))
    several = await service.upload(collection.id, ("bin.md", b"\x89PNG\r\n\x00\x00"), ("", b"# No key\n"))
    mixed = await service.upload(collection.id, ("kept.md", b"# Kept\n\nText."), ("../out.md", b"# Out\n"))
    # A refused key may hold a NUL (PostgreSQL's text cannot) or run to megabytes: the job's
    # error shows it escaped and cut short.
    nul = await service.upload(collection.id, ("a\x00b.md", b"# NUL\n"))
    long_key = await service.upload(collection.id, ("k" * 5000 + ".md", b"# Long\n"))
    jobs = {job.id: job for job in await service.wait_for_jobs(collection.id)}
    assert jobs[alone.job_id].status == pb.JOB_STATUS_ERROR
    assert jobs[alone.job_id].error.startswith("the document was refused: '../escape.md': ")
    assert "'..'" in jobs[alone.job_id].error
    assert jobs[several.job_id].status == pb.JOB_STATUS_ERROR
    assert jobs[several.job_id].error == (
        "all 2 documents were refused; the first: bin.md: this is a binary file, not markdown text"
    )
    assert jobs[nul.job_id].error == (
        "the document was refused: 'a\\x00b.md': source key contains a NUL or control character"
    )
    assert nul.results[0].error.reason == pb.DocumentError.REASON_INVALID_SOURCE_KEY
    assert jobs[long_key.job_id].error.startswith("the document was refused: '" + "k" * 100 + "…': ")
    assert len(jobs[long_key.job_id].error) < 300
    assert jobs[mixed.job_id].status == pb.JOB_STATUS_SUCCESS  # one document was stored
    assert not jobs[mixed.job_id].error
    documents = await service.stub.ListDocuments(pb.ListDocumentsRequest(collection_id=collection.id))
    assert [document.source_key for document in documents.documents] == ["kept.md"]


async def test_unchanged_reupload_costs_no_embedding(service: Running, collection: pb.Collection) -> None:
    docs = [(f"doc-{i}.md", f"# Doc {i}\n\nBody {i}.".encode()) for i in range(5)]
    await service.upload(collection.id, *docs)
    await service.wait_for_jobs(collection.id)
    calls_before = service.counter.calls
    again = await service.upload(collection.id, *docs)
    assert again.counts.unchanged == 5
    jobs = await service.wait_for_jobs(collection.id)
    assert service.counter.calls == calls_before
    assert sum(job.kind == pb.JOB_KIND_EMBED for job in jobs) == 1  # no new embed job was queued


async def test_an_embed_job_does_not_wait_for_other_writers_once_its_index_exists(
    service: Running, collection: pb.Collection, database: str
) -> None:
    """CREATE INDEX locks the chunk table against every writer even when the index exists, so the
    embed job looks its index up first: a long write elsewhere does not hold embedding up."""
    await service.upload(collection.id, ("a.md", b"# Alpha\n\nFirst."))
    await service.wait_for_jobs(collection.id)  # the first embed job created the index
    writer = await connect(database)
    try:
        async with writer.transaction():
            await writer.execute("LOCK TABLE collections.md_chunks IN ROW EXCLUSIVE MODE")  # as a writer
            await service.upload(collection.id, ("b.md", b"# Beta\n\nSecond."))
            jobs = await service.wait_for_jobs(collection.id, timeout=20)
    finally:
        await writer.close()
    assert all(job.status == pb.JOB_STATUS_SUCCESS for job in jobs)
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert (status.embedded_chunks, status.pending_chunks) == (2, 0)


async def test_retry_is_refused_for_uploads_and_makes_a_new_job_otherwise(
    service: Running, collection: pb.Collection
) -> None:
    response = await service.upload(collection.id, ("a.md", b"# A\n\nText."))
    await service.wait_for_jobs(collection.id)
    with pytest.raises(aio.AioRpcError) as refused:
        await service.stub.RetryJob(pb.RetryJobRequest(job_id=response.job_id, requested_by="alice"))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "re-upload the batch" in (refused.value.details() or "")
    jobs = await service.wait_for_jobs(collection.id)
    embed = next(job for job in jobs if job.kind == pb.JOB_KIND_EMBED)
    retried = (await service.stub.RetryJob(pb.RetryJobRequest(job_id=embed.id, requested_by="alice"))).job
    assert retried.id != embed.id
    assert retried.retry_of == embed.id
    assert retried.kind == pb.JOB_KIND_EMBED
    finished = {job.id: job for job in await service.wait_for_jobs(collection.id)}
    assert finished[retried.id].status == pb.JOB_STATUS_SUCCESS


async def test_a_retry_joins_an_identical_queued_job_and_says_so(
    service: Running, collection: pb.Collection, database: str, embedder: EmbeddingProvider
) -> None:
    await service.upload(collection.id, ("a.md", b"# A\n\nText."))
    jobs = await service.wait_for_jobs(collection.id)
    embed = next(job for job in jobs if job.kind == pb.JOB_KIND_EMBED)
    await service.host.stop()  # no worker: a queued job stays queued
    pool = await create_pool(database, service.settings.database, schema="collections")
    try:
        async with pool.acquire() as connection:
            queued_id = await JobStore(connection).enqueue(uuid.UUID(collection.id), Kind.EMBED)
        queue = Jobs(pool, max_attempts=3)
        retried = await queue.retry(uuid.UUID(embed.id), "alice")
        # The queued job itself has nothing to retry yet (it would answer itself, its own retry).
        with pytest.raises(FailedPrecondition, match="is queued: there is nothing to retry yet"):
            await queue.retry(queued_id, "alice")
    finally:
        await pool.close()
    assert (retried.id, retried.status) == (queued_id, "queued")  # the work runs once
    assert retried.retry_of == uuid.UUID(embed.id)


async def test_re_embed_embeds_every_chunk_again(service: Running, collection: pb.Collection) -> None:
    await service.upload(collection.id, ("a.md", b"# A\n\nText."), ("b.md", b"# B\n\nMore."))
    await service.wait_for_jobs(collection.id)
    texts_before = service.counter.texts
    job = (
        await service.stub.ReEmbedCollection(
            pb.ReEmbedCollectionRequest(collection_id=collection.id, requested_by="alice")
        )
    ).job
    assert job.kind == pb.JOB_KIND_EMBED
    done = {j.id: j for j in await service.wait_for_jobs(collection.id)}
    assert done[job.id].status == pb.JOB_STATUS_SUCCESS
    assert service.counter.texts - texts_before == 2


async def test_job_listing_filters_by_status_and_kind(service: Running, collection: pb.Collection) -> None:
    await service.upload(collection.id, ("a.md", b"# A\n\nText."))
    await service.wait_for_jobs(collection.id)
    uploads = await service.stub.ListJobs(
        pb.ListJobsRequest(
            collection_ids=[collection.id], kind=pb.JOB_KIND_UPLOAD, status=pb.JOB_STATUS_SUCCESS
        )
    )
    assert [job.kind for job in uploads.jobs] == [pb.JOB_KIND_UPLOAD]
    none = await service.stub.ListJobs(pb.ListJobsRequest(collection_ids=[], kind=pb.JOB_KIND_UPLOAD))
    assert list(none.jobs) == []


async def test_two_workers_never_run_the_same_job(
    service: Running, collection: pb.Collection, database: str, embedder: EmbeddingProvider
) -> None:
    """Claims race on one queued job: exactly one worker gets it."""
    await service.host.stop()  # its in-process worker must not take the job first
    pool = await create_pool(database, service.settings.database, schema="collections")
    try:
        async with pool.acquire() as connection:
            job_id = await JobStore(connection).enqueue(uuid.UUID(collection.id), Kind.RESOLVE_LINKS)
        documents = Documents(pool, embedder, max_document_bytes=1_000_000, max_batch_documents=1000)
        workers = [
            Worker(pool, database, documents.handlers(), service.settings.collections) for _ in range(4)
        ]
        ran = await asyncio.gather(*(worker.run_once() for worker in workers))
        assert sorted(ran) == [False, False, False, True]
        async with pool.acquire() as connection:
            job = await JobStore(connection).get(job_id)
        assert job is not None
        assert job.status == "success"
    finally:
        await pool.close()


async def test_a_long_upload_beats_and_is_never_swept_as_dead(
    service: Running, collection: pb.Collection, database: str, embedder: EmbeddingProvider
) -> None:
    """Uploads run inline, not in a worker: while one waits (here on a row lock another writer
    holds) it keeps its heartbeat, so the sweep leaves it alone; one whose process died is
    swept with the advice that fits an upload."""
    collection_id = uuid.UUID(collection.id)
    await service.upload(collection.id, ("a.md", b"# A\n\nFirst."))
    pool = await create_pool(database, service.settings.database, schema="collections")
    writer = await connect(database)

    def sweeper(stale_after_seconds: float) -> Worker:
        settings = msgspec.structs.replace(
            service.settings.collections,
            heartbeat_seconds=stale_after_seconds / 3,
            stale_after_seconds=stale_after_seconds,
        )
        return Worker(pool, database, {}, settings)

    try:
        documents = Documents(
            pool, embedder, max_document_bytes=1_000_000, max_batch_documents=1000, heartbeat_seconds=0.05
        )
        async with writer.transaction():
            await writer.execute(
                "SELECT 1 FROM collections.md_documents WHERE collection_id = $1 FOR UPDATE", collection_id
            )
            upload = asyncio.create_task(
                documents.upload(collection_id, [Upload("a.md", b"# A\n\nSecond.")], "alice")
            )
            await asyncio.sleep(1.0)
            swept = await sweeper(0.5).sweep()
            assert not upload.done()
        outcomes, job_id = await upload
        assert [outcome.state for outcome in outcomes] == [State.REPLACED]
        assert job_id not in swept
        async with pool.acquire() as connection:
            jobs = JobStore(connection)
            job = await jobs.get(job_id)
            assert job is not None
            assert job.status == "success"
            dead = await connection.fetchval(
                "INSERT INTO md_jobs (collection_id, kind, status, started_at, heartbeat_at)"
                " VALUES ($1, 'upload', 'running', now() - interval '1 hour', now() - interval '1 hour')"
                " RETURNING id",
                collection_id,
            )
        assert dead in await sweeper(service.settings.collections.stale_after_seconds).sweep()
        async with pool.acquire() as connection:
            swept_upload = await JobStore(connection).get(dead)
    finally:
        await writer.close()
        await pool.close()
    assert swept_upload is not None
    assert swept_upload.error is not None
    assert swept_upload.error.endswith("re-upload the batch")


@pytest.mark.parametrize("finishes_in_time", [True, False])
async def test_a_stopping_worker_drains_then_records_what_it_cut_off(
    service: Running, collection: pb.Collection, database: str, finishes_in_time: bool
) -> None:
    """Stop claims nothing new, waits worker_drain_seconds for the running job, and a job cut
    off is settled at once, with the reason (not a 'running' row left for the sweep): here an
    identical job was queued meanwhile, so the cut-off one ends and hands its work to it (alone,
    it would be queued again: see test_job_requeue.py)."""
    await service.host.stop()  # its in-process worker must not take the jobs
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(job: object, report: Callable[[int, int], Awaitable[None]]) -> None:
        await report(1, 3)
        started.set()
        await release.wait()

    settings = msgspec.structs.replace(service.settings.collections, worker_drain_seconds=0.5)
    pool = await create_pool(database, service.settings.database, schema="collections")
    try:
        async with pool.acquire() as connection:
            jobs = JobStore(connection)
            running_id = await jobs.enqueue(uuid.UUID(collection.id), Kind.RESOLVE_LINKS)
        worker = Worker(pool, database, {Kind.RESOLVE_LINKS: slow}, settings)
        await worker.start()
        await asyncio.wait_for(started.wait(), timeout=10)
        async with pool.acquire() as connection:
            waiting_id = await JobStore(connection).enqueue(uuid.UUID(collection.id), Kind.RESOLVE_LINKS)
        if finishes_in_time:
            asyncio.get_running_loop().call_later(0.1, release.set)
        await worker.stop()
        async with pool.acquire() as connection:
            ran = await JobStore(connection).get(running_id)
            waiting = await JobStore(connection).get(waiting_id)
    finally:
        await pool.close()
    assert ran is not None
    assert waiting is not None
    assert waiting.status == "queued"  # a stopping worker claims nothing more
    if finishes_in_time:
        assert ran.status == "success"
    else:
        assert ran.status == "error"
        assert ran.error == (
            "the worker running this job was lost (its worker stopped before the job finished"
            f" (1 of 3 done)); job {waiting_id} does its work"
        )
        assert waiting.retry_of == running_id


async def test_a_job_that_outlives_a_lost_database_connection_still_succeeds(
    service: Running, collection: pb.Collection, database: str
) -> None:
    """The database goes away for a few beats while a job runs: those beats fail, the heart keeps
    going once it is back, the sweep finds the job alive, and it ends a success."""
    await service.host.stop()  # its in-process worker must not take the job
    settings = msgspec.structs.replace(
        service.settings.collections, heartbeat_seconds=0.2, stale_after_seconds=1.5
    )
    pool = await create_pool(database, service.settings.database, schema="collections")
    name = await pool.fetchval("SELECT current_database()")
    admin = await asyncpg.connect(database, database="postgres")  # another database: it stays up
    watcher = await connect(database)  # spared by the outage, to watch the job

    async def outlives(job: object, report: Callable[[int, int], Awaitable[None]]) -> None:
        await asyncio.sleep(0.5)
        # An outage: the worker's connections are cut and new ones refused for a few beats.
        await admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
        cut = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> $2",
            name,
            watcher.get_server_pid(),
        )
        assert cut > 0
        await asyncio.sleep(0.7)
        await admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')
        await asyncio.sleep(2.0)  # with the outage, longer than stale_after_seconds: beats keep it alive
        await report(1, 1)

    try:
        async with pool.acquire() as connection:
            job_id = await JobStore(connection).enqueue(uuid.UUID(collection.id), Kind.RESOLVE_LINKS)
        worker = Worker(pool, database, {Kind.RESOLVE_LINKS: outlives}, settings)
        await worker.start()
        for _ in range(100):
            job = await watcher.fetchrow(
                "SELECT status, error FROM collections.md_jobs WHERE id = $1", job_id
            )
            if job["status"] in ("success", "error"):
                break
            await asyncio.sleep(0.1)
        await worker.stop()
    finally:
        await watcher.close()
        await admin.close()
        await pool.close()
    assert (job["status"], job["error"]) == ("success", None)


@pytest.mark.parametrize("meanwhile", ["upload", "delete"])
async def test_a_re_embed_never_undoes_an_upload_or_a_delete_made_while_it_runs(
    service: Running,
    collection: pb.Collection,
    database: str,
    embedder: EmbeddingProvider,
    monkeypatch: pytest.MonkeyPatch,
    meanwhile: str,
) -> None:
    """Re-chunking reads the outdated documents, then rewrites them one by one: a document
    replaced or deleted in between keeps what that upload or delete made of it."""
    await service.upload(
        collection.id, ("a.md", b"# A\n\nversion one\n"), ("b.md", b"# B\n\nsee [a](a.md)\n")
    )
    await service.wait_for_jobs(collection.id)
    await service.host.stop()  # no worker: this test runs the re-embed itself
    collection_id = uuid.UUID(collection.id)
    pool = await create_pool(database, service.settings.database, schema="collections")
    await pool.execute("UPDATE md_chunks SET chunker_max_chars = 1234")  # built with other parameters

    async def other_client() -> object:
        other = await create_pool(database, service.settings.database, schema="collections")
        try:
            if meanwhile == "upload":
                uploads = [Upload("a.md", b"# A\n\nversion two\n")]
                outcomes, _ = await Documents(
                    other, embedder, max_document_bytes=10_000, max_batch_documents=1000
                ).upload(collection_id, uploads, "bob")
                return outcomes[0].state
            return await other.execute("DELETE FROM md_documents WHERE source_key = 'a.md'")
        finally:
            await other.close()

    parse = parse_markdown
    acted: list[object] = []

    def parse_after_the_other_client(text: str) -> ParsedDocument:
        if not acted and "version one" in text:  # the re-embed has read a.md: now the other client acts
            acted.append(in_another_thread(other_client))
        return parse(text)

    monkeypatch.setattr(documents_application, "parse_markdown", parse_after_the_other_client)
    try:
        job = Claimed(uuid.uuid4(), collection_id, Kind.EMBED, {"all": True}, "alice")

        async def progress(done: int, total: int) -> None:
            return None

        await Documents(pool, embedder, max_document_bytes=10_000, max_batch_documents=1000).run_embed(
            job, progress
        )
        stored = {
            r["source_key"]: r["content"]
            for r in await pool.fetch("SELECT source_key, content FROM md_documents")
        }
        chunks = await pool.fetch(
            "SELECT d.source_key, k.content, k.chunker_max_chars FROM md_chunks k"
            " JOIN md_documents d ON d.id = k.document_id ORDER BY 1"
        )
    finally:
        await pool.close()
    if meanwhile == "upload":
        assert acted == [State.REPLACED]
        assert stored["a.md"] == "# A\n\nversion two\n"
        assert [c["content"] for c in chunks if c["source_key"] == "a.md"] == ["# A\n\nversion two"]
    else:
        assert acted == ["DELETE 1"]
        assert "a.md" not in stored
    # b.md was re-chunked with today's parameters all the same.
    assert {c["chunker_max_chars"] for c in chunks} == {MarkdownChunker().params.max_chars}


async def test_work_on_a_collection_deleted_meanwhile_is_not_found(
    service: Running, embedder: EmbeddingProvider, database: str
) -> None:
    """The gRPC handlers look a collection up first; one deleted between that and the job row
    is NOT_FOUND (no foreign-key INTERNAL), with nothing written."""
    gone = uuid.uuid4()
    pool = await create_pool(database, service.settings.database, schema="collections")
    try:
        documents = Documents(pool, embedder, max_document_bytes=1_000_000, max_batch_documents=1000)
        with pytest.raises(NotFound, match=f"collection {gone} does not exist"):
            await documents.upload(gone, [Upload("a.md", b"# A\n")], "alice")
        async with pool.acquire() as connection:
            with pytest.raises(NotFound):
                await JobStore(connection).enqueue(gone, Kind.EMBED)
            assert (
                await connection.fetchval("SELECT count(*) FROM md_jobs WHERE collection_id = $1", gone) == 0
            )
    finally:
        await pool.close()


async def test_an_upload_whose_caller_gives_up_still_embeds_what_it_wrote(
    service: Running, collection: pb.Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller's deadline passes after the documents were written, while the upload job is
    being finished: the embed and resolve_links jobs were queued with the documents, and the
    upload job still ends as a success, not as a dead worker's job for the sweep."""
    finish = JobStore.finish

    async def slow_finish(
        self: JobStore, job_id: uuid.UUID, error: str | None = None, **progress: int
    ) -> None:
        await asyncio.sleep(1.5)
        await finish(self, job_id, error, **progress)

    monkeypatch.setattr(JobStore, "finish", slow_finish)
    request = pb.UploadDocumentsRequest(
        collection_id=collection.id,
        documents=[pb.DocumentContent(source_key="a.md", content=b"# Alpha\n\nWritten, then given up on.")],
        requested_by="alice",
    )
    with pytest.raises(aio.AioRpcError) as given_up:
        await service.stub.UploadDocuments(request, timeout=0.75)
    assert given_up.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    jobs = await service.wait_for_jobs(collection.id)
    assert {(job.kind, job.status) for job in jobs} == {
        (pb.JOB_KIND_UPLOAD, pb.JOB_STATUS_SUCCESS),
        (pb.JOB_KIND_EMBED, pb.JOB_STATUS_SUCCESS),
        (pb.JOB_KIND_RESOLVE_LINKS, pb.JOB_STATUS_SUCCESS),
    }
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert (status.total_chunks, status.embedded_chunks, status.pending_chunks) == (1, 1, 0)


async def test_a_second_embed_job_waits_for_the_running_one_and_nothing_is_embedded_twice(
    service: Running, collection: pb.Collection, database: str, embedder: EmbeddingProvider
) -> None:
    """Two workers, two embed jobs of one collection: the second is not claimed while the first
    runs (it would embed the same unembedded chunks, paid twice), and runs once it is done."""
    await service.host.stop()  # its in-process worker must not take the jobs
    embedded: list[str] = []
    embedding, gate = asyncio.Event(), asyncio.Event()

    class Gated(CountingProvider):
        async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
            embedded.extend(texts)
            embedding.set()
            await gate.wait()
            return await super()._embed_batch(texts)

    async def work(worker: Worker) -> None:
        while await worker.run_once():
            pass

    pool = await create_pool(database, service.settings.database, schema="collections")
    try:
        documents = Documents(pool, Gated(embedder), max_document_bytes=1_000_000, max_batch_documents=1000)
        first, second = (
            Worker(pool, database, documents.handlers(), service.settings.collections) for _ in range(2)
        )
        collection_id = uuid.UUID(collection.id)
        uploads = [Upload(f"first-{i}.md", f"# First {i}\n\nBody {i}.".encode()) for i in range(3)]
        await documents.upload(collection_id, uploads, "alice")
        working = asyncio.ensure_future(work(first))
        await asyncio.wait_for(embedding.wait(), 30)
        await documents.upload(collection_id, [Upload("second.md", b"# Second\n\nLater.")], "alice")
        # It may link, but not embed beside the running embed job (it would wait at the gate).
        await asyncio.wait_for(work(second), 30)
        async with pool.acquire() as connection:
            queued = await connection.fetch("SELECT kind FROM md_jobs WHERE status = 'queued'")
        assert [row["kind"] for row in queued] == ["embed"]
        gate.set()
        await working
        await work(second)
        async with pool.acquire() as connection:
            left = await connection.fetchval("SELECT count(*) FROM md_jobs WHERE status <> 'success'")
    finally:
        await pool.close()
    assert left == 0
    assert sorted(embedded) == sorted(
        [*(f"# First {i}\n\nBody {i}." for i in range(3)), "# Second\n\nLater."]
    ), "a chunk was embedded twice or never"


async def test_vectors_of_the_model_at_another_dimension_are_stale_and_embedded_again(
    service: Running, collection: pb.Collection, database: str, embedder: EmbeddingProvider
) -> None:
    """COGRAPH_EMBEDDING__DIMENSIONS changed, the model name kept: the stored vectors cannot be
    compared with queries any more. They count as stale, and the next embed job replaces them,
    where they passed for current and the dense stream found nothing, for good."""
    await service.upload(collection.id, ("a.md", b"# Alpha\n\nThe zorblax restarts the pump."))
    await service.wait_for_jobs(collection.id)
    connection = await connect(database)
    try:  # as the same model asked for three dimensions embedded them
        await connection.execute(
            "UPDATE collections.md_chunks SET embedding = '[0.1, 0.2, 0.3]', embedding_dim = 3"
            " WHERE collection_id = $1",
            uuid.UUID(collection.id),
        )
    finally:
        await connection.close()
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert (status.embedded_chunks, status.stale_chunks) == (0, 1)

    await service.upload(collection.id, ("b.md", b"# Beta\n\nSomething else entirely."))  # queues an embed
    await service.wait_for_jobs(collection.id)
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert (status.embedded_chunks, status.pending_chunks, status.stale_chunks) == (2, 0, 0)
    response = await service.stub.SearchChunks(
        pb.SearchChunksRequest(
            collection_ids=[collection.id],
            query="pump restart",
            query_embedding=await embedder.embed_query("pump restart"),
            embedding_model=(await embedder.info()).name,
            limit=2,
            dense_weight=1.0,
            text_weight=0.0,
            rrf_k=60,
        )
    )
    assert [hit.document_title for hit in response.hits] == ["Alpha", "Beta"]
    assert response.hits[0].ranks.dense == 1  # found by its vector, not left out


async def test_an_embed_job_never_deadlocks_with_a_writer_deleting_its_chunks(
    service: Running, collection: pb.Collection, database: str, embedder: EmbeddingProvider
) -> None:
    """A page of vectors locked its rows in id order while a delete (of documents, their
    replacement, or the collection) locked them in its own order: each waited on the other,
    and PostgreSQL failed one of them, the delete (a 502) or the job (an error for nothing)."""
    await service.host.stop()  # its in-process worker must not take the job
    embedded = asyncio.Event()

    class Signalling(CountingProvider):
        async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
            vectors = await super()._embed_batch(texts)
            embedded.set()
            return vectors

    pool = await create_pool(database, service.settings.database, schema="collections")
    writer = await connect(database)
    try:
        documents = Documents(
            pool, Signalling(embedder), max_document_bytes=1_000_000, max_batch_documents=1000
        )
        worker = Worker(pool, database, documents.handlers(), service.settings.collections)
        collection_id = uuid.UUID(collection.id)
        await documents.upload(collection_id, [Upload("warm.md", b"# Warm\n\nUp.")], "alice")
        while await worker.run_once():  # the vector index exists: the job does not wait to create it
            pass
        embedded.clear()
        await documents.upload(
            collection_id, [Upload("a.md", b"# A\n\nFirst."), Upload("b.md", b"# B\n\nSecond.")], "alice"
        )
        await writer.execute(
            "DELETE FROM collections.md_jobs WHERE kind = 'resolve_links' AND status = 'queued'"
        )
        first, last = sorted(
            await writer.fetchval(
                "SELECT array_agg(k.id) FROM collections.md_chunks k JOIN collections.md_documents d"
                " ON d.id = k.document_id WHERE d.collection_id = $1 AND d.source_key <> 'warm.md'",
                collection_id,
            )
        )
        async with writer.transaction():
            # A writer's first row; its next one below is the job's first.
            await writer.execute("DELETE FROM collections.md_chunks WHERE id = $1", last)
            running = asyncio.ensure_future(worker.run_once())
            await asyncio.wait_for(embedded.wait(), 30)
            await asyncio.sleep(0.5)  # the job writes its page meanwhile, from the first row on
            await asyncio.wait_for(
                writer.execute("DELETE FROM collections.md_chunks WHERE id = $1", first), 10
            )
        await asyncio.wait_for(running, 30)
        async with pool.acquire() as connection:
            jobs = await connection.fetch(
                "SELECT kind, status, error FROM md_jobs WHERE collection_id = $1 AND kind = 'embed'",
                collection_id,
            )
            left = await connection.fetchval(
                "SELECT count(*) FROM md_chunks WHERE collection_id = $1", collection_id
            )
    finally:
        await writer.close()
        await pool.close()
    assert {(job["status"], job["error"]) for job in jobs} == {("success", None)}
    assert left == 1  # warm.md's chunk; the two the writer deleted are gone, as it committed


async def test_an_embed_job_whose_chunks_are_deleted_meanwhile_ends_with_all_its_work_done(
    service: Running, collection: pb.Collection, database: str, embedder: EmbeddingProvider
) -> None:
    """The job counts its chunks when it starts. Those deleted before it reached them need no
    vector: it succeeded with nothing left, and said 2 of 6 done as if it had stopped early."""
    await service.host.stop()  # its in-process worker must not take the job
    collection_id = uuid.UUID(collection.id)
    pool = await create_pool(database, service.settings.database, schema="collections")

    class DeletingTheRest(CountingProvider):
        """Two chunks a page; while the first is embedded, the chunks not yet read are deleted."""

        async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
            if self.calls == 0:
                await pool.execute(
                    "DELETE FROM md_documents WHERE collection_id = $1 AND id NOT IN"
                    " (SELECT document_id FROM md_chunks WHERE content = ANY($2::text[]))",
                    collection_id,
                    list(texts),
                )
            return await super()._embed_batch(texts)

    provider = DeletingTheRest(embedder)
    provider.batch_size = 2
    try:
        documents = Documents(pool, provider, max_document_bytes=1_000_000, max_batch_documents=1000)
        worker = Worker(pool, database, documents.handlers(), service.settings.collections)
        await documents.upload(
            collection_id, [Upload(f"{n}.md", f"# Page {n}\n\nText {n}.".encode()) for n in range(6)], "alice"
        )
        while await worker.run_once():
            pass
        job = await pool.fetchrow(
            "SELECT status, error, progress_done, progress_total FROM md_jobs"
            " WHERE collection_id = $1 AND kind = 'embed'",
            collection_id,
        )
        left = await pool.fetchval(
            "SELECT count(*) FROM md_chunks WHERE collection_id = $1 AND embedding IS NOT NULL", collection_id
        )
    finally:
        await pool.close()
    assert provider.texts == 2  # the first page; the other four were deleted before it was read
    assert left == 2
    assert (job["status"], job["error"]) == ("success", None)
    assert (job["progress_done"], job["progress_total"]) == (2, 2)
