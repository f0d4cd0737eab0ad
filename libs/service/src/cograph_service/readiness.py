"""Readiness: a named set of checks, each answering "ok" or what is wrong.

A process is ready when its own checks pass (its database, its migrations, its model): that
is what Kubernetes and gRPC health see. The services and endpoints it calls are reported
beside them but never make it unready: a store that is down is named in a search's failures
and the rest answers, so taking every caller out of its Service with it would turn one
outage into a total one.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import msgspec
from grpc import aio

from cograph_db.migrate import Migrations, pending_versions
from cograph_grpc import check_health

# A check answers "ok" when what it checks is usable, else a short reason.
Check = Callable[[], Awaitable[str]]


class Report(msgspec.Struct, frozen=True):
    service: str
    status: str  # "ready" or "not_ready": decided by `checks` alone
    checks: dict[str, str]  # what this process needs to serve
    dependencies: dict[str, str]  # what it calls: for operators, never gating

    @property
    def ready(self) -> bool:
        return self.status == "ready"


class Readiness:
    def __init__(
        self,
        service: str,
        checks: dict[str, Check],
        *,
        dependencies: dict[str, Check] | None = None,
        timeout: float = 3.0,
    ) -> None:
        self.service = service
        self._checks = checks
        self._dependencies = dependencies or {}
        self._timeout = timeout
        self._stopping = False

    def stop_serving(self) -> None:
        """From now on the process is not ready: it is shutting down, and a load balancer must
        stop sending it requests while it finishes the ones it has (gRPC health says the same)."""
        self._stopping = True

    async def _run(self, check: Check) -> str:
        try:
            return await asyncio.wait_for(check(), self._timeout)
        except TimeoutError:
            return f"no answer within {self._timeout:g} s"
        except Exception as exc:  # a failing check is a status, not a crash
            return f"{type(exc).__name__}: {exc}"

    async def _run_all(self, checks: dict[str, Check]) -> dict[str, str]:
        results = await asyncio.gather(*(self._run(check) for check in checks.values()))
        return dict(zip(checks, results, strict=True))

    async def report(self) -> Report:
        checks, dependencies = await asyncio.gather(
            self._run_all(self._checks), self._run_all(self._dependencies)
        )
        if self._stopping:
            checks["process"] = "shutting down"
        ready = all(result == "ok" for result in checks.values())
        return Report(self.service, "ready" if ready else "not_ready", checks, dependencies)


def cached(check: Check, seconds: float) -> Check:
    """The check's answer, reused for `seconds`: however often probes and operators ask, what it
    checks is asked at most once per period, and concurrent callers share the one call in flight."""
    answer: asyncio.Future[str] | None = None
    asked = -math.inf

    async def reuse() -> str:
        nonlocal answer, asked
        if answer is None or (answer.done() and time.monotonic() - asked >= seconds):
            answer = asyncio.ensure_future(check())
            asked = time.monotonic()
        # A caller that gives up (its timeout) must not cancel the call the others wait for.
        return await asyncio.shield(answer)

    return reuse


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
