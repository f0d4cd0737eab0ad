"""Migration 0008: one repository per host/owner/name whatever the case. A database that already
holds two spellings of one name is refused with what to do, and nothing in it is changed."""

from __future__ import annotations

import asyncpg
import pytest

from cograph_db import apply_migrations, connect
from cograph_repodocs.app import MIGRATIONS
from support.migrations import before


async def test_two_spellings_of_one_repository_stop_the_migration_with_a_hint(database: str) -> None:
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 8))
        for owner in ("acme", "Acme"):
            await connection.execute(
                "INSERT INTO repodocs.repositories (host, owner, name, clone_url, visibility, owner_subject)"
                " VALUES ('example.com', $1, 'tools', 'https://example.com/x.git', 'public', 'admin')",
                owner,
            )
        with pytest.raises(asyncpg.RaiseError) as refused:
            await apply_migrations(connection, MIGRATIONS)
        assert "differ only in letter case" in str(refused.value)
        assert "delete all but one" in (refused.value.as_dict().get("hint") or "")
        owners = await connection.fetch("SELECT owner FROM repodocs.repositories ORDER BY owner")
        assert [row["owner"] for row in owners] == ["Acme", "acme"]

        await connection.execute("DELETE FROM repodocs.repositories WHERE owner = 'Acme'")
        assert 8 in await apply_migrations(connection, MIGRATIONS)
        with pytest.raises(asyncpg.UniqueViolationError):
            await connection.execute(
                "INSERT INTO repodocs.repositories (host, owner, name, clone_url, visibility, owner_subject)"
                " VALUES ('EXAMPLE.com', 'ACME', 'Tools', 'https://example.com/y.git', 'public', 'admin')"
            )
    finally:
        await connection.close()
