"""The embedded PostgreSQL applies Cograph's server settings when it starts."""

from __future__ import annotations

from pathlib import Path

from cograph_db import EmbeddedPostgres, connect


async def _shared_buffers(dsn: str) -> str:
    connection = await connect(dsn)
    try:
        return str(await connection.fetchval("SHOW shared_buffers"))
    finally:
        await connection.close()


async def test_session_server_runs_with_the_default_cache(postgres: str) -> None:
    assert await _shared_buffers(postgres) == "1GB"


async def test_configured_cache_applies_and_survives_a_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "pg"
    with EmbeddedPostgres(data_dir, shared_buffers="160MB") as server:
        assert await _shared_buffers(server.dsn) == "160MB"
    # A changed setting is rewritten, not appended: the newest value wins.
    with EmbeddedPostgres(data_dir, shared_buffers="192MB") as server:
        assert await _shared_buffers(server.dsn) == "192MB"
    assert (data_dir / "postgresql.conf").read_text().count("include_if_exists = 'cograph.conf'") == 1
