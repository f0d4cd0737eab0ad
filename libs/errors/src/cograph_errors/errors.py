"""Errors that domain rules, stores and application services raise, free of any transport.

Each says what went wrong in words a person can act on; the gRPC server interceptor maps each
class to its status code (cograph_grpc.status_of), and the gateway maps that status to HTTP.
"""

from __future__ import annotations


class ServiceError(Exception):
    """An error whose message is for the caller; a subclass says which kind of refusal it is."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(ServiceError):
    pass


class NotFound(ServiceError):
    pass


class AlreadyExists(ServiceError):
    pass


class FailedPrecondition(ServiceError):
    pass


class PermissionDenied(ServiceError):
    pass


class Unavailable(ServiceError):
    pass


# How much of a value an error message repeats: an id, a key or a path may be kilobytes long.
SHOWN_CHARS = 100


def shortened(text: str, limit: int) -> str:
    """text, cut after `limit` characters with an ellipsis when it is longer."""
    return text if len(text) <= limit else text[:limit] + "…"


def shown(value: str) -> str:
    """A value an error message repeats: quoted and escaped (a NUL or a newline shows as such),
    cut short when long."""
    return repr(shortened(value, SHOWN_CHARS))
