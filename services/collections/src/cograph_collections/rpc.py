"""CollectionsServicer: protobuf in, domain calls, protobuf out. Status codes come from domain errors.

RPCs of the contract not implemented here yet answer UNIMPLEMENTED (the generated base class).
"""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_collections import domain
from cograph_collections.mapping import access_to_pb, collection_to_pb, visibility_from_pb
from cograph_collections.store import CollectionRow, CollectionStore
from cograph_grpc import InvalidArgument, NotFound, next_page_token, page_window

Context = aio.ServicerContext[Any, Any]


class CollectionsServicer(pb_grpc.CollectionsServiceServicer):
    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    async def _require(self, store: CollectionStore, collection_id: uuid.UUID) -> CollectionRow:
        row = await store.get(collection_id)
        if row is None:
            raise NotFound(f"collection {collection_id} does not exist")
        return row

    async def CreateCollection(
        self, request: pb.CreateCollectionRequest, context: Context
    ) -> pb.CreateCollectionResponse:
        name = domain.check_name(request.name)
        description = domain.check_description(request.description)
        visibility = visibility_from_pb(request.visibility)
        if not request.owner:
            raise InvalidArgument("a collection needs an owner")
        async with self._pool.acquire() as connection:
            store = CollectionStore(connection)
            collection_id = await store.create(name, description, visibility, request.owner)
            row = await self._require(store, collection_id)
        return pb.CreateCollectionResponse(collection=collection_to_pb(row))

    async def GetCollection(
        self, request: pb.GetCollectionRequest, context: Context
    ) -> pb.GetCollectionResponse:
        collection_id = domain.parse_id(request.collection_id, "collection")
        async with self._pool.acquire() as connection:
            row = await self._require(CollectionStore(connection), collection_id)
        return pb.GetCollectionResponse(collection=collection_to_pb(row))

    async def ListCollections(
        self, request: pb.ListCollectionsRequest, context: Context
    ) -> pb.ListCollectionsResponse:
        ids = [domain.parse_id(value, "collection") for value in request.collection_ids]
        size, offset = page_window(request.page.page_size, request.page.page_token)
        async with self._pool.acquire() as connection:
            rows = await CollectionStore(connection).find(
                ids, query=request.query, limit=size + 1, offset=offset
            )
        return pb.ListCollectionsResponse(
            collections=[collection_to_pb(row) for row in rows[:size]],
            next_page_token=next_page_token(offset, size, len(rows)),
        )

    async def UpdateCollection(
        self, request: pb.UpdateCollectionRequest, context: Context
    ) -> pb.UpdateCollectionResponse:
        collection_id = domain.parse_id(request.collection_id, "collection")
        name = domain.check_name(request.name) if request.HasField("name") else None
        description = (
            domain.check_description(request.description) if request.HasField("description") else None
        )
        visibility = visibility_from_pb(request.visibility) if request.HasField("visibility") else None
        async with self._pool.acquire() as connection:
            store = CollectionStore(connection)
            if not await store.update(
                collection_id, name=name, description=description, visibility=visibility
            ):
                raise NotFound(f"collection {collection_id} does not exist")
            row = await self._require(store, collection_id)
        return pb.UpdateCollectionResponse(collection=collection_to_pb(row))

    async def DeleteCollection(
        self, request: pb.DeleteCollectionRequest, context: Context
    ) -> pb.DeleteCollectionResponse:
        collection_id = domain.parse_id(request.collection_id, "collection")
        async with self._pool.acquire() as connection:
            if not await CollectionStore(connection).delete(collection_id):
                raise NotFound(f"collection {collection_id} does not exist")
        return pb.DeleteCollectionResponse()

    async def ListCollectionAccess(
        self, request: pb.ListCollectionAccessRequest, context: Context
    ) -> pb.ListCollectionAccessResponse:
        async with self._pool.acquire() as connection:
            rows = await CollectionStore(connection).access()
        return pb.ListCollectionAccessResponse(entries=[access_to_pb(row) for row in rows])

    async def AddGrant(self, request: pb.AddGrantRequest, context: Context) -> pb.AddGrantResponse:
        collection_id = domain.parse_id(request.collection_id, "collection")
        group = domain.check_group(request.group)
        async with self._pool.acquire() as connection, connection.transaction():
            store = CollectionStore(connection)
            await self._require(store, collection_id)
            await store.add_grant(collection_id, group)
            row = await self._require(store, collection_id)
        return pb.AddGrantResponse(collection=collection_to_pb(row))

    async def RemoveGrant(self, request: pb.RemoveGrantRequest, context: Context) -> pb.RemoveGrantResponse:
        collection_id = domain.parse_id(request.collection_id, "collection")
        async with self._pool.acquire() as connection, connection.transaction():
            store = CollectionStore(connection)
            await self._require(store, collection_id)
            await store.remove_grant(collection_id, request.group.strip())
            row = await self._require(store, collection_id)
        return pb.RemoveGrantResponse(collection=collection_to_pb(row))
