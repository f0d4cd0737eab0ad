"""Readiness: own checks decide it, dependencies are only reported; cached checks ask seldom."""

from __future__ import annotations

import asyncio

from cograph_service import Readiness, cached


async def _ok() -> str:
    return "ok"


async def _down() -> str:
    return "UNAVAILABLE"


async def test_a_failing_dependency_is_reported_but_leaves_the_process_ready() -> None:
    report = await Readiness("svc", {"database": _ok}, dependencies={"store": _down}).report()
    assert report.ready
    assert (report.checks, report.dependencies) == ({"database": "ok"}, {"store": "UNAVAILABLE"})


async def test_a_failing_own_check_makes_the_process_unready() -> None:
    report = await Readiness("svc", {"database": _down}, dependencies={"store": _ok}).report()
    assert not report.ready
    assert report.status == "not_ready"


async def test_a_cached_check_is_asked_once_per_period_and_shared_while_in_flight() -> None:
    calls = 0

    async def slow() -> str:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.05)
        return f"answer {calls}"

    check = cached(slow, seconds=0.2)
    assert list(await asyncio.gather(check(), check(), check())) == ["answer 1"] * 3
    assert await check() == "answer 1"
    await asyncio.sleep(0.2)
    assert await check() == "answer 2"
    assert calls == 2


async def test_a_caller_that_gives_up_does_not_cancel_the_cached_call() -> None:
    async def slow() -> str:
        await asyncio.sleep(0.1)
        return "ok"

    check = cached(slow, seconds=10)
    report = await Readiness("svc", {}, dependencies={"endpoint": check}, timeout=0.01).report()
    assert report.dependencies == {"endpoint": "no answer within 0.01 s"}
    assert await check() == "ok"  # the same call, finished


async def test_a_process_shutting_down_is_unready_whatever_its_checks_say() -> None:
    readiness = Readiness("svc", {"database": _ok})
    assert (await readiness.report()).ready
    readiness.stop_serving()
    report = await readiness.report()
    assert not report.ready
    assert report.checks == {"database": "ok", "process": "shutting down"}
