"""/api/md-collections: markdown collections, their grants, embedding and search."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_202_ACCEPTED

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.search.v1 import search_service_pb2 as spb
from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.convert import (
    chunk_hit_from_pb,
    collection_from_pb,
    embed_status_from_pb,
    failure_from_pb,
    job_from_pb,
    limit_to_pb,
    visibility_to_pb,
)
from cograph_gateway.errors import Problem, problem_responses
from cograph_gateway.identity import Principal
from cograph_gateway.policy import Operation
from cograph_gateway.routes.common import (
    DEFAULT_PAGE_SIZE,
    CollectionId,
    PageSize,
    PageToken,
    granted_group,
    next_token,
)
from cograph_gateway.schemas import (
    Collection,
    CollectionCreate,
    CollectionSearchResult,
    CollectionUpdate,
    EmbedStatus,
    GrantCreate,
    Job,
    Page,
    SearchRequest,
)

Id = CollectionId


class CollectionsController(Controller):
    path = "/api/md-collections"
    tags = ("collections",)

    @get("/", summary="List the collections you can read", responses=problem_responses())
    async def list_collections(
        self,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
        q: Annotated[
            str, QueryParameter(max_length=200, description="Filter on name and description (ILIKE)")
        ] = "",
        page_size: PageSize = DEFAULT_PAGE_SIZE,
        page_token: PageToken = "",
    ) -> Page[Collection]:
        readable = await access.readable_collections(principal)
        response = await backends.collections.ListCollections(
            cpb.ListCollectionsRequest(
                collection_ids=readable, query=q, page=cpb.Page(page_size=page_size, page_token=page_token)
            )
        )
        return Page(
            items=[collection_from_pb(c) for c in response.collections],
            next_page_token=next_token(response.next_page_token),
        )

    @post("/", summary="Create a collection you own", responses=problem_responses())
    async def create_collection(
        self,
        data: JSONBody[CollectionCreate],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> Collection:
        access.require(principal, Operation.CREATE_COLLECTION)
        response = await backends.collections.CreateCollection(
            cpb.CreateCollectionRequest(
                name=data.name,
                description=data.description,
                visibility=visibility_to_pb(data.visibility),
                owner=principal.subject,
            )
        )
        return collection_from_pb(response.collection)

    @get("/{collection_id:str}", summary="One collection", responses=problem_responses(403, 404))
    async def get_collection(
        self,
        collection_id: Id,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> Collection:
        found = await access.collection(principal, Operation.GET_COLLECTION, collection_id)
        response = await backends.collections.GetCollection(
            cpb.GetCollectionRequest(collection_id=found.collection_id)
        )
        return collection_from_pb(response.collection)

    @patch(
        "/{collection_id:str}",
        summary="Rename, describe or change the visibility of a collection (owner or admin)",
        responses=problem_responses(403, 404),
    )
    async def update_collection(
        self,
        collection_id: Id,
        data: JSONBody[CollectionUpdate],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> Collection:
        if data.name is None and data.description is None and data.visibility is None:
            raise Problem(400, "nothing to change: give at least one of name, description and visibility")
        found = await access.collection(principal, Operation.UPDATE_COLLECTION, collection_id)
        request = cpb.UpdateCollectionRequest(collection_id=found.collection_id)
        if data.name is not None:
            request.name = data.name
        if data.description is not None:
            request.description = data.description
        if data.visibility is not None:
            request.visibility = visibility_to_pb(data.visibility)
        response = await backends.collections.UpdateCollection(request)
        return collection_from_pb(response.collection)

    @delete(
        "/{collection_id:str}",
        summary="Delete a collection with its documents (owner or admin)",
        responses=problem_responses(403, 404),
    )
    async def delete_collection(
        self,
        collection_id: Id,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> None:
        found = await access.collection(principal, Operation.DELETE_COLLECTION, collection_id)
        await backends.collections.DeleteCollection(
            cpb.DeleteCollectionRequest(collection_id=found.collection_id)
        )

    @post(
        "/{collection_id:str}/grants",
        summary="Let a group read the collection (owner or admin)",
        responses=problem_responses(403, 404, 409),  # 409: the collection has its 100 grants
    )
    async def add_grant(
        self,
        collection_id: Id,
        data: JSONBody[GrantCreate],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> Collection:
        found = await access.collection(principal, Operation.ADD_COLLECTION_GRANT, collection_id)
        response = await backends.collections.AddGrant(
            cpb.AddGrantRequest(collection_id=found.collection_id, group=data.group.strip())
        )
        return collection_from_pb(response.collection)

    @delete(
        "/{collection_id:str}/grants/{group:path}",
        summary="Withdraw a group's grant (owner or admin)",
        responses=problem_responses(403, 404),
    )
    async def remove_grant(
        self,
        collection_id: Id,
        group: FromPath[str],
        request: Request[Any, Any, Any],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> None:
        found = await access.collection(principal, Operation.REMOVE_COLLECTION_GRANT, collection_id)
        await backends.collections.RemoveGrant(
            cpb.RemoveGrantRequest(
                collection_id=found.collection_id, group=granted_group(request, group).strip()
            )
        )

    @post(
        "/{collection_id:str}/search",
        summary="Hybrid search (dense + full text) inside one collection",
        status_code=HTTP_200_OK,
        responses=problem_responses(403, 404),
    )
    async def search(
        self,
        collection_id: Id,
        data: JSONBody[SearchRequest],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> CollectionSearchResult:
        found = await access.collection(principal, Operation.SEARCH_COLLECTION, collection_id)
        response = await backends.search.SearchCollection(
            spb.SearchCollectionRequest(
                query=data.query.strip(), collection_id=found.collection_id, limit=limit_to_pb(data.limit)
            )
        )
        return CollectionSearchResult(
            hits=[chunk_hit_from_pb(h) for h in response.hits],
            failures=[failure_from_pb(f) for f in response.failures],
        )

    @get(
        "/{collection_id:str}/embed-status",
        summary="How many chunks are embedded, pending, or stale after a model change",
        responses=problem_responses(403, 404),
    )
    async def embed_status(
        self,
        collection_id: Id,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> EmbedStatus:
        found = await access.collection(principal, Operation.EMBED_STATUS, collection_id)
        response = await backends.collections.GetEmbedStatus(
            cpb.GetEmbedStatusRequest(collection_id=found.collection_id)
        )
        return embed_status_from_pb(response)

    @post(
        "/{collection_id:str}/re-embed",
        summary="Re-embed every chunk (after changing the embedding model); answers the queued job",
        status_code=HTTP_202_ACCEPTED,
        responses=problem_responses(403, 404),
    )
    async def re_embed(
        self,
        collection_id: Id,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> Job:
        found = await access.collection(principal, Operation.RE_EMBED, collection_id)
        response = await backends.collections.ReEmbedCollection(
            cpb.ReEmbedCollectionRequest(collection_id=found.collection_id, requested_by=principal.subject)
        )
        return job_from_pb(response.job)
