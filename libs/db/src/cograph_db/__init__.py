"""PostgreSQL plumbing shared by the services: pool, migrations, named queries, embedded server.

Only plumbing lives here: each service owns its schema, tables and SQL.
"""

from cograph_db.embedded import DataDirectoryInUse, EmbeddedPostgres
from cograph_db.migrate import MigrationError, Migrations, apply_migrations
from cograph_db.pool import DATABASE_ERRORS, Connection, connect, create_pool, open_service_pool
from cograph_db.queries import Queries

__all__ = [
    "DATABASE_ERRORS",
    "Connection",
    "DataDirectoryInUse",
    "EmbeddedPostgres",
    "MigrationError",
    "Migrations",
    "Queries",
    "apply_migrations",
    "connect",
    "create_pool",
    "open_service_pool",
]
