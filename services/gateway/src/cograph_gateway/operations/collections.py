"""Markdown collections: list, create, read, change, delete, grants, search, embedding."""

from __future__ import annotations

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.search.v1 import search_service_pb2 as spb
from cograph_gateway.convert import (
    chunk_hit_from_pb,
    collection_from_pb,
    embed_status_from_pb,
    failure_from_pb,
    job_from_pb,
    limit_to_pb,
    visibility_to_pb,
)
from cograph_gateway.errors import Problem
from cograph_gateway.operations.base import OperationGroup
from cograph_gateway.operations.paging import PageRequest, page_of
from cograph_gateway.policy import Operation
from cograph_gateway.schemas import (
    Collection,
    CollectionCreate,
    CollectionSearchResult,
    CollectionUpdate,
    EmbedStatus,
    Job,
    Page,
)


class CollectionOperations(OperationGroup):
    async def readable(self, query: str, page: PageRequest) -> Page[Collection]:
        """The collections the caller may read, filtered by name and description."""
        readable = await self._access.readable_collections(self._principal)
        response = await self._backends.collections.ListCollections(
            cpb.ListCollectionsRequest(collection_ids=readable, query=query, page=page.collections())
        )
        return page_of([collection_from_pb(c) for c in response.collections], response.next_page_token)

    async def create(self, data: CollectionCreate) -> Collection:
        self._access.require(self._principal, Operation.CREATE_COLLECTION)
        response = await self._backends.collections.CreateCollection(
            cpb.CreateCollectionRequest(
                name=data.name,
                description=data.description,
                visibility=visibility_to_pb(data.visibility),
                owner=self._principal.subject,
            )
        )
        return collection_from_pb(response.collection)

    async def get(self, collection_id: str) -> Collection:
        found = await self._access.collection(self._principal, Operation.GET_COLLECTION, collection_id)
        response = await self._backends.collections.GetCollection(
            cpb.GetCollectionRequest(collection_id=found.collection_id)
        )
        return collection_from_pb(response.collection)

    async def update(self, collection_id: str, changes: CollectionUpdate) -> Collection:
        if changes.name is None and changes.description is None and changes.visibility is None:
            raise Problem(400, "nothing to change: give at least one of name, description and visibility")
        found = await self._access.collection(self._principal, Operation.UPDATE_COLLECTION, collection_id)
        request = cpb.UpdateCollectionRequest(collection_id=found.collection_id)
        if changes.name is not None:
            request.name = changes.name
        if changes.description is not None:
            request.description = changes.description
        if changes.visibility is not None:
            request.visibility = visibility_to_pb(changes.visibility)
        response = await self._backends.collections.UpdateCollection(request)
        return collection_from_pb(response.collection)

    async def delete(self, collection_id: str) -> None:
        found = await self._access.collection(self._principal, Operation.DELETE_COLLECTION, collection_id)
        await self._backends.collections.DeleteCollection(
            cpb.DeleteCollectionRequest(collection_id=found.collection_id)
        )

    async def add_grant(self, collection_id: str, group: str) -> Collection:
        found = await self._access.collection(self._principal, Operation.ADD_COLLECTION_GRANT, collection_id)
        response = await self._backends.collections.AddGrant(
            cpb.AddGrantRequest(collection_id=found.collection_id, group=group.strip())
        )
        return collection_from_pb(response.collection)

    async def remove_grant(self, collection_id: str, group: str) -> None:
        found = await self._access.collection(
            self._principal, Operation.REMOVE_COLLECTION_GRANT, collection_id
        )
        await self._backends.collections.RemoveGrant(
            cpb.RemoveGrantRequest(collection_id=found.collection_id, group=group.strip())
        )

    async def search(
        self,
        collection_id: str,
        query: str,
        limit: int | None,
        operation: Operation = Operation.SEARCH_COLLECTION,
    ) -> CollectionSearchResult:
        """Hybrid search inside one collection."""
        found = await self._access.collection(self._principal, operation, collection_id)
        response = await self._backends.search.SearchCollection(
            spb.SearchCollectionRequest(
                query=query.strip(), collection_id=found.collection_id, limit=limit_to_pb(limit)
            )
        )
        return CollectionSearchResult(
            hits=[chunk_hit_from_pb(h) for h in response.hits],
            failures=[failure_from_pb(f) for f in response.failures],
        )

    async def embed_status(self, collection_id: str) -> EmbedStatus:
        found = await self._access.collection(self._principal, Operation.EMBED_STATUS, collection_id)
        response = await self._backends.collections.GetEmbedStatus(
            cpb.GetEmbedStatusRequest(collection_id=found.collection_id)
        )
        return embed_status_from_pb(response)

    async def re_embed(self, collection_id: str) -> Job:
        """Queue a re-embed of every chunk; answers the queued job."""
        found = await self._access.collection(self._principal, Operation.RE_EMBED, collection_id)
        response = await self._backends.collections.ReEmbedCollection(
            cpb.ReEmbedCollectionRequest(
                collection_id=found.collection_id, requested_by=self._principal.subject
            )
        )
        return job_from_pb(response.job)
