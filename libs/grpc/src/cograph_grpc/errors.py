"""Domain errors a servicer raises; the server interceptor turns each into its gRPC status.

Handlers stay free of status-code plumbing, and every error reaches the caller
with a message a person can act on.
"""

from __future__ import annotations

import grpc


class ServiceError(Exception):
    code: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(ServiceError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(ServiceError):
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(ServiceError):
    code = grpc.StatusCode.ALREADY_EXISTS


class FailedPrecondition(ServiceError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class PermissionDenied(ServiceError):
    code = grpc.StatusCode.PERMISSION_DENIED


class Unavailable(ServiceError):
    code = grpc.StatusCode.UNAVAILABLE


# How much of a value an error message repeats: an id, a key or a path may be kilobytes long.
SHOWN_CHARS = 100


def shortened(text: str, limit: int) -> str:
    """text, cut after `limit` characters with an ellipsis when it is longer."""
    return text if len(text) <= limit else text[:limit] + "…"


def shown(value: str) -> str:
    """A value an error message repeats: quoted and escaped (a NUL or a newline shows as such),
    cut short when long."""
    return repr(shortened(value, SHOWN_CHARS))
