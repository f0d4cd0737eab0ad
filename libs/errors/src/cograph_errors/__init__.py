"""Transport-free errors of the services' domain and stores, and the argument checks that raise them.

Domain rules, stores and application services import these, never grpc: the gRPC server
interceptor maps each error class to its status code in one table (cograph_grpc.errors).
"""

from cograph_errors.arguments import (
    CONTROL_CHARACTERS,
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

__all__ = [
    "CONTROL_CHARACTERS",
    "DEFAULT_RELATED_LIMIT",
    "MAX_CONTENT_HASHES",
    "MAX_RELATED_LIMIT",
    "AlreadyExists",
    "FailedPrecondition",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "ServiceError",
    "Unavailable",
    "check_search",
    "check_typed_text",
    "is_blank",
    "parse_content_hashes",
    "parse_id",
    "parse_ids",
    "shortened",
    "shown",
]
