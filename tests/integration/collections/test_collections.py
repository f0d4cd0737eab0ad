"""Collections over the real gRPC service: the listing filter, and typed text it refuses."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import grpc
import pytest
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as pb
from support.collections import Running


async def create(service: Running, name: str, description: str) -> str:
    response = await service.stub.CreateCollection(
        pb.CreateCollectionRequest(
            name=name, description=description, visibility=pb.VISIBILITY_PUBLIC, owner="alice"
        )
    )
    return response.collection.id


async def listed(service: Running, ids: list[str], query: str) -> list[str]:
    response = await service.stub.ListCollections(pb.ListCollectionsRequest(collection_ids=ids, query=query))
    return sorted(collection.name for collection in response.collections)


async def test_the_listing_filter_matches_name_and_description_and_takes_wildcards_literally(
    service: Running,
) -> None:
    ids = [
        await create(service, "Runbooks", "On-call procedures"),
        await create(service, "Design notes", "Architecture decisions and RUNBOOK drafts"),
        await create(service, "100% coverage", "Testing guides"),
        await create(service, "snake_case style", "Naming rules"),
    ]
    assert await listed(service, ids, "runbook") == ["Design notes", "Runbooks"]  # any case, either field
    assert await listed(service, ids, "decisions") == ["Design notes"]
    assert await listed(service, ids, "%") == ["100% coverage"]  # not "anything"
    assert await listed(service, ids, "e_c") == ["snake_case style"]  # '_' is not "any character"
    assert await listed(service, ids, "") == ["100% coverage", "Design notes", "Runbooks", "snake_case style"]
    assert await listed(service, ids[:1], "notes") == []  # only the collections passed in


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (
            pb.ListCollectionsRequest(query="run\x00books"),
            "the name filter contains a control character (U+0000)",
        ),
        (
            pb.SearchChunksRequest(query="zorblax\x00", limit=5, text_weight=1.0),
            "the query contains a control character (U+0000)",
        ),
        (pb.SearchChunksRequest(query="  ", limit=5, text_weight=1.0), "the query is empty"),
    ],
)
async def test_typed_text_postgresql_cannot_take_is_a_clear_error(
    service: Running,
    collection: pb.Collection,
    request_: pb.ListCollectionsRequest | pb.SearchChunksRequest,
    message: str,
) -> None:
    request_.collection_ids.append(collection.id)
    call = (
        service.stub.ListCollections(request_)
        if isinstance(request_, pb.ListCollectionsRequest)
        else service.stub.SearchChunks(request_)
    )
    with pytest.raises(aio.AioRpcError) as refused:
        await call
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (refused.value.details() or "")


async def test_statistics_follow_writes_from_any_connection(
    service: Running, collection: pb.Collection, database: str
) -> None:
    """The term statistics triggers find their tables whatever the writer's search_path is
    (an operator's psql has only the default one)."""
    await service.upload(collection.id, ("a.md", b"# Alpha\n\nZorblax reconciliation."))
    connection = await asyncpg.connect(database)  # search_path: the default, without the schema
    try:
        await connection.execute(
            "DELETE FROM collections.md_chunks WHERE collection_id = $1", uuid.UUID(collection.id)
        )
        chunks = await connection.fetchval(
            "SELECT chunks FROM collections.md_scope_stats WHERE scope_id = $1", uuid.UUID(collection.id)
        )
    finally:
        await connection.close()
    assert chunks == 0


async def test_a_page_never_skips_a_document_when_one_already_shown_is_deleted(
    service: Running, collection: pb.Collection
) -> None:
    uploaded = await service.upload(
        collection.id, *[(f"{name}.md", f"# {name}\n".encode()) for name in ("a", "b", "c", "d", "e")]
    )
    ids = {result.source_key: result.document_id for result in uploaded.results}
    first = await service.stub.ListDocuments(
        pb.ListDocumentsRequest(collection_id=collection.id, page=pb.Page(page_size=2))
    )
    assert [d.source_key for d in first.documents] == ["a.md", "b.md"]
    await service.stub.DeleteDocument(
        pb.DeleteDocumentRequest(collection_id=collection.id, document_id=ids["a.md"], requested_by="alice")
    )
    seen = []
    token = first.next_page_token
    while token:
        page = await service.stub.ListDocuments(
            pb.ListDocumentsRequest(collection_id=collection.id, page=pb.Page(page_size=2, page_token=token))
        )
        seen += [d.source_key for d in page.documents]
        token = page.next_page_token
    assert seen == ["c.md", "d.md", "e.md"]


async def test_a_grant_to_a_collection_deleted_meanwhile_is_not_found(
    service: Running, collection: pb.Collection, database: str
) -> None:
    """The grant's insert waits for a delete in progress, then finds the collection gone: a
    NOT_FOUND (the gateway's 404), not a foreign-key failure (INTERNAL, 502)."""
    connection = await asyncpg.connect(database)
    try:
        deleting = connection.transaction()
        await deleting.start()
        await connection.execute(
            "DELETE FROM collections.md_collections WHERE id = $1", uuid.UUID(collection.id)
        )
        granting = asyncio.ensure_future(
            service.stub.AddGrant(pb.AddGrantRequest(collection_id=collection.id, group="eng"))
        )
        await asyncio.sleep(0.5)  # the grant passed its existence check and waits on the row lock
        assert not granting.done()
        await deleting.commit()
        with pytest.raises(aio.AioRpcError) as refused:
            await granting
    finally:
        await connection.close()
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    assert collection.id in (refused.value.details() or "")


async def test_a_collection_holds_at_most_a_hundred_group_grants(
    service: Running, collection: pb.Collection
) -> None:
    """Every request's access check reads every grant, so one owner cannot grow them unbounded."""
    for index in range(100):
        await service.stub.AddGrant(pb.AddGrantRequest(collection_id=collection.id, group=f"g{index}"))
    with pytest.raises(aio.AioRpcError) as refused:
        await service.stub.AddGrant(pb.AddGrantRequest(collection_id=collection.id, group="one-more"))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "at most 100 group grants" in (refused.value.details() or "")
    again = await service.stub.AddGrant(pb.AddGrantRequest(collection_id=collection.id, group="g7"))
    assert len(again.collection.group_grants) == 100  # granting a group it has is no new grant


async def test_a_grant_does_not_wait_for_an_upload_into_the_collection(
    service: Running, collection: pb.Collection, database: str
) -> None:
    """An upload's write holds the collection row (FOR SHARE) until it commits: grants are
    serialised on a lock of their own, so they do not wait for it."""
    connection = await asyncpg.connect(database)
    try:
        async with connection.transaction():
            await connection.execute(
                "SELECT true FROM collections.md_collections WHERE id = $1 FOR SHARE",
                uuid.UUID(collection.id),
            )
            granted = await asyncio.wait_for(
                service.stub.AddGrant(pb.AddGrantRequest(collection_id=collection.id, group="eng")), 5
            )
    finally:
        await connection.close()
    assert list(granted.collection.group_grants) == ["eng"]
