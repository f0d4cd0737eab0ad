"""Domain rows to protobuf messages and back: the only place that knows both."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_collections.domain import Visibility
from cograph_collections.store import AccessRow, CollectionRow
from cograph_grpc import InvalidArgument

VISIBILITY_TO_PB = {
    Visibility.PUBLIC: pb.VISIBILITY_PUBLIC,
    Visibility.PRIVATE: pb.VISIBILITY_PRIVATE,
    Visibility.ADMIN_ONLY: pb.VISIBILITY_ADMIN_ONLY,
}
VISIBILITY_FROM_PB = {value: key for key, value in VISIBILITY_TO_PB.items()}


def visibility_from_pb(value: int) -> Visibility:
    try:
        return VISIBILITY_FROM_PB[value]  # type: ignore[index]
    except KeyError:
        raise InvalidArgument("visibility must be public, private or admin_only") from None


def timestamp(value: object) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)  # type: ignore[arg-type]
    return stamp


def collection_to_pb(row: CollectionRow) -> pb.Collection:
    return pb.Collection(
        id=str(row.id),
        name=row.name,
        description=row.description,
        visibility=VISIBILITY_TO_PB[row.visibility],
        owner=row.owner,
        group_grants=row.group_grants,
        document_count=row.document_count,
        chunk_count=row.chunk_count,
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
    )


def access_to_pb(row: AccessRow) -> pb.CollectionAccess:
    return pb.CollectionAccess(
        collection_id=str(row.id),
        visibility=VISIBILITY_TO_PB[row.visibility],
        owner=row.owner,
        group_grants=row.group_grants,
    )
