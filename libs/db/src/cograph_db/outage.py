"""Which errors mean the database cannot be reached now (stopped, restarting, a connection cut),
as opposed to a statement it refused: the first is worth trying again shortly, the second not.

A store service answers the first UNAVAILABLE (the gateway: 503 with Retry-After), and a job
worker treats it as an interruption, not as the job's own failure.
"""

from __future__ import annotations

from types import TracebackType

import asyncpg

# PostgreSQL's own words for it: a connection exception (class 08), the server shutting down,
# crashed or still starting (57P01-57P03), or out of connection slots (53300). Any other refusal
# of a new connection counts too (see _unreachable).
_SERVER_UNREACHABLE: tuple[type[Exception], ...] = (
    asyncpg.PostgresConnectionError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.CannotConnectNowError,
    asyncpg.TooManyConnectionsError,
    # asyncpg's protocol state on a connection whose backend was cut while it was idle.
    asyncpg.InternalClientError,
)

# How far along __cause__ / __context__ an error is followed: an application may wrap one.
_CHAIN_DEPTH = 8


def database_unreachable(error: BaseException) -> bool:
    """Whether `error` (or what caused it) says the database cannot be reached at the moment."""
    seen: BaseException | None = error
    for _ in range(_CHAIN_DEPTH):
        if seen is None:
            return False
        if _unreachable(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _unreachable(error: BaseException) -> bool:
    if isinstance(error, _SERVER_UNREACHABLE):
        return True
    if isinstance(error, asyncpg.PostgresError):
        # Whatever the server answers a new connection with, it refused it (a database that
        # accepts no connections now, say); a statement's own failure is not an outage.
        return _raised_in(error.__traceback__, "asyncpg.connect_utils")
    if isinstance(error, asyncpg.InterfaceError):  # also a misuse; only a closed connection counts
        return str(error).endswith("connection is closed")
    # A refused or reset socket, but only asyncpg's: a service's own file errors are OSErrors too.
    # A timeout is left out: a statement too slow for command_timeout is not an outage.
    if isinstance(error, OSError) and not isinstance(error, TimeoutError):
        return _raised_in(error.__traceback__, "asyncpg")
    return False


def _raised_in(traceback: TracebackType | None, package: str) -> bool:
    """Whether the error passed through a frame of `package` (a module of it, or the package)."""
    while traceback is not None:
        module = traceback.tb_frame.f_globals.get("__name__", "")
        if module == package or module.startswith(f"{package}."):
            return True
        traceback = traceback.tb_next
    return False
