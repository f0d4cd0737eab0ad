"""A service's migrations as an earlier release left them, to test what a later one does to its data."""

from __future__ import annotations

import dataclasses

from cograph_db import Migrations
from cograph_db.migrate import Migration


@dataclasses.dataclass(frozen=True)
class MigrationsBefore(Migrations):
    """The migrations older than `version`."""

    version: int = 0

    def load(self) -> list[Migration]:
        return [migration for migration in super().load() if migration.version < self.version]


def before(migrations: Migrations, version: int) -> MigrationsBefore:
    return MigrationsBefore(migrations.schema, migrations.package, version)
