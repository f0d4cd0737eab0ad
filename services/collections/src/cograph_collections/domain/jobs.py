"""Jobs: their kinds and states, which of them a retry may run again, and what becomes of a job
whose worker was lost."""

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


class Interruption(msgspec.Struct, frozen=True):
    """A run of a job that its worker did not end: when, which worker, why, how far it got."""

    at: dt.datetime
    worker: str
    reason: str
    done: int
    total: int


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
    # Runs so far (the running one included), and the earlier ones a lost worker ended.
    attempts: int
    interruptions: list[Interruption]
    # A requeued job waits for its backoff: no worker claims it before this.
    not_before: dt.datetime | None


class Claimed(msgspec.Struct, frozen=True):
    id: uuid.UUID
    collection_id: uuid.UUID
    kind: Kind
    payload: dict[str, Any]
    requested_by: str
    # Which run this is (1 for the first): the job's row is this run's only while it matches.
    attempt: int = 1


class Lost(msgspec.Struct, frozen=True):
    """A running job whose run ended without its handler's say: its worker went silent, stopped,
    or lost the database."""

    id: uuid.UUID
    kind: Kind
    attempts: int
    worker: str | None
    progress_done: int
    progress_total: int


# However many attempts are allowed, a requeued job waits at most this long.
MAX_BACKOFF_SECONDS = 3600.0


def backoff_seconds(attempts: int, base: float) -> float:
    """How long a job interrupted on its `attempts`-th run waits before it runs again: the base,
    doubled for each earlier interruption."""
    return min(base * 2.0 ** min(max(attempts - 1, 0), 32), MAX_BACKOFF_SECONDS)


def interrupted_error(lost: Lost, reason: str, max_attempts: int) -> str | None:
    """Why an interrupted job ends as an error, or None when it is queued again. An upload cannot
    run again (its content is not kept), nor a job that has had all its runs."""
    if lost.kind is Kind.UPLOAD:
        return f"the worker running this job was lost ({reason}); re-upload the batch"
    if lost.attempts >= max_attempts:
        times = "once" if lost.attempts <= 1 else f"{lost.attempts} times"
        return f"the worker running this job was lost {times} (last: {reason}); retry it"
    return None


def check_retryable(job: Job) -> None:
    """A retry runs an ended job's work again. Uploads cannot be retried: their content is gone."""
    if job.kind is Kind.UPLOAD:
        raise FailedPrecondition(
            "an upload job cannot be retried: the uploaded content is not kept; re-upload the batch"
        )
    if job.status in (Status.QUEUED, Status.RUNNING):
        raise FailedPrecondition(f"job {job.id} is {job.status.value}: there is nothing to retry yet")
