"""One collection's access facts by id (GetCollectionAccess), against the listing of them all."""

from __future__ import annotations

import uuid

import grpc
import pytest
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as pb
from support.collections import Running


async def access_of(service: Running, collection_id: str) -> pb.CollectionAccess | None:
    response = await service.stub.GetCollectionAccess(
        pb.GetCollectionAccessRequest(collection_id=collection_id)
    )
    return response.access if response.HasField("access") else None


async def listed_access(service: Running, collection_id: str) -> pb.CollectionAccess:
    response = await service.stub.ListCollectionAccess(pb.ListCollectionAccessRequest())
    (entry,) = [entry for entry in response.entries if entry.collection_id == collection_id]
    return entry


@pytest.mark.parametrize(
    "visibility", [pb.VISIBILITY_PUBLIC, pb.VISIBILITY_PRIVATE, pb.VISIBILITY_ADMIN_ONLY]
)
async def test_a_collections_access_facts_are_its_entry_in_the_listing(
    service: Running, visibility: pb.Visibility
) -> None:
    created = await service.stub.CreateCollection(
        pb.CreateCollectionRequest(name="Handbook", visibility=visibility, owner="bob")
    )
    other = await service.stub.CreateCollection(
        pb.CreateCollectionRequest(name="Other", visibility=pb.VISIBILITY_PUBLIC, owner="carol")
    )
    await service.stub.AddGrant(pb.AddGrantRequest(collection_id=other.collection.id, group="other-team"))
    collection_id = created.collection.id

    fresh = await access_of(service, collection_id)
    assert fresh == await listed_access(service, collection_id)
    assert fresh == pb.CollectionAccess(collection_id=collection_id, visibility=visibility, owner="bob")

    for group in ("ops", "eng", "docs"):
        await service.stub.AddGrant(pb.AddGrantRequest(collection_id=collection_id, group=group))
    await service.stub.RemoveGrant(pb.RemoveGrantRequest(collection_id=collection_id, group="ops"))
    granted = await access_of(service, collection_id)
    assert granted == await listed_access(service, collection_id)
    assert granted is not None
    assert list(granted.group_grants) == ["docs", "eng"]  # only its own, in the listing's order


async def test_no_collection_with_that_id_answers_no_access(
    service: Running, collection: pb.Collection
) -> None:
    assert await access_of(service, str(uuid.uuid4())) is None
    await service.stub.DeleteCollection(pb.DeleteCollectionRequest(collection_id=collection.id))
    assert await access_of(service, collection.id) is None


async def test_an_id_that_is_no_id_is_an_invalid_argument(service: Running) -> None:
    with pytest.raises(aio.AioRpcError) as refused:
        await access_of(service, "handbook")
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "'handbook' is not a valid id" in (refused.value.details() or "")
