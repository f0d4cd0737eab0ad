"""Writes into one collection at once: uploads never abort each other, a rename or delete of the
collection is not held back by them, and the term statistics stay exact and hold no dead rows."""

from __future__ import annotations

import asyncio
import random
import uuid

import pytest

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_collections.app import MIGRATIONS
from cograph_collections.domain.documents import StoredLink
from cograph_collections.stores.documents import SQL as DOCUMENT_SQL
from cograph_collections.stores.documents import DocumentStore
from cograph_db import Connection, apply_migrations, connect
from support.collections import Running, insert_stored_documents
from support.migrations import before

# The statistics as the trigger should have kept them, recounted from the chunks.
RECOUNTED_TERMS = """
    SELECT k.collection_id AS scope_id, u.lexeme, count(*) AS df
    FROM collections.md_chunks k, unnest(k.search_text) AS u
    GROUP BY 1, 2 ORDER BY 1, 2"""
STORED_TERMS = "SELECT scope_id, lexeme, df FROM collections.md_term_stats ORDER BY 1, 2"
RECOUNTED_SCOPES = """
    SELECT collection_id AS scope_id, count(*) AS chunks, sum(length(search_text)) AS lexemes
    FROM collections.md_chunks GROUP BY 1 ORDER BY 1"""
STORED_SCOPES = "SELECT scope_id, chunks, lexemes FROM collections.md_scope_stats ORDER BY 1"


async def statistics(database: str) -> tuple[list[tuple[object, ...]], ...]:
    connection = await connect(database)
    try:
        stored = []
        for sql in (STORED_TERMS, RECOUNTED_TERMS, STORED_SCOPES, RECOUNTED_SCOPES):
            stored.append([tuple(row) for row in await connection.fetch(sql)])
        return tuple(stored)
    finally:
        await connection.close()


async def test_uploads_replacing_different_documents_at_once_keep_the_statistics_exact(
    service: Running, collection: pb.Collection, database: str
) -> None:
    rng = random.Random(7)
    words = [f"word{n}" for n in range(40)]

    async def writer(key: str) -> None:
        for _ in range(25):
            text = " ".join(rng.sample(words, 6))
            await service.upload(collection.id, (key, f"# {key}\n\nrunbook {text}\n".encode()))

    await asyncio.gather(*(writer(f"k{n}.md") for n in range(4)))
    terms, recounted_terms, scopes, recounted_scopes = await statistics(database)
    assert terms == recounted_terms  # exact, and no lexeme left at df 0
    assert scopes == recounted_scopes
    await service.wait_for_jobs(collection.id)


async def test_two_writers_replacing_chunks_over_each_others_words_take_turns(database: str) -> None:
    """As two uploads replacing different documents run: each deletes its document's chunks,
    then writes the new ones, whose words the other's old chunks held. Before, the statistics
    trigger locked lexemes first, each writer held one the other needed, and PostgreSQL
    aborted one of them as a deadlock (the upload answered 502, its batch lost)."""
    setup, first, second = [await connect(database) for _ in range(3)]
    try:
        await apply_migrations(setup, MIGRATIONS)
        for connection in (setup, first, second):
            await connection.execute("SET search_path = collections")
        collection_id, documents = await insert_stored_documents(setup, "a.md", "b.md")
        insert_chunk = (
            "INSERT INTO md_chunks (document_id, collection_id, chunk_index, content, start_line, end_line,"
            " chunker_max_chars, chunker_min_chars, chunker_max_chunks)"
            " VALUES ($1, $2, 0, $3, 1, 1, 4000, 400, 512)"
        )
        await setup.execute(insert_chunk, documents["a.md"], collection_id, "xylophone")
        await setup.execute(insert_chunk, documents["b.md"], collection_id, "yodeller")

        await first.execute("BEGIN")
        await first.execute(DOCUMENT_SQL.delete_chunks, documents["a.md"])
        await second.execute("BEGIN")
        second_deletes = asyncio.ensure_future(second.execute(DOCUMENT_SQL.delete_chunks, documents["b.md"]))
        await asyncio.sleep(0.3)  # the second is in its trigger, waiting on the first
        await first.execute(insert_chunk, documents["a.md"], collection_id, "yodeller")
        await first.execute("COMMIT")
        await asyncio.wait_for(second_deletes, timeout=10)
        await second.execute(insert_chunk, documents["b.md"], collection_id, "xylophone")
        await second.execute("COMMIT")
        stored = [tuple(row) for row in await setup.fetch("SELECT lexeme, df FROM md_term_stats ORDER BY 1")]
    finally:
        for connection in (setup, first, second):
            await connection.close()
    assert stored == [("xylophon", 1), ("yodel", 1)]


async def test_a_deleted_collection_leaves_no_statistics(service: Running, database: str) -> None:
    kept, deleted = [
        (
            await service.stub.CreateCollection(
                pb.CreateCollectionRequest(name=name, visibility=pb.VISIBILITY_PUBLIC, owner="alice")
            )
        ).collection.id
        for name in ("Kept", "Deleted")
    ]
    for collection_id in (kept, deleted):
        await service.upload(collection_id, ("a.md", b"# Alpha\n\nzeppelin harbour\n"))
    await service.upload(kept, ("a.md", b"# Beta\n\nquokka meadow\n"))  # its first words are gone
    await service.stub.DeleteCollection(pb.DeleteCollectionRequest(collection_id=deleted))

    terms, recounted_terms, scopes, recounted_scopes = await statistics(database)
    assert terms == recounted_terms
    assert {row[0] for row in terms} == {uuid.UUID(kept)}
    assert "zeppelin" not in {row[1] for row in terms}
    assert scopes == recounted_scopes == [(uuid.UUID(kept), 1, 3)]
    for collection_id in (kept, deleted):
        await service.wait_for_jobs(collection_id)


async def writing(database: str, collection_id: str) -> Connection:
    """A connection inside a write into the collection, holding the lock an upload holds."""
    connection = await connect(database)
    await connection.execute("BEGIN")
    await connection.execute("SET search_path = collections")
    assert await connection.fetchval(DOCUMENT_SQL.lock_collection, uuid.UUID(collection_id))
    return connection


async def test_a_rename_does_not_wait_for_writes_into_the_collection(
    service: Running, collection: pb.Collection, database: str
) -> None:
    writer = await writing(database, collection.id)
    try:
        renamed = await asyncio.wait_for(
            service.stub.UpdateCollection(
                pb.UpdateCollectionRequest(
                    collection_id=collection.id, name="Renamed", visibility=pb.VISIBILITY_PUBLIC
                )
            ),
            timeout=5,
        )
    finally:
        await writer.close()
    assert (renamed.collection.name, renamed.collection.visibility) == ("Renamed", pb.VISIBILITY_PUBLIC)


async def test_a_delete_is_not_overtaken_by_writes_that_start_after_it(
    service: Running, collection: pb.Collection, database: str
) -> None:
    """A stream of uploads held a delete back until the gateway's deadline: each new one was
    let past the waiting delete while an earlier one still held the collection."""
    first = await writing(database, collection.id)
    later = await connect(database)
    try:
        delete = asyncio.ensure_future(
            service.stub.DeleteCollection(pb.DeleteCollectionRequest(collection_id=collection.id))
        )
        await asyncio.sleep(0.5)
        assert not delete.done()  # the write in progress finishes first
        await later.execute("BEGIN")
        await later.execute("SET search_path = collections")
        second = asyncio.ensure_future(later.fetchval(DOCUMENT_SQL.lock_collection, uuid.UUID(collection.id)))
        await asyncio.sleep(0.5)
        assert not second.done()  # queued behind the delete, not let past it
        await first.execute("COMMIT")
        await asyncio.wait_for(delete, timeout=5)
        assert await asyncio.wait_for(second, timeout=5) is None  # the collection is gone: NotFound
    finally:
        await first.close()
        await later.close()


async def test_statistics_left_behind_by_an_earlier_release_are_removed_by_migration_0013(
    database: str,
) -> None:
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 13))
        await connection.execute("SET search_path = collections")
        live = await connection.fetchval(
            "INSERT INTO md_collections (name, description, visibility, owner)"
            " VALUES ('Live', '', 'public', 'alice') RETURNING id"
        )
        gone = uuid.uuid4()
        await connection.executemany(
            "INSERT INTO md_term_stats (scope_id, lexeme, df) VALUES ($1, $2, $3)",
            [(live, "kept", 2), (live, "dead", 0), (gone, "orphan", 5)],
        )
        await connection.executemany(
            "INSERT INTO md_scope_stats (scope_id, chunks, lexemes) VALUES ($1, $2, $3)",
            [(live, 2, 9), (gone, 5, 40)],
        )
        assert 13 in await apply_migrations(connection, MIGRATIONS)
        terms = [
            tuple(row) for row in await connection.fetch("SELECT scope_id, lexeme, df FROM md_term_stats")
        ]
        scopes = [tuple(row) for row in await connection.fetch("SELECT scope_id, chunks FROM md_scope_stats")]
    finally:
        await connection.close()
    assert terms == [(live, "kept", 2)]
    assert scopes == [(live, 2)]


async def test_a_document_read_while_it_is_replaced_is_one_version(
    service: Running, collection: pb.Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its content and its links come from the same version, even when a replacement commits
    between the two reads (before, the old content came with the new version's links)."""
    uploaded = await service.upload(collection.id, ("page.md", b"# Page\n\nSee [old](old.md).\n"))
    document_id = uploaded.results[0].document_id
    read_links = DocumentStore.links

    async def links_after_a_replacement(store: DocumentStore, document: uuid.UUID) -> list[StoredLink]:
        await service.upload(collection.id, ("page.md", b"# Page\n\nSee [new](new.md).\n"))
        return await read_links(store, document)

    monkeypatch.setattr(DocumentStore, "links", links_after_a_replacement)
    read = await service.stub.GetDocument(
        pb.GetDocumentRequest(collection_id=collection.id, document_id=document_id)
    )
    assert "old.md" in read.document.content
    assert [link.href for link in read.document.metadata.links] == ["old.md"]
    await service.wait_for_jobs(collection.id)
