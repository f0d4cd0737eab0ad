"""Jobs: their kinds and states, and which of them a retry may run again."""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from typing import Any

import msgspec

from cograph_errors import FailedPrecondition


class Kind(enum.StrEnum):
    UPLOAD = "upload"
    EMBED = "embed"
    RESOLVE_LINKS = "resolve_links"


class Status(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    ERROR = "error"


class JobQuery(msgspec.Struct, frozen=True, kw_only=True):
    """Which jobs a list asks for: of these collections, in this status and of this kind (None:
    any), newest first, after the (created_at, id) of a page key."""

    collection_ids: list[uuid.UUID]
    status: Status | None
    kind: Kind | None
    limit: int
    after: tuple[str | None, ...]


class Job(msgspec.Struct, frozen=True):
    id: uuid.UUID
    collection_id: uuid.UUID
    kind: Kind
    status: Status
    error: str | None
    retry_of: uuid.UUID | None
    requested_by: str
    progress_done: int
    progress_total: int
    payload: dict[str, Any]
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    heartbeat_at: dt.datetime | None


class Claimed(msgspec.Struct, frozen=True):
    id: uuid.UUID
    collection_id: uuid.UUID
    kind: Kind
    payload: dict[str, Any]
    requested_by: str


def check_retryable(job: Job) -> None:
    """A retry runs an ended job's work again. Uploads cannot be retried: their content is gone."""
    if job.kind is Kind.UPLOAD:
        raise FailedPrecondition(
            "an upload job cannot be retried: the uploaded content is not kept; re-upload the batch"
        )
    if job.status in (Status.QUEUED, Status.RUNNING):
        raise FailedPrecondition(f"job {job.id} is {job.status.value}: there is nothing to retry yet")
