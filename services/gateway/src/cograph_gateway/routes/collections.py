"""/api/md-collections: markdown collections."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_gateway.access import CollectionGuard
from cograph_gateway.backends import Backends
from cograph_gateway.convert import collection_from_pb, visibility_to_pb
from cograph_gateway.errors import Problem
from cograph_gateway.identity import Principal
from cograph_gateway.policy import can_create
from cograph_gateway.schemas import Collection, CollectionCreate, Page


class CollectionsController(Controller):
    path = "/api/md-collections"
    tags = ("collections",)

    @get("/", summary="List the collections you can read")
    async def list_collections(
        self,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        guard: NamedDependency[CollectionGuard],
        q: Annotated[str, QueryParameter(description="Filter on name and description (ILIKE)")] = "",
        page_size: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
        page_token: FromQuery[str] = "",
    ) -> Page[Collection]:
        readable = await guard.readable_ids(principal)
        response = await backends.collections.ListCollections(
            pb.ListCollectionsRequest(
                collection_ids=readable, query=q, page=pb.Page(page_size=page_size, page_token=page_token)
            )
        )
        return Page(
            items=[collection_from_pb(c) for c in response.collections],
            next_page_token=response.next_page_token or None,
        )

    @post("/", summary="Create a collection you own")
    async def create_collection(
        self,
        data: JSONBody[CollectionCreate],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
    ) -> Collection:
        if not can_create(principal):
            raise Problem(401, "sign in to create a collection")
        response = await backends.collections.CreateCollection(
            pb.CreateCollectionRequest(
                name=data.name,
                description=data.description,
                visibility=visibility_to_pb(data.visibility),
                owner=principal.subject,
            )
        )
        return collection_from_pb(response.collection)

    @get("/{collection_id:str}", summary="One collection")
    async def get_collection(
        self,
        collection_id: FromPath[str],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        guard: NamedDependency[CollectionGuard],
    ) -> Collection:
        await guard.require_read(principal, collection_id)
        response = await backends.collections.GetCollection(
            pb.GetCollectionRequest(collection_id=collection_id)
        )
        return collection_from_pb(response.collection)
