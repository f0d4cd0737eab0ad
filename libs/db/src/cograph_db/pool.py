"""asyncpg connections with the codecs every service relies on: pgvector and jsonb."""

from __future__ import annotations

import json
from typing import Any, TypeAlias

import asyncpg
from pgvector.asyncpg import register_vector

from cograph_db.migrate import Migrations, apply_migrations
from cograph_settings import DatabaseSettings


async def _init_connection(connection: asyncpg.Connection[Any]) -> None:
    # The vector type lives in the schema the extension was created in; the
    # migrations create it before any pool is opened.
    await register_vector(connection)
    await connection.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


# What a loop that must outlive a moment without the database (a heartbeat, a job queue, a
# sweep) catches: no connection, a lost one, or an error PostgreSQL answered. A pooled
# connection whose backend was cut while idle can also fail in asyncpg's own protocol state
# ("cannot switch to state ...; another operation is in progress"): InternalClientError.
DATABASE_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
)


async def create_pool(dsn: str, settings: DatabaseSettings, *, schema: str) -> asyncpg.Pool[Any]:
    """A pool whose connections see the service's own schema first."""
    pool = await asyncpg.create_pool(
        dsn,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        command_timeout=settings.command_timeout_seconds,
        server_settings={"search_path": f"{schema}, public", "application_name": f"cograph-{schema}"},
        init=_init_connection,
    )
    assert pool is not None
    return pool


async def connect(dsn: str, *, timeout: float = 30.0) -> asyncpg.Connection[Any]:
    """One plain connection, for migrations and administration."""
    return await asyncpg.connect(dsn, timeout=timeout)


async def open_service_pool(
    dsn: str, settings: DatabaseSettings, migrations: Migrations
) -> asyncpg.Pool[Any]:
    """Migrate the service's schema (under the advisory lock), then open its pool."""
    connection = await connect(dsn)
    try:
        await apply_migrations(connection, migrations)
    finally:
        await connection.close()
    return await create_pool(dsn, settings, schema=migrations.schema)


# What a store is handed: a plain connection or one borrowed from a pool.
Connection: TypeAlias = "asyncpg.Connection[Any] | asyncpg.pool.PoolConnectionProxy[Any]"
