"""Each store service's schema.sql is what its migrations build, on a real PostgreSQL."""

from __future__ import annotations

import difflib

import pytest

from cograph_db import Migrations
from cograph_db.schema import schema_file
from support.schema import STORES, applied_checksums, build


@pytest.mark.parametrize("migrations", STORES, ids=lambda migrations: migrations.schema)
async def test_schema_sql_is_what_the_migrations_build(database: str, migrations: Migrations) -> None:
    built = await build(database, migrations)
    path = schema_file(migrations)
    kept = path.read_text(encoding="utf-8") if path.exists() else ""
    # A released migration, or a file it includes, edited afterwards: regenerating schema.sql
    # would hide it, and deployed databases would refuse it (or, where the migration names an
    # earlier checksum, silently differ from new ones).
    by_version = {migration.version: migration for migration in migrations.load()}
    edited = [
        f"{version:04d}"
        for version, checksum in applied_checksums(kept).items()
        if version in by_version
        and checksum != by_version[version].checksum
        and checksum not in by_version[version].equivalent_checksums
    ]
    assert not edited, (
        f"{migrations.schema} migrations {', '.join(edited)} changed after {path.name} listed them: undo the"
        " edit (of the migration or of a file it includes) and add a new migration instead"
    )
    if built != kept:
        diff = "".join(
            difflib.unified_diff(
                kept.splitlines(keepends=True),
                built.splitlines(keepends=True),
                f"{path} (kept)",
                f"{migrations.schema} migrations (built)",
            )
        )
        pytest.fail(f"{path} disagrees with the migrations; run `make schema` and commit it:\n{diff}")
