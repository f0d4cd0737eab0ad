"""Versioned plain-SQL migrations per service, applied under an advisory lock.

Several replicas may start at once: the first takes the lock and migrates, the
others wait, then find nothing left to do. A migration that was edited after it
was applied is refused, because the database no longer matches its history.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import asyncpg

log = logging.getLogger(__name__)

# One lock for every service's migrations: extensions are shared by all schemas.
LOCK_KEY = 0x636F6772  # "cogr"
_FILE = re.compile(r"^(\d{4})_(\w+)\.sql$")
_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]*$")


class MigrationError(RuntimeError):
    pass


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


@dataclass(frozen=True)
class Migrations:
    """A service's schema and the migrations that build it, from `<package>/migrations/NNNN_name.sql`."""

    schema: str
    package: str

    def load(self) -> list[Migration]:
        found = []
        for entry in resources.files(self.package).joinpath("migrations").iterdir():
            match = _FILE.match(entry.name)
            if match:
                found.append(
                    Migration(int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8"))
                )
        found.sort(key=lambda m: m.version)
        versions = [m.version for m in found]
        if len(set(versions)) != len(versions):
            raise MigrationError(f"{self.package}: two migrations share a version number")
        return found


async def apply_migrations(connection: asyncpg.Connection[Any], migrations: Migrations) -> list[int]:
    """Bring the service's schema up to date; answers the versions applied now.

    Schema names are validated identifiers (they cannot be bound parameters), hence the f-strings.
    """
    if not _SCHEMA.match(migrations.schema):
        raise MigrationError(f"invalid schema name {migrations.schema!r}")
    schema = migrations.schema
    pending = migrations.load()
    applied_now: list[int] = []
    await connection.execute("SELECT pg_advisory_lock($1)", LOCK_KEY)
    try:
        await connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        await connection.execute(
            f"""CREATE TABLE IF NOT EXISTS {schema}.schema_migrations (
                    version integer PRIMARY KEY,
                    name text NOT NULL,
                    checksum text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now())"""
        )
        rows = await connection.fetch(f"SELECT version, checksum FROM {schema}.schema_migrations")  # noqa: S608
        done = {row["version"]: row["checksum"] for row in rows}
        for migration in pending:
            if migration.version in done:
                if done[migration.version] != migration.checksum:
                    raise MigrationError(
                        f"{schema} migration {migration.version:04d}_{migration.name} was changed after it "
                        "was applied; add a new migration instead"
                    )
                continue
            async with connection.transaction():
                await connection.execute(f"SET LOCAL search_path TO {schema}, public")
                await connection.execute(migration.sql)
                await connection.execute(
                    f"INSERT INTO {schema}.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",  # noqa: S608
                    migration.version,
                    migration.name,
                    migration.checksum,
                )
            log.info("applied migration %s %04d_%s", schema, migration.version, migration.name)
            applied_now.append(migration.version)
    finally:
        await connection.execute("SELECT pg_advisory_unlock($1)", LOCK_KEY)
    return applied_now


async def pending_versions(connection: asyncpg.Connection[Any], migrations: Migrations) -> list[int]:
    """Versions not applied yet; readiness is false while any remain."""
    exists = await connection.fetchval(
        "SELECT to_regclass($1) IS NOT NULL", f"{migrations.schema}.schema_migrations"
    )
    applied: set[int] = set()
    if exists:
        rows = await connection.fetch(f"SELECT version FROM {migrations.schema}.schema_migrations")  # noqa: S608
        applied = {row["version"] for row in rows}
    return [m.version for m in migrations.load() if m.version not in applied]
