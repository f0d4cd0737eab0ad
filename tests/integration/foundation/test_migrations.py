"""Migrations on a real PostgreSQL: concurrent runs, idempotence, edited history refused."""

from __future__ import annotations

import asyncio
import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cograph_collections.app import MIGRATIONS as COLLECTIONS
from cograph_db import MigrationError, Migrations, apply_migrations, connect
from cograph_db.migrate import pending_versions
from cograph_repodocs.app import MIGRATIONS as REPODOCS


async def test_concurrent_migrations_apply_each_version_once(database: str) -> None:
    """Several replicas starting at once: the advisory lock serialises them, nothing fails."""
    runs = [COLLECTIONS, REPODOCS] * 3
    connections = [await connect(database) for _ in runs]
    try:
        results = await asyncio.gather(
            *(apply_migrations(c, m) for c, m in zip(connections, runs, strict=True))
        )
        # Each schema is migrated once, whole, by whichever run took the lock first.
        expected = sorted(
            tuple(m.version for m in migrations.load()) for migrations in (COLLECTIONS, REPODOCS)
        )
        assert sorted(tuple(versions) for versions in results if versions) == expected
        for migrations in (COLLECTIONS, REPODOCS):
            rows = await connections[0].fetch(
                f"SELECT version FROM {migrations.schema}.schema_migrations ORDER BY version"
            )
            assert [row["version"] for row in rows] == [m.version for m in migrations.load()]
            assert await pending_versions(connections[0], migrations) == []
    finally:
        for connection in connections:
            await connection.close()


async def test_each_service_owns_its_schema(database: str) -> None:
    connection = await connect(database)
    try:
        for migrations in (COLLECTIONS, REPODOCS):
            await apply_migrations(connection, migrations)
        tables = {
            (row["table_schema"], row["table_name"])
            for row in await connection.fetch(
                "SELECT table_schema, table_name FROM information_schema.tables"
                " WHERE table_schema IN ('collections', 'repodocs')"
            )
        }
        for table in ("md_collections", "md_documents", "md_chunks", "md_links", "md_jobs"):
            assert ("collections", table) in tables
        for table in ("repositories", "code_nodes", "repo_documents", "repo_document_chunks"):
            assert ("repodocs", table) in tables
        assert ("repodocs", "repo_document_chunk_mentions") in tables
    finally:
        await connection.close()


@pytest.fixture
def scratch_package(tmp_path: Path) -> Iterator[Path]:
    package = tmp_path / "scratch_migrations"
    (package / "migrations").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "migrations" / "0001_first.sql").write_text("CREATE TABLE things (id int PRIMARY KEY);")
    sys.path.insert(0, str(tmp_path))
    yield package
    sys.path.remove(str(tmp_path))
    sys.modules.pop("scratch_migrations", None)


async def test_new_migrations_apply_and_edited_ones_are_refused(database: str, scratch_package: Path) -> None:
    migrations = Migrations(schema="scratch", package="scratch_migrations")
    connection = await connect(database)
    try:
        assert await apply_migrations(connection, migrations) == [1]
        assert await apply_migrations(connection, migrations) == []
        (scratch_package / "migrations" / "0002_second.sql").write_text("ALTER TABLE things ADD name text;")
        assert await pending_versions(connection, migrations) == [2]
        assert await apply_migrations(connection, migrations) == [2]
        (scratch_package / "migrations" / "0001_first.sql").write_text("CREATE TABLE other (id int);")
        with pytest.raises(MigrationError, match="was changed after it was applied"):
            await apply_migrations(connection, migrations)
    finally:
        await connection.close()


async def test_a_failing_migration_leaves_nothing_behind(database: str, scratch_package: Path) -> None:
    (scratch_package / "migrations" / "0002_broken.sql").write_text(
        "CREATE TABLE half (id int); SELECT no_such_function();"
    )
    migrations = Migrations(schema="scratch", package="scratch_migrations")
    connection = await connect(database)
    try:
        with pytest.raises(Exception, match="no_such_function"):
            await apply_migrations(connection, migrations)
        assert await connection.fetchval("SELECT to_regclass('scratch.half')") is None
        assert await pending_versions(connection, migrations) == [2]
        # The lock was released: another run can proceed.
        (scratch_package / "migrations" / "0002_broken.sql").write_text("CREATE TABLE half (id int);")
        assert await apply_migrations(connection, migrations) == [2]
    finally:
        await connection.close()


async def test_a_migration_rewritten_to_include_its_ddl_still_counts_as_applied(
    database: str, scratch_package: Path
) -> None:
    """A database that applied a migration before its DDL moved to an included file neither runs
    it again nor refuses it, when the migration names the checksum of its earlier text."""
    migrations = Migrations(schema="scratch", package="scratch_migrations")
    first = scratch_package / "migrations" / "0001_first.sql"
    connection = await connect(database)
    try:
        assert await apply_migrations(connection, migrations) == [1]
        earlier = hashlib.sha256(first.read_bytes()).hexdigest()
        (scratch_package / "ddl").mkdir()
        (scratch_package / "ddl" / "table.sql").write_text("CREATE TABLE {{name}} (id int PRIMARY KEY);")
        include = "-- include: scratch_migrations/ddl/table.sql name=things\n"
        first.write_text(include)
        with pytest.raises(MigrationError, match="was changed after it was applied"):
            await apply_migrations(connection, migrations)
        first.write_text(f"-- equivalent-to: sha256:{earlier} (the table written out)\n{include}")
        assert await apply_migrations(connection, migrations) == []
        # The record still holds the checksum of what ran, which an earlier release checks.
        assert await connection.fetchval("SELECT checksum FROM scratch.schema_migrations") == earlier
    finally:
        await connection.close()
