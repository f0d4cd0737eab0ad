"""Uploads through the real gRPC service: created / replaced / unchanged, per-document errors, concurrency."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import grpc
import pytest
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_collections.application.ingest import Ingestor
from cograph_db import connect
from support.collections import Running
from support.threads import in_another_thread

GUIDE = b"""---
title: Deployment guide
owner: platform
---
# Deploying

Run `make deploy` after the [checklist](checklist.md#before) is green.

## Rollback

| step | command |
|------|---------|
| 1 | `kubectl rollout undo` |

```sh
kubectl rollout status deploy/api
```
"""
CHECKLIST = (
    b"# Checklist\n\n## Before\n\nEverything green. See [[Deployment guide]] and [home](../index.md).\n"
)


def doc(key: str, content: bytes) -> pb.DocumentContent:
    return pb.DocumentContent(source_key=key, content=content)


async def upload(
    service: Running, collection: pb.Collection, *docs: pb.DocumentContent
) -> pb.UploadDocumentsResponse:
    return await service.stub.UploadDocuments(
        pb.UploadDocumentsRequest(collection_id=collection.id, documents=list(docs), requested_by="alice")
    )


async def test_created_then_unchanged_then_replaced(service: Running, collection: pb.Collection) -> None:
    first = await upload(service, collection, doc("ops/guide.md", GUIDE), doc("ops/checklist.md", CHECKLIST))
    assert [r.state for r in first.results] == [pb.DOCUMENT_STATE_CREATED, pb.DOCUMENT_STATE_CREATED]
    assert (first.counts.created, first.counts.replaced, first.counts.unchanged, first.counts.failed) == (
        2,
        0,
        0,
        0,
    )
    guide_id = first.results[0].document_id

    again = await upload(service, collection, doc("ops/guide.md", GUIDE), doc("ops/checklist.md", CHECKLIST))
    assert [r.state for r in again.results] == [pb.DOCUMENT_STATE_UNCHANGED] * 2
    assert again.results[0].document_id == guide_id

    changed = GUIDE.replace(b"## Rollback", b"## Rolling back")
    third = await upload(service, collection, doc("ops/guide.md", changed))
    assert third.results[0].state == pb.DOCUMENT_STATE_REPLACED
    assert third.results[0].document_id == guide_id
    chunks = await service.stub.ListChunks(
        pb.ListChunksRequest(collection_id=collection.id, document_id=guide_id)
    )
    assert "Rolling back" in "".join(c.content for c in chunks.chunks)
    assert all(c.chunker.max_chars == 4000 and c.chunker.min_chars == 400 for c in chunks.chunks)


async def test_document_keeps_its_parsed_metadata(service: Running, collection: pb.Collection) -> None:
    result = (await upload(service, collection, doc("ops/guide.md", GUIDE))).results[0]
    document = (
        await service.stub.GetDocument(
            pb.GetDocumentRequest(collection_id=collection.id, document_id=result.document_id)
        )
    ).document
    meta = document.metadata
    assert meta.title == "Deployment guide"  # the frontmatter title wins
    assert '"owner":"platform"' in meta.frontmatter_json
    assert [(h.level, h.text, h.anchor, h.line) for h in meta.heading_tree] == [
        (1, "Deploying", "deploying", 5),
        (2, "Rollback", "rollback", 9),
    ]
    assert [(c.language, c.start_line, c.end_line) for c in meta.code_blocks] == [("sh", 15, 17)]
    assert [(list(t.header), t.start_line, t.end_line) for t in meta.tables] == [
        (["step", "command"], 11, 13)
    ]
    assert [(link.href, link.link_type, link.anchor) for link in meta.links] == [
        ("checklist.md#before", pb.LINK_TYPE_MARKDOWN, "before")
    ]
    assert meta.line_count == 17
    assert document.content == GUIDE.decode()


@pytest.mark.parametrize(
    ("key", "content", "reason", "message"),
    [
        ("", b"# empty key", pb.DocumentError.REASON_INVALID_SOURCE_KEY, "source key is empty"),
        (
            "../../etc/passwd",
            b"# escape",
            pb.DocumentError.REASON_INVALID_SOURCE_KEY,
            "escapes the collection root",
        ),
        ("bad.md", b"caf\xe9 au lait", pb.DocumentError.REASON_NOT_UTF8, "not valid UTF-8"),
        ("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", pb.DocumentError.REASON_BINARY, "binary file"),
        ("late.md", b"# Text\n" + b"a" * 10_000 + b"\x00", pb.DocumentError.REASON_BINARY, "binary file"),
        # past the 64 KiB the control-byte heuristic reads: PostgreSQL text cannot hold a NUL
        ("later.md", b"# Text\n" + b"a" * 70_000 + b"\x00", pb.DocumentError.REASON_BINARY, "binary file"),
        ("huge.md", b"# big\n" + b"word " * 2_000_000, pb.DocumentError.REASON_TOO_LARGE, "over the limit"),
        (  # 300 characters, 1,200 bytes: past what a key's index row may hold
            "\U0001f600" * 300 + ".md",
            b"# emoji",
            pb.DocumentError.REASON_INVALID_SOURCE_KEY,
            "longer than 1024 bytes in UTF-8",
        ),
        (  # one code block of 150,000 distinct words: more lexemes than a tsvector holds
            "words.md",
            b"```\n" + " ".join(f"w{i}x" for i in range(150_000)).encode() + b"\n```\n",
            pb.DocumentError.REASON_TOO_LARGE,
            "too large for the database to index (string is too long for tsvector",
        ),
        (  # 3 KB whose rows, filled out to a 500-column header, would be 250,000 cells
            "ragged.md",
            b"|a" * 500 + b"|\n" + b"|-" * 500 + b"|\n" + b"x\n" * 500,
            pb.DocumentError.REASON_TOO_LARGE,
            "its tables would hold about 250000 cells",
        ),
    ],
)
async def test_a_bad_document_fails_alone_and_stores_nothing(
    service: Running, collection: pb.Collection, key: str, content: bytes, reason: int, message: str
) -> None:
    before = await upload(service, collection, doc("keep.md", b"# Keep\n\nStored before."))
    response = await upload(service, collection, doc("good.md", b"# Good\n\nFine."), doc(key, content))
    good, bad = response.results
    assert good.state == pb.DOCUMENT_STATE_CREATED
    assert bad.WhichOneof("outcome") == "error"
    assert bad.error.reason == reason
    assert message in bad.error.message
    assert bad.document_id == ""
    assert (response.counts.created, response.counts.failed) == (1, 1)
    listed = await service.stub.ListDocuments(pb.ListDocumentsRequest(collection_id=collection.id))
    assert sorted(d.source_key for d in listed.documents) == ["good.md", "keep.md"]
    kept = await service.stub.GetDocument(
        pb.GetDocumentRequest(collection_id=collection.id, document_id=before.results[0].document_id)
    )
    assert kept.document.content == "# Keep\n\nStored before."


async def test_frontmatter_json_cannot_spell_is_stored_not_a_failed_batch(
    service: Running, collection: pb.Collection
) -> None:
    odd = b'---\ntitle: "a\\0b"\nratio: .nan\n---\n# Body\n'
    response = await upload(service, collection, doc("odd.md", odd), doc("good.md", b"# Good\n"))
    assert [r.state for r in response.results] == [pb.DOCUMENT_STATE_CREATED] * 2
    stored = await service.stub.GetDocument(
        pb.GetDocumentRequest(collection_id=collection.id, document_id=response.results[0].document_id)
    )
    assert json.loads(stored.document.metadata.frontmatter_json) == {"title": "a\ufffdb", "ratio": "nan"}


@pytest.mark.parametrize("link", ["[x](a%00b.md)", "[x](#sec%00tion)", "[[Note%00]]"])
async def test_a_percent_encoded_nul_in_a_link_is_stored_as_a_replacement_character(
    service: Running, collection: pb.Collection, link: str
) -> None:
    """%00 decodes to a NUL no text column holds: it was an INTERNAL that lost the whole batch."""
    response = await upload(
        service, collection, doc("good.md", b"# Good\n"), doc("odd.md", f"# Odd\n\nSee {link}.\n".encode())
    )
    assert [r.state for r in response.results] == [pb.DOCUMENT_STATE_CREATED] * 2
    stored = await service.stub.GetDocument(
        pb.GetDocumentRequest(collection_id=collection.id, document_id=response.results[1].document_id)
    )
    (written,) = stored.document.metadata.links
    assert "%00" in written.href  # as written
    assert "\x00" not in written.anchor


async def test_one_path_spelled_several_ways_is_one_document(
    service: Running, collection: pb.Collection
) -> None:
    first = (await upload(service, collection, doc("docs/a.md", b"# A\n"))).results[0]
    for spelling in ("./docs/a.md", "/docs/a.md", "docs//a.md", "docs\\a.md", " docs/a.md "):
        again = (await upload(service, collection, doc(spelling, b"# A\n"))).results[0]
        assert (again.source_key, again.document_id) == ("docs/a.md", first.document_id)
        assert again.state == pb.DOCUMENT_STATE_UNCHANGED
    twice = await upload(service, collection, doc("b.md", b"# B\n"), doc("./b.md", b"# B again\n"))
    assert twice.results[1].error.reason == pb.DocumentError.REASON_DUPLICATE_IN_BATCH
    listed = await service.stub.ListDocuments(pb.ListDocumentsRequest(collection_id=collection.id))
    assert sorted(d.source_key for d in listed.documents) == ["b.md", "docs/a.md"]


async def test_the_parser_says_where_it_read_a_file_differently(
    service: Running, collection: pb.Collection
) -> None:
    notes = b"---\n# Release notes\n\nImportant text.\n\n---\n\nMore.\n"  # a thematic break, not YAML
    response = await upload(service, collection, doc("notes.md", notes), doc("plain.md", b"# Plain\n"))
    noted, plain = response.results
    assert list(noted.warnings) == ["frontmatter is a str, not a mapping; the block is read as markdown"]
    assert list(plain.warnings) == []
    stored = await service.stub.GetDocument(
        pb.GetDocumentRequest(collection_id=collection.id, document_id=noted.document_id)
    )
    assert list(stored.document.metadata.warnings) == list(noted.warnings)
    assert stored.document.metadata.title == "Release notes"
    again = await upload(service, collection, doc("notes.md", notes))
    assert again.results[0].state == pb.DOCUMENT_STATE_UNCHANGED  # not parsed again: nothing to say


async def test_tabs_form_feeds_and_carriage_returns_are_text(
    service: Running, collection: pb.Collection
) -> None:
    response = await upload(
        service, collection, doc("page.md", b"# Page\r\n\r\n\tindented\x0cnext page\x0b\r\n")
    )
    assert response.results[0].state == pb.DOCUMENT_STATE_CREATED


async def test_a_key_twice_in_one_batch_is_refused_the_second_time(
    service: Running, collection: pb.Collection
) -> None:
    response = await upload(service, collection, doc("a.md", b"# One"), doc("a.md", b"# Two"))
    assert response.results[0].state == pb.DOCUMENT_STATE_CREATED
    assert response.results[1].error.reason == pb.DocumentError.REASON_DUPLICATE_IN_BATCH


async def test_concurrent_uploads_of_one_key_leave_one_consistent_document(
    service: Running, collection: pb.Collection
) -> None:
    versions = [f"# Version {i}\n\n".encode() + b"text " * (50 + i) for i in range(8)]
    responses = await asyncio.gather(*(upload(service, collection, doc("race.md", v)) for v in versions))
    states = sorted(r.results[0].state for r in responses)
    assert states.count(pb.DOCUMENT_STATE_CREATED) == 1
    assert len({r.results[0].document_id for r in responses}) == 1
    listed = await service.stub.ListDocuments(pb.ListDocumentsRequest(collection_id=collection.id))
    assert [d.source_key for d in listed.documents] == ["race.md"]
    document_id = listed.documents[0].id
    stored = (
        await service.stub.GetDocument(
            pb.GetDocumentRequest(collection_id=collection.id, document_id=document_id)
        )
    ).document
    assert stored.content.encode() in versions
    chunks = await service.stub.ListChunks(
        pb.ListChunksRequest(collection_id=collection.id, document_id=document_id)
    )
    assert "".join(c.content for c in chunks.chunks).split()[:3] == stored.content.split()[:3]
    assert stored.summary.chunk_count == len(chunks.chunks)


async def test_unknown_collection_and_malformed_ids_are_clear_errors(
    service: Running, collection: pb.Collection
) -> None:
    with pytest.raises(aio.AioRpcError) as missing:
        await service.stub.UploadDocuments(
            pb.UploadDocumentsRequest(
                collection_id="00000000-0000-0000-0000-000000000000", documents=[doc("a.md", b"# A")]
            )
        )
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(aio.AioRpcError) as malformed:
        await service.stub.GetDocument(pb.GetDocumentRequest(collection_id=collection.id, document_id="nope"))
    assert malformed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid id" in (malformed.value.details() or "")
    with pytest.raises(aio.AioRpcError) as empty:
        await service.stub.UploadDocuments(pb.UploadDocumentsRequest(collection_id=collection.id))
    assert empty.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_collection_deleted_while_its_upload_is_parsed_is_not_found(
    service: Running, collection: pb.Collection, database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upload checks the collection, parses (seconds for a large batch), then writes: a delete
    in between is a clear NOT_FOUND, never a foreign-key error, and nothing is left behind."""

    async def delete_the_collection() -> object:
        other = await connect(database)
        try:
            return await other.execute(
                "DELETE FROM collections.md_collections WHERE id = $1", uuid.UUID(collection.id)
            )
        finally:
            await other.close()

    prepare = Ingestor._prepare
    deleted: list[object] = []

    def prepare_after_a_delete(self: Ingestor, *args: Any) -> Any:
        if not deleted:
            deleted.append(in_another_thread(delete_the_collection))
        return prepare(self, *args)

    monkeypatch.setattr(Ingestor, "_prepare", prepare_after_a_delete)
    with pytest.raises(aio.AioRpcError) as refused:
        await upload(service, collection, doc("a.md", b"# A\n\nText.\n"))
    assert deleted == ["DELETE 1"]
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    assert f"collection {collection.id} does not exist" in (refused.value.details() or "")
    other = await connect(database)
    try:
        assert await other.fetchval("SELECT count(*) FROM collections.md_documents") == 0
    finally:
        await other.close()


async def test_a_link_too_long_to_name_a_document_is_kept_unresolved(
    service: Running, collection: pb.Collection
) -> None:
    href = "/" + "x" * 3000 + ".md"
    response = await upload(service, collection, doc("long.md", f"# Long\n\n[far]({href})\n".encode()))
    assert response.results[0].state == pb.DOCUMENT_STATE_CREATED
    document = await service.stub.GetDocument(
        pb.GetDocumentRequest(collection_id=collection.id, document_id=response.results[0].document_id)
    )
    [link] = document.document.metadata.links
    assert (link.href, link.target_document_id) == (href, "")
