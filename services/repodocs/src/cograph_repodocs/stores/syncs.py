"""SyncStore: repo_syncs, the record of every sync (when, commit, counters, skipped files, error)."""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from collections.abc import Sequence

import asyncpg
import msgspec

from cograph_db import Connection, Queries

SQL = Queries.load("cograph_repodocs.sql", "syncs.sql")


class SyncStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    ERROR = "error"


class SyncTrigger(enum.StrEnum):
    MANUAL = "manual"
    SCHEDULE = "schedule"
    REGISTRATION = "registration"
    WEBHOOK = "webhook"


class Counters(msgspec.Struct, kw_only=True):
    """The spec's six counters; services/repodocs/README.md defines each."""

    discovered_files: int = 0
    indexed_documents: int = 0
    indexed_chunks: int = 0
    unchanged_documents: int = 0
    deleted_documents: int = 0
    replaced_files: int = 0


class SyncPhase(enum.StrEnum):
    FETCH = "fetch"  # clone or fetch the branch
    DISCOVER = "discover"  # list, read and hash the files; parse changed source files
    CHUNK = "chunk"  # split new and changed documents
    EMBED = "embed"  # vectors of new chunks (one per window) and of changed symbols
    LINK = "link"  # write the index in one transaction, link mentions to symbols


class Counts(msgspec.Struct, kw_only=True):
    """What a running sync has done so far; a total of 0 is not known yet."""

    files_read: int = 0
    files_total: int = 0
    documents_chunked: int = 0
    documents_to_chunk: int = 0
    vectors_embedded: int = 0
    vectors_to_embed: int = 0
    # Seconds each phase took, the current one until now.
    phase_seconds: dict[str, float] = msgspec.field(default_factory=dict)


class Skipped(msgspec.Struct, frozen=True):
    path: str
    reason: str


class SyncResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a successful sync records beside its status."""

    commit_sha: str
    counters: Counters
    code_nodes: int
    mentions: int
    skipped: list[Skipped]


class SyncRow(msgspec.Struct, frozen=True, kw_only=True):
    id: uuid.UUID
    repository_id: uuid.UUID
    status: SyncStatus
    trigger: SyncTrigger
    commit_sha: str | None
    discovered_files: int
    indexed_documents: int
    indexed_chunks: int
    unchanged_documents: int
    deleted_documents: int
    replaced_files: int
    code_nodes: int
    mentions: int
    skipped: list[Skipped]
    error: str | None
    started_at: dt.datetime
    finished_at: dt.datetime | None
    force_relink: bool
    phase: SyncPhase | None = None
    progress: Counts = msgspec.field(default_factory=Counts)

    @property
    def finished(self) -> bool:
        return self.status in (SyncStatus.SUCCESS, SyncStatus.ERROR)


def _row(record: asyncpg.Record) -> SyncRow:
    return msgspec.convert(dict(record), SyncRow)


class SyncAbandoned(Exception):
    """The sync stopped beating for so long that it was given up; its writes must not land."""


class SyncStore:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    async def create(
        self, repository_id: uuid.UUID, trigger: SyncTrigger, force_relink: bool
    ) -> uuid.UUID | None:
        """A queued sync, or None when the repository already has one queued or running."""
        try:
            sync_id: uuid.UUID = await self._db.fetchval(
                SQL.insert_sync, repository_id, trigger.value, force_relink
            )
        except asyncpg.UniqueViolationError:
            return None
        return sync_id

    async def get(self, sync_id: uuid.UUID) -> SyncRow | None:
        record = await self._db.fetchrow(SQL.select_sync, sync_id)
        return _row(record) if record else None

    async def active(self, repository_id: uuid.UUID) -> SyncRow | None:
        record = await self._db.fetchrow(SQL.select_active_sync, repository_id)
        return _row(record) if record else None

    async def history(
        self, repository_id: uuid.UUID, *, limit: int, after: Sequence[str | None]
    ) -> list[SyncRow]:
        """Newest first, after that (started_at, id) (a page token's)."""
        return [_row(r) for r in await self._db.fetch(SQL.select_syncs, repository_id, limit, *after)]

    async def last(self, repository_ids: list[uuid.UUID]) -> dict[uuid.UUID, SyncRow]:
        rows = [_row(r) for r in await self._db.fetch(SQL.select_last_syncs, repository_ids)]
        return {row.repository_id: row for row in rows}

    async def synced_commit(self, repository_id: uuid.UUID) -> str:
        commit: str | None = await self._db.fetchval(SQL.select_synced_commit, repository_id)
        return commit or ""

    async def mark_running(self, sync_id: uuid.UUID) -> None:
        await self._db.execute(SQL.mark_running, sync_id)

    async def hold_running(self, sync_id: uuid.UUID) -> None:
        """Keep the sync's row until the transaction ends, so that no other process can mark it
        abandoned meanwhile; SyncAbandoned if one already has (its own sync may be running)."""
        if not await self._db.fetchval(SQL.hold_running, sync_id):
            raise SyncAbandoned("marked abandoned by another process while it ran: nothing it did was kept")

    async def record_progress(self, sync_id: uuid.UUID, phase: SyncPhase | None, counts: Counts) -> bool:
        """The running sync's phase and counts; False when not recorded (its write transaction
        holds the row, or it is no longer running)."""
        status: str = await self._db.execute(
            SQL.record_progress, sync_id, phase.value if phase else None, msgspec.to_builtins(counts)
        )
        return status == "UPDATE 1"

    async def heartbeat(self, sync_id: uuid.UUID) -> None:
        await self._db.execute(SQL.heartbeat, sync_id)

    async def succeed(self, sync_id: uuid.UUID, result: SyncResult, counts: Counts) -> None:
        c = result.counters
        await self._db.execute(
            SQL.finish_success,
            sync_id,
            result.commit_sha,
            c.discovered_files,
            c.indexed_documents,
            c.indexed_chunks,
            c.unchanged_documents,
            c.deleted_documents,
            c.replaced_files,
            result.code_nodes,
            result.mentions,
            msgspec.to_builtins(result.skipped),
            msgspec.to_builtins(counts),
        )

    async def fail(self, sync_id: uuid.UUID, error: str, commit_sha: str | None = None) -> None:
        await self._db.execute(SQL.finish_error, sync_id, error, commit_sha)

    async def abandon_stale(
        self, repository_id: uuid.UUID, stale_seconds: float, message: str, keep: list[uuid.UUID]
    ) -> list[uuid.UUID]:
        """Mark error the repository's active sync whose heartbeat stopped (other than `keep`)."""
        rows = await self._db.fetch(SQL.abandon_stale, repository_id, stale_seconds, message, keep)
        return [row["id"] for row in rows]
