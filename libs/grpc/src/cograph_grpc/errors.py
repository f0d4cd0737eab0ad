"""The gRPC status of each transport-free error (cograph_errors): the one place they meet; and the
outages a server answers UNAVAILABLE though nothing raised Unavailable."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import grpc

from cograph_errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ServiceError,
    Unavailable,
)

_STATUS: dict[type[ServiceError], grpc.StatusCode] = {
    InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    FailedPrecondition: grpc.StatusCode.FAILED_PRECONDITION,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    Unavailable: grpc.StatusCode.UNAVAILABLE,
}


def status_of(error: ServiceError) -> grpc.StatusCode:
    """The status a caller gets for `error`: its class's, or its nearest base's; INTERNAL for a
    ServiceError of no known kind."""
    for kind in type(error).__mro__:
        if kind in _STATUS:
            return _STATUS[kind]
    return grpc.StatusCode.INTERNAL


@dataclass(frozen=True)
class Outage:
    """Errors that say something the service depends on cannot be reached now (a store's database
    stopped or restarting): answered UNAVAILABLE with `message`, which a caller may try again
    shortly, rather than INTERNAL, which says the service itself went wrong."""

    matches: Callable[[BaseException], bool]
    message: str
