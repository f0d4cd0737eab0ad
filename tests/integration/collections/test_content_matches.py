"""FindDocumentsByContent: collection documents found by the hash of their bytes, within the scope."""

from __future__ import annotations

import hashlib

import grpc
import pytest
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as pb
from support.collections import Running

GLOSSARY = b"# Glossary\n\nA zorblax is the billing reconciliation batch.\n"


def sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


async def create(service: Running, name: str) -> str:
    response = await service.stub.CreateCollection(
        pb.CreateCollectionRequest(name=name, visibility=pb.VISIBILITY_PRIVATE, owner="alice")
    )
    return response.collection.id


async def test_documents_are_found_by_their_bytes_only_in_the_collections_passed(service: Running) -> None:
    ids = [await create(service, "Alpha"), await create(service, "Beta")]
    for collection_id, key in zip(ids, ("glossary.md", "terms/glossary.md"), strict=True):
        stored = await service.stub.UploadDocuments(
            pb.UploadDocumentsRequest(
                collection_id=collection_id,
                documents=[
                    pb.DocumentContent(source_key=key, content=GLOSSARY),
                    pb.DocumentContent(source_key="other.md", content=b"# Other\n\nSomething else.\n"),
                ],
                requested_by="alice",
            )
        )
        assert stored.counts.created == 2
    absent = sha256(b"# Not uploaded anywhere\n")

    found = await service.stub.FindDocumentsByContent(
        pb.FindDocumentsByContentRequest(content_hashes=[sha256(GLOSSARY), absent], collection_ids=ids)
    )
    assert [(m.collection_name, m.collection_id, m.source_key, m.content_hash) for m in found.matches] == [
        ("Alpha", ids[0], "glossary.md", sha256(GLOSSARY)),
        ("Beta", ids[1], "terms/glossary.md", sha256(GLOSSARY)),
    ]
    assert all(m.document_id for m in found.matches)

    only_beta = await service.stub.FindDocumentsByContent(
        pb.FindDocumentsByContentRequest(content_hashes=[sha256(GLOSSARY)], collection_ids=ids[1:])
    )
    assert [m.collection_id for m in only_beta.matches] == [ids[1]]
    nothing = await service.stub.FindDocumentsByContent(
        pb.FindDocumentsByContentRequest(content_hashes=[sha256(GLOSSARY)], collection_ids=[])
    )
    assert list(nothing.matches) == []

    # Every collection, for a caller that authorizes each match itself: it costs what the
    # matches cost, not what a readable scope of every collection would.
    everywhere = await service.stub.FindDocumentsByContent(
        pb.FindDocumentsByContentRequest(content_hashes=[sha256(GLOSSARY), absent], every_collection=True)
    )
    assert [m.collection_id for m in everywhere.matches] == ids
    access = await service.stub.ListCollectionAccess(pb.ListCollectionAccessRequest(collection_ids=ids[1:]))
    assert [entry.collection_id for entry in access.entries] == ids[1:]
    every = await service.stub.ListCollectionAccess(pb.ListCollectionAccessRequest())
    assert set(ids) <= {entry.collection_id for entry in every.entries}


@pytest.mark.parametrize(
    ("hashes", "ids", "message"),
    [
        (["not-a-hash"], [], "is not a sha256 hex digest"),
        ([sha256(str(n).encode()) for n in range(1001)], [], "at most 1000 content hashes"),
        ([sha256(b"x")], ["no-uuid"], "collection 'no-uuid' is not a valid id"),
    ],
)
async def test_malformed_arguments_are_a_clear_error(
    service: Running, hashes: list[str], ids: list[str], message: str
) -> None:
    with pytest.raises(aio.AioRpcError) as refused:
        await service.stub.FindDocumentsByContent(
            pb.FindDocumentsByContentRequest(content_hashes=hashes, collection_ids=ids)
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (refused.value.details() or "")
