"""Versioned plain-SQL migrations per service, applied under an advisory lock.

Several replicas may start at once: the first takes the lock and migrates, the
others wait, then find nothing left to do. A migration that was edited after it
was applied is refused, because the database no longer matches its history.

A migration may take DDL a library owns (cograph_retrieval's term statistics)
with a line `-- include: <package>/<path>.sql name=identifier ...`, replaced by
that file with its `{{name}}` placeholders filled in. The checksum covers the
SQL as run, includes filled in, so an edited included file is refused too.
A migration rewritten without changing what it runs (a copy replaced by an
include) names its earlier checksum in a line `-- equivalent-to: sha256:<hex>`,
and databases that applied the earlier text accept it.
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
_INCLUDE_LINE = re.compile(r"^-- include:(.*)$", re.MULTILINE)
_INCLUDED = re.compile(r"^ (\w+)/([\w/.-]+\.sql)((?: \w+=\w+)*) *$")
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_EQUIVALENT = re.compile(r"^-- equivalent-to: sha256:([0-9a-f]{64})\b", re.MULTILINE)


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

    @property
    def equivalent_checksums(self) -> frozenset[str]:
        """Checksums of earlier texts of this migration that ran the same statements."""
        return frozenset(_EQUIVALENT.findall(self.sql))


def render(sql: str) -> str:
    """The SQL with each include line replaced by the file it names, placeholders filled in."""
    return _INCLUDE_LINE.sub(_included, sql)


def _included(line: re.Match[str]) -> str:
    # A malformed include line must fail, not stay a comment that silently includes nothing.
    match = _INCLUDED.match(line.group(1))
    if match is None:
        raise MigrationError(f"{line.group(0)!r} is not -- include: <package>/<path>.sql name=value ...")
    package, path, pairs = match.groups()
    values = dict(pair.split("=", 1) for pair in pairs.split())
    # Only plain identifiers: they are written into DDL unquoted.
    bad = [value for value in values.values() if not _SCHEMA.match(value)]
    if bad:
        raise MigrationError(f"{package}/{path}: {bad[0]!r} is not a plain SQL identifier")
    try:
        text = resources.files(package).joinpath(path).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as error:
        raise MigrationError(f"cannot include {package}/{path}: {error}") from error
    needed = set(_PLACEHOLDER.findall(text))
    if needed != values.keys():
        raise MigrationError(
            f"{package}/{path} takes {', '.join(sorted(needed)) or 'no names'};"
            f" given {', '.join(sorted(values)) or 'none'}"
        )
    return _PLACEHOLDER.sub(lambda placeholder: values[placeholder.group(1)], text).rstrip("\n")


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
                sql = render(entry.read_text(encoding="utf-8"))
                found.append(Migration(int(match.group(1)), match.group(2), sql))
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
                # The record keeps the checksum of what ran, so an earlier release still starts.
                recorded = done[migration.version]
                if recorded != migration.checksum and recorded not in migration.equivalent_checksums:
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
