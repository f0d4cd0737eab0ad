"""Applies the policy to real resources: fetches access facts from the owning service, then decides."""

from __future__ import annotations

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_gateway.backends import Backends
from cograph_gateway.convert import access_from_pb
from cograph_gateway.errors import Problem
from cograph_gateway.identity import Principal
from cograph_gateway.policy import CollectionAccess, can_read_collection, can_write_collection


class CollectionGuard:
    def __init__(self, backends: Backends, hide_existence: bool) -> None:
        self._backends = backends
        self._hide_existence = hide_existence

    async def _access(self) -> dict[str, CollectionAccess]:
        response = await self._backends.collections.ListCollectionAccess(pb.ListCollectionAccessRequest())
        return {entry.collection_id: access_from_pb(entry) for entry in response.entries}

    async def readable_ids(self, principal: Principal) -> list[str]:
        return [
            cid for cid, access in (await self._access()).items() if can_read_collection(principal, access)
        ]

    async def _existing(self, collection_id: str) -> CollectionAccess:
        access = (await self._access()).get(collection_id)
        if access is None:
            raise Problem(404, f"collection {collection_id} does not exist")
        return access

    def _refuse(self, principal: Principal, access: CollectionAccess, detail: str) -> Problem:
        """403 for what the caller may see exists; 404 when it must not learn that (setting)."""
        if self._hide_existence and not can_read_collection(principal, access):
            return Problem(404, f"collection {access.collection_id} does not exist")
        return Problem(403, detail)

    async def require_read(self, principal: Principal, collection_id: str) -> CollectionAccess:
        access = await self._existing(collection_id)
        if not can_read_collection(principal, access):
            raise self._refuse(principal, access, f"you may not read collection {collection_id}")
        return access

    async def require_write(self, principal: Principal, collection_id: str) -> CollectionAccess:
        access = await self._existing(collection_id)
        if not can_write_collection(principal, access):
            raise self._refuse(
                principal, access, f"only the owner or an administrator may change collection {collection_id}"
            )
        return access
