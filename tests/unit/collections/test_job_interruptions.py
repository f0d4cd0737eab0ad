"""What becomes of a job whose worker was lost: the backoff before its next run, and when it ends."""

from __future__ import annotations

import uuid

import pytest

from cograph_collections.domain.jobs import (
    MAX_BACKOFF_SECONDS,
    Kind,
    Lost,
    backoff_seconds,
    interrupted_error,
)


def lost(kind: Kind, attempts: int) -> Lost:
    return Lost(uuid.uuid4(), kind, attempts, "host:1", progress_done=3, progress_total=9)


@pytest.mark.parametrize(("attempts", "seconds"), [(1, 10.0), (2, 20.0), (3, 40.0), (0, 10.0)])
def test_the_backoff_doubles_with_each_interruption(attempts: int, seconds: float) -> None:
    assert backoff_seconds(attempts, 10.0) == seconds


def test_the_backoff_is_bounded_however_many_attempts() -> None:
    assert backoff_seconds(100, 10.0) == MAX_BACKOFF_SECONDS
    assert backoff_seconds(5, 0.0) == 0.0


def test_a_job_with_runs_left_is_requeued() -> None:
    assert interrupted_error(lost(Kind.EMBED, 2), "no heartbeat for 31 s", max_attempts=3) is None


@pytest.mark.parametrize(
    ("attempts", "max_attempts", "times"), [(3, 3, "3 times"), (1, 1, "once"), (4, 3, "4 times")]
)
def test_a_job_whose_runs_are_spent_ends_saying_how_often_its_worker_was_lost(
    attempts: int, max_attempts: int, times: str
) -> None:
    error = interrupted_error(lost(Kind.RESOLVE_LINKS, attempts), "no heartbeat for 31 s", max_attempts)
    assert error == f"the worker running this job was lost {times} (last: no heartbeat for 31 s); retry it"


def test_an_upload_is_never_requeued_its_content_is_not_kept() -> None:
    error = interrupted_error(lost(Kind.UPLOAD, 1), "no heartbeat for 31 s", max_attempts=3)
    assert error == "the worker running this job was lost (no heartbeat for 31 s); re-upload the batch"
