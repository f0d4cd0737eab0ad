"""grpc.aio server and client helpers: health, reflection, deadlines, interceptors.

The transport-free errors and argument checks of cograph_errors are re-exported while callers move
to importing them from there."""

from cograph_errors.arguments import (
    DEFAULT_RELATED_LIMIT,
    MAX_CONTENT_HASHES,
    MAX_RELATED_LIMIT,
    check_search,
    check_typed_text,
    is_blank,
    parse_content_hashes,
    parse_id,
    parse_ids,
)
from cograph_errors.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ServiceError,
    Unavailable,
    shortened,
    shown,
)
from cograph_grpc.channels import open_channel
from cograph_grpc.errors import status_of
from cograph_grpc.health import check_health
from cograph_grpc.paging import PageRequest, next_page_token, page_request
from cograph_grpc.server import GrpcServer

__all__ = [
    "DEFAULT_RELATED_LIMIT",
    "MAX_CONTENT_HASHES",
    "MAX_RELATED_LIMIT",
    "AlreadyExists",
    "FailedPrecondition",
    "GrpcServer",
    "InvalidArgument",
    "NotFound",
    "PageRequest",
    "PermissionDenied",
    "ServiceError",
    "Unavailable",
    "check_health",
    "check_search",
    "check_typed_text",
    "is_blank",
    "next_page_token",
    "open_channel",
    "page_request",
    "parse_content_hashes",
    "parse_id",
    "parse_ids",
    "shortened",
    "shown",
    "status_of",
]
