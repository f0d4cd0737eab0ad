"""Binding links while documents are written, replaced or deleted: the work is serialised on the
collection, so neither side is aborted as a deadlock or loses its pass, and no link is left unbound
by a job that stopped half-way."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from cograph_collections.app import MIGRATIONS
from cograph_collections.application import documents as documents_application
from cograph_collections.application.documents import Documents
from cograph_collections.domain.jobs import Claimed, Kind
from cograph_collections.domain.uploads import State, Upload
from cograph_collections.markdown import ParsedDocument, parse_markdown
from cograph_collections.stores.documents import DocumentStore
from cograph_collections.stores.jobs import JobStore
from cograph_db import connect, open_service_pool
from cograph_embeddings import EmbeddingProvider
from cograph_settings import Settings


class Clients:
    """The collections application on the real database, with no worker: each test runs the
    jobs itself, at the moment it needs them to run."""

    def __init__(
        self, pool: asyncpg.Pool[Any], embedder: EmbeddingProvider, watcher: asyncpg.Connection
    ) -> None:
        self.pool = pool
        self.documents = Documents(pool, embedder, max_document_bytes=1_000_000, max_batch_documents=1000)
        self.watcher = watcher

    async def new_collection(self) -> uuid.UUID:
        collection_id: uuid.UUID = await self.pool.fetchval(
            "INSERT INTO md_collections (name, visibility, owner)"
            " VALUES ('c', 'public', 'alice') RETURNING id"
        )
        return collection_id

    async def upload(self, collection_id: uuid.UUID, *documents: tuple[str, bytes]) -> list[uuid.UUID]:
        outcomes, _ = await self.documents.upload(
            collection_id, [Upload(key, content) for key, content in documents], "alice"
        )
        assert all(outcome.failure is None for outcome in outcomes), outcomes
        return [outcome.document_id for outcome in outcomes if outcome.document_id is not None]

    async def resolve_links(self, collection_id: uuid.UUID) -> None:
        job = Claimed(uuid.uuid4(), collection_id, Kind.RESOLVE_LINKS, {}, "alice")
        await self.documents.run_resolve_links(job, _no_progress)

    async def targets(self, collection_id: uuid.UUID) -> dict[tuple[str, str], str | None]:
        """(linking document, href) -> the source key it is bound to, None while unresolved."""
        rows = await self.pool.fetch(
            "SELECT d.source_key, l.href, t.source_key AS target FROM md_links l"
            " JOIN md_documents d ON d.id = l.document_id"
            " LEFT JOIN md_documents t ON t.id = l.target_document_id"
            " WHERE l.collection_id = $1",
            collection_id,
        )
        return {(row["source_key"], row["href"]): row["target"] for row in rows}

    async def until_a_statement_waits_on_a_lock(self, statements: int = 1) -> None:
        for _ in range(500):
            if (
                await self.watcher.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND datname = current_database() AND pid <> pg_backend_pid()"
                )
                >= statements
            ):
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"fewer than {statements} statements came to wait on a lock")


async def _no_progress(done: int, total: int) -> None:
    return None


@pytest.fixture
async def clients(settings: Settings, database: str, embedder: EmbeddingProvider) -> AsyncIterator[Clients]:
    pool = await open_service_pool(database, settings.database, MIGRATIONS)
    watcher = await connect(database)
    try:
        yield Clients(pool, embedder, watcher)
    finally:
        await watcher.close()
        await pool.close()


def pause_after_replacing(
    monkeypatch: pytest.MonkeyPatch, source_key: str
) -> tuple[asyncio.Event, asyncio.Event]:
    """(replaced, go_on): an upload stops inside its transaction once it has replaced
    `source_key` (its old links deleted, their rows locked), until go_on is set."""
    replaced, go_on = asyncio.Event(), asyncio.Event()
    update = DocumentStore.update

    async def pausing_update(self: DocumentStore, document_id: uuid.UUID, document: Any) -> None:
        await update(self, document_id, document)
        if document.source_key == source_key:
            replaced.set()
            await go_on.wait()

    monkeypatch.setattr(DocumentStore, "update", pausing_update)
    return replaced, go_on


async def test_replacing_linking_documents_while_their_links_are_bound_aborts_neither(
    clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upload replacing a.md and b.md deletes their links in key order; a bind that ran
    meanwhile updated the same rows in its own order: PostgreSQL aborted one as a deadlock,
    and when that was the upload, the caller's whole batch was lost. The bind now waits."""
    collection_id = await clients.new_collection()
    # b.md first, so that its link row comes first on disk: the bind takes it before a.md's.
    await clients.upload(collection_id, ("b.md", b"# B\n\n[c](c.md)\n"))
    await clients.upload(collection_id, ("a.md", b"# A\n\n[c](c.md)\n"))
    await clients.upload(collection_id, ("c.md", b"# C\n"))
    replaced, go_on = pause_after_replacing(monkeypatch, "a.md")
    upload = asyncio.create_task(
        clients.documents.upload(
            collection_id,
            [Upload("a.md", b"# A v2\n\n[c](c.md)\n"), Upload("b.md", b"# B v2\n\n[c](c.md)\n")],
            "alice",
        )
    )
    await replaced.wait()
    resolve = asyncio.create_task(clients.resolve_links(collection_id))
    await clients.until_a_statement_waits_on_a_lock()
    go_on.set()
    (outcomes, _), _ = await asyncio.gather(upload, resolve)
    assert [outcome.state for outcome in outcomes] == [State.REPLACED, State.REPLACED]
    await clients.resolve_links(collection_id)  # as the job the upload queued will
    assert await clients.targets(collection_id) == {("a.md", "c.md"): "c.md", ("b.md", "c.md"): "c.md"}


async def test_deleting_a_target_while_links_are_bound_loses_neither(
    clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bind that had found c.md as the target, then wrote after c.md's delete committed,
    failed on the foreign key: the whole pass was lost. The bind now waits for the delete,
    and leaves the link visible as unresolved."""
    collection_id = await clients.new_collection()
    await clients.upload(collection_id, ("a.md", b"# A\n\n[c](c.md)\n"))
    (target,) = await clients.upload(collection_id, ("c.md", b"# C\n"))
    deleted, go_on = asyncio.Event(), asyncio.Event()
    enqueue = JobStore.enqueue

    async def pausing_enqueue(self: JobStore, *args: Any, **kwargs: Any) -> uuid.UUID:
        deleted.set()  # the delete's DELETE has run; its transaction is still open
        await go_on.wait()
        return await enqueue(self, *args, **kwargs)

    monkeypatch.setattr(JobStore, "enqueue", pausing_enqueue)
    delete = asyncio.create_task(clients.documents.delete(collection_id, target, "alice"))
    await deleted.wait()
    resolve = asyncio.create_task(clients.resolve_links(collection_id))
    await clients.until_a_statement_waits_on_a_lock()
    go_on.set()
    await asyncio.gather(delete, resolve)
    assert await clients.targets(collection_id) == {("a.md", "c.md"): None}


@pytest.mark.parametrize("alone", ["delete", "bind"])
async def test_uploads_arriving_after_a_delete_or_a_bind_wait_for_it(
    clients: Clients, monkeypatch: pytest.MonkeyPatch, alone: str
) -> None:
    """A delete or a bind waits for the uploads writing into the collection, and uploads that
    arrive after it wait for it in turn. Writers shared a row lock, which PostgreSQL may grant
    a sharer ahead of a waiting exclusive request: while uploads overlapped, the delete or bind
    could wait without end."""
    collection_id = await clients.new_collection()
    ids = await clients.upload(
        collection_id, ("a.md", b"# A\n"), ("b.md", b"# B\n\n[c](c.md)\n"), ("c.md", b"# C\n")
    )
    replaced, go_on = pause_after_replacing(monkeypatch, "a.md")
    first = asyncio.create_task(clients.upload(collection_id, ("a.md", b"# A v2\n")))
    await replaced.wait()
    operation = asyncio.create_task(
        clients.documents.delete(collection_id, ids[2], "alice")
        if alone == "delete"
        else clients.resolve_links(collection_id)
    )
    await clients.until_a_statement_waits_on_a_lock()
    later = asyncio.create_task(
        clients.documents.upload(
            collection_id, [Upload("b.md", b"# B v2\n\n[c](c.md)\n"), Upload("c.md", b"# C v2\n")], "alice"
        )
    )
    await clients.until_a_statement_waits_on_a_lock(statements=2)  # the later upload queues too
    go_on.set()
    _, _, (outcomes, _) = await asyncio.gather(first, operation, later)
    # The later upload ran last: it created c.md again after the delete, and rebuilt b.md's
    # link after the bind (its own queued bind has not run).
    assert [outcome.state for outcome in outcomes] == [
        State.REPLACED,
        State.CREATED if alone == "delete" else State.REPLACED,
    ]
    assert await clients.targets(collection_id) == {("b.md", "c.md"): None}


async def test_a_re_embed_stopped_half_way_leaves_every_link_bound(
    clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-chunking rebuilt each document's links unbound and bound them again only once every
    document was rewritten: a re-embed that stopped between (here the second document's parse
    fails) left the first one's links unbound for good, and one that ran left them unbound while
    it embedded. The text is unchanged, so are its links: only the chunks are rebuilt."""
    collection_id = await clients.new_collection()
    await clients.upload(
        collection_id, ("a.md", b"# A\n\n[FAQ](faq.md)\n"), ("faq.md", b"# FAQ\n\nsee [a](a.md)\n")
    )
    await clients.resolve_links(collection_id)
    await clients.pool.execute("UPDATE md_chunks SET chunker_max_chars = 1000")  # an older release's
    await clients.pool.execute("DELETE FROM md_jobs")
    bound = {("a.md", "faq.md"): "faq.md", ("faq.md", "a.md"): "a.md"}

    parsed: list[str] = []

    def parse_failing_on_the_second(text: str) -> ParsedDocument:
        parsed.append(text)
        if len(parsed) == 2:
            raise RuntimeError("the worker was stopped")
        return parse_markdown(text)

    monkeypatch.setattr(documents_application, "parse_markdown", parse_failing_on_the_second)
    re_embed = Claimed(uuid.uuid4(), collection_id, Kind.EMBED, {"all": True}, "alice")
    with pytest.raises(RuntimeError, match="the worker was stopped"):
        await clients.documents.run_embed(re_embed, _no_progress)
    outdated = "SELECT count(DISTINCT document_id) FROM md_chunks WHERE chunker_max_chars = 1000"
    assert await clients.pool.fetchval(outdated) == 1  # the first document was re-chunked
    assert await clients.targets(collection_id) == bound

    monkeypatch.setattr(documents_application, "parse_markdown", parse_markdown)
    await clients.documents.run_embed(re_embed, _no_progress)
    assert await clients.pool.fetchval(outdated) == 0
    assert await clients.targets(collection_id) == bound
    # Nothing to bind again: a re-embed queues no full pass over the collection's links.
    assert await clients.pool.fetchval("SELECT count(*) FROM md_jobs") == 0
