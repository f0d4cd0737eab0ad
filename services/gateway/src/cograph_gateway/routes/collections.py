"""/api/md-collections: markdown collections, their grants, embedding and search."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import JSONBody, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_202_ACCEPTED

from cograph_gateway import schemas as s
from cograph_gateway.errors import problem_responses
from cograph_gateway.operations import Operations
from cograph_gateway.operations.paging import PageRequest
from cograph_gateway.routes.common import CollectionId, GroupInPath, granted_group

Id = CollectionId


class CollectionsController(Controller):
    path = "/api/md-collections"
    tags = ("collections",)

    @get("/", summary="List the collections you can read", responses=problem_responses())
    async def list_collections(
        self,
        ops: NamedDependency[Operations],
        page: NamedDependency[PageRequest],
        q: Annotated[
            str,
            QueryParameter(
                max_length=200,
                description="Filter on name and description (ILIKE); no control characters.",
                # Stated, not checked here: the collections service refuses one in its own words.
                schema_extra={"pattern": s.NO_CONTROL},
            ),
        ] = "",
    ) -> s.Page[s.Collection]:
        return await ops.collections.readable(q, page)

    @post("/", summary="Create a collection you own", responses=problem_responses())
    async def create_collection(
        self,
        data: JSONBody[s.CollectionCreate],
        ops: NamedDependency[Operations],
    ) -> s.Collection:
        return await ops.collections.create(data)

    @get("/{collection_id:str}", summary="One collection", responses=problem_responses(403, 404))
    async def get_collection(
        self,
        collection_id: Id,
        ops: NamedDependency[Operations],
    ) -> s.Collection:
        return await ops.collections.get(collection_id)

    @patch(
        "/{collection_id:str}",
        summary="Rename, describe or change the visibility of a collection (owner or admin)",
        responses=problem_responses(403, 404),
    )
    async def update_collection(
        self,
        collection_id: Id,
        data: JSONBody[s.CollectionUpdate],
        ops: NamedDependency[Operations],
    ) -> s.Collection:
        return await ops.collections.update(collection_id, data)

    @delete(
        "/{collection_id:str}",
        summary="Delete a collection with its documents (owner or admin)",
        responses=problem_responses(403, 404),
    )
    async def delete_collection(
        self,
        collection_id: Id,
        ops: NamedDependency[Operations],
    ) -> None:
        await ops.collections.delete(collection_id)

    @post(
        "/{collection_id:str}/grants",
        summary="Let a group read the collection (owner or admin)",
        responses=problem_responses(403, 404, 409),  # 409: the collection has its 100 grants
    )
    async def add_grant(
        self,
        collection_id: Id,
        data: JSONBody[s.GrantCreate],
        ops: NamedDependency[Operations],
    ) -> s.Collection:
        return await ops.collections.add_grant(collection_id, data.group)

    @delete(
        "/{collection_id:str}/grants/{group:path}",
        summary="Withdraw a group's grant (owner or admin)",
        responses=problem_responses(403, 404),
    )
    async def remove_grant(
        self,
        collection_id: Id,
        group: GroupInPath,
        request: Request[Any, Any, Any],
        ops: NamedDependency[Operations],
    ) -> None:
        await ops.collections.remove_grant(collection_id, granted_group(request, group))

    @post(
        "/{collection_id:str}/search",
        summary="Hybrid search (dense + full text) inside one collection",
        status_code=HTTP_200_OK,
        responses=problem_responses(403, 404),
    )
    async def search(
        self,
        collection_id: Id,
        data: JSONBody[s.SearchRequest],
        ops: NamedDependency[Operations],
    ) -> s.CollectionSearchResult:
        return await ops.collections.search(collection_id, data.query, data.limit)

    @get(
        "/{collection_id:str}/embed-status",
        summary="How many chunks are embedded, pending, or stale after a model change",
        responses=problem_responses(403, 404),
    )
    async def embed_status(
        self,
        collection_id: Id,
        ops: NamedDependency[Operations],
    ) -> s.EmbedStatus:
        return await ops.collections.embed_status(collection_id)

    @post(
        "/{collection_id:str}/re-embed",
        summary="Re-embed every chunk (after changing the embedding model); answers the queued job",
        status_code=HTTP_202_ACCEPTED,
        responses=problem_responses(403, 404),
    )
    async def re_embed(
        self,
        collection_id: Id,
        ops: NamedDependency[Operations],
    ) -> s.Job:
        return await ops.collections.re_embed(collection_id)
