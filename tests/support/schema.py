"""`make schema` (python -m support.schema): write each store service's schema.sql from its migrations.

The migrations run on a fresh embedded PostgreSQL in a temporary directory, as
tests/integration/foundation/test_schema_files.py runs them to check the files.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path

from cograph_collections.app import MIGRATIONS as COLLECTIONS
from cograph_db import EmbeddedPostgres, Migrations, apply_migrations, connect
from cograph_db.schema import dump_schema, schema_file
from cograph_repodocs.app import MIGRATIONS as REPODOCS

# The services that store something; each keeps a schema.sql beside its migrations/.
STORES: tuple[Migrations, ...] = (COLLECTIONS, REPODOCS)

_APPLIED = re.compile(r"^--   (\d{4}) \w+ ([0-9a-f]{64})$", re.MULTILINE)


def applied_checksums(schema_sql: str) -> dict[int, str]:
    """The checksum of each migration a schema.sql lists."""
    return {int(version): checksum for version, checksum in _APPLIED.findall(schema_sql)}


async def build(dsn: str, migrations: Migrations) -> str:
    """The schema.sql text of `migrations`, migrated into the database at `dsn`."""
    connection = await connect(dsn)
    try:
        await apply_migrations(connection, migrations)
    finally:
        await connection.close()
    return await dump_schema(dsn, migrations)


async def write_schema_files() -> list[Path]:
    written = []
    with tempfile.TemporaryDirectory() as directory:
        # Small: the server holds a few empty tables.
        server = EmbeddedPostgres(Path(directory) / "data", shared_buffers="128MB")
        dsn = server.start()
        try:
            for migrations in STORES:
                path = schema_file(migrations)
                path.write_text(await build(dsn, migrations), encoding="utf-8")
                written.append(path)
        finally:
            server.stop()
    return written


def main() -> None:
    for path in asyncio.run(write_schema_files()):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
