"""Readiness: a named set of checks, each answering "ok" or what is wrong."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import msgspec
from grpc import aio

from cograph_db.migrate import Migrations, pending_versions
from cograph_grpc import check_health

# A check answers "ok" when its dependency is usable, else a short reason.
Check = Callable[[], Awaitable[str]]


class Report(msgspec.Struct, frozen=True):
    service: str
    status: str  # "ready" or "not_ready"
    checks: dict[str, str]

    @property
    def ready(self) -> bool:
        return self.status == "ready"


class Readiness:
    def __init__(self, service: str, checks: dict[str, Check], timeout: float = 3.0) -> None:
        self.service = service
        self._checks = checks
        self._timeout = timeout

    async def _run(self, check: Check) -> str:
        try:
            return await asyncio.wait_for(check(), self._timeout)
        except TimeoutError:
            return f"no answer within {self._timeout:g} s"
        except Exception as exc:  # a failing dependency is a status, not a crash
            return f"{type(exc).__name__}: {exc}"

    async def report(self) -> Report:
        names = list(self._checks)
        results = await asyncio.gather(*(self._run(self._checks[name]) for name in names))
        checks = dict(zip(names, results, strict=True))
        ready = all(result == "ok" for result in results)
        return Report(self.service, "ready" if ready else "not_ready", checks)


def database_check(pool: asyncpg.Pool[Any], migrations: Migrations | None = None) -> Check:
    async def check() -> str:
        async with pool.acquire() as connection:
            await connection.fetchval("SELECT 1")
            if migrations is not None:
                pending = await pending_versions(connection, migrations)
                if pending:
                    return f"migrations pending: {pending}"
        return "ok"

    return check


def grpc_health_check(channel: aio.Channel) -> Check:
    async def check() -> str:
        status = await check_health(channel)
        return "ok" if status == "SERVING" else status

    return check
