"""Protobuf messages to REST bodies and back."""

from __future__ import annotations

import datetime as dt

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_gateway.policy import CollectionAccess, CollectionVisibility
from cograph_gateway.schemas import Collection, VisibilityName

_VISIBILITY_TO_PB: dict[str, pb.Visibility] = {
    "public": pb.VISIBILITY_PUBLIC,
    "private": pb.VISIBILITY_PRIVATE,
    "admin_only": pb.VISIBILITY_ADMIN_ONLY,
}
_VISIBILITY_FROM_PB: dict[pb.Visibility, VisibilityName] = {
    pb.VISIBILITY_PUBLIC: "public",
    pb.VISIBILITY_PRIVATE: "private",
    pb.VISIBILITY_ADMIN_ONLY: "admin_only",
}


def visibility_to_pb(name: VisibilityName) -> pb.Visibility:
    return _VISIBILITY_TO_PB[name]


def collection_from_pb(message: pb.Collection) -> Collection:
    return Collection(
        id=message.id,
        name=message.name,
        description=message.description,
        visibility=_VISIBILITY_FROM_PB[message.visibility],
        owner=message.owner,
        group_grants=list(message.group_grants),
        document_count=message.document_count,
        chunk_count=message.chunk_count,
        created_at=message.created_at.ToDatetime(dt.UTC),
        updated_at=message.updated_at.ToDatetime(dt.UTC),
    )


def access_from_pb(entry: pb.CollectionAccess) -> CollectionAccess:
    return CollectionAccess(
        collection_id=entry.collection_id,
        visibility=CollectionVisibility(_VISIBILITY_FROM_PB[entry.visibility]),
        owner=entry.owner,
        group_grants=frozenset(entry.group_grants),
    )
