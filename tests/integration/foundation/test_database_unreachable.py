"""Which real database errors say the database cannot be reached now (answered UNAVAILABLE, a job
requeued) and which are a statement's own failure (INTERNAL, the job's own error)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable
from pathlib import Path

import asyncpg
import pytest

from cograph_db import connect
from cograph_db.outage import database_unreachable


async def _raised(work: Awaitable[object]) -> BaseException:
    with pytest.raises(Exception) as caught:  # noqa: PT011 - any error: the test judges it
        await work
    return caught.value


async def test_no_server_at_the_address_is_unreachable(tmp_path: Path) -> None:
    error = await _raised(connect(f"postgresql://postgres@/postgres?host={tmp_path}", timeout=5))
    assert isinstance(error, OSError)
    assert database_unreachable(error)


async def test_a_connection_cut_by_the_server_is_unreachable(postgres: str) -> None:
    """As a fast shutdown or a restart cuts every session."""
    admin, victim = await connect(postgres), await connect(postgres)
    try:
        await admin.execute("SELECT pg_terminate_backend($1)", victim.get_server_pid())
        error = await _raised(victim.fetchval("SELECT 1"))
        assert database_unreachable(error), repr(error)
        closed = await _raised(victim.fetchval("SELECT 1"))  # the connection is gone now
        assert database_unreachable(closed), repr(closed)
    finally:
        await admin.close()
        victim.terminate()


async def test_a_database_that_refuses_new_connections_is_unreachable(postgres: str) -> None:
    """As while an operator has it closed (ALLOW_CONNECTIONS false): the server answers, and refuses."""
    admin = await connect(postgres)
    name = f"closed_{uuid.uuid4().hex[:8]}"
    await admin.execute(f"CREATE DATABASE {name} WITH ALLOW_CONNECTIONS false")
    try:
        error = await _raised(asyncpg.connect(postgres, database=name))
        assert isinstance(error, asyncpg.PostgresError), repr(error)
        assert database_unreachable(error), repr(error)
    finally:
        await admin.execute(f"DROP DATABASE {name}")
        await admin.close()


async def test_a_statement_the_database_refuses_is_not_an_outage(postgres: str) -> None:
    connection = await connect(postgres)
    try:
        for statement in ("SELECT * FROM no_such_table", "SELECT 1/0", "SELECT pg_sleep(2)"):
            error = await _raised(connection.fetchval(statement, timeout=0.2))
            assert not database_unreachable(error), repr(error)
    finally:
        await connection.close()
    assert isinstance(error, TimeoutError)  # too slow is not gone: the last one timed out


async def test_an_error_caused_by_an_outage_is_one_and_a_file_error_is_not(tmp_path: Path) -> None:
    cause = await _raised(connect(f"postgresql://postgres@/postgres?host={tmp_path}", timeout=5))
    with pytest.raises(RuntimeError) as wrapped:
        raise RuntimeError("the upload could not be recorded") from cause
    assert database_unreachable(wrapped.value)
    with pytest.raises(FileNotFoundError) as missing:
        (tmp_path / "absent").read_text()
    assert not database_unreachable(missing.value)
