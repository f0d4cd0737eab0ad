"""A running sync's progress: the phase it is in and its counts as they grow, for whoever watches
it (the sync's row, read by ListSyncs) and the time each phase took (the metrics).

The pipeline writes it, partly from the threads that walk and chunk; a task of the sync copies
it to the row a few times a second. Plain integer updates from one writer at a time need no lock.
"""

from __future__ import annotations

import time

import msgspec
from prometheus_client import Histogram

from cograph_repodocs.stores.syncs import Counts, SyncPhase

PHASE_SECONDS = Histogram(
    "cograph_repodocs_sync_phase_seconds",
    "Time a repository sync spent in each phase (fetch, discover, chunk, embed, link), by how it ended.",
    ["phase", "status"],
    buckets=(0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600),
)


class SyncProgress:
    def __init__(self) -> None:
        self.phase: SyncPhase | None = None
        self.counts = Counts()
        self._began = time.monotonic()

    def enter(self, phase: SyncPhase) -> None:
        self._close()
        self.phase = phase

    def snapshot(self) -> tuple[SyncPhase | None, Counts]:
        """The phase and a copy of the counts, the current phase's time brought up to now."""
        counts = msgspec.structs.replace(self.counts, phase_seconds=dict(self.counts.phase_seconds))
        if self.phase is not None:
            so_far = counts.phase_seconds.get(self.phase, 0.0) + time.monotonic() - self._began
            counts.phase_seconds[self.phase] = round(so_far, 3)
        return self.phase, counts

    def observe(self, status: str) -> None:
        """Record the time of every phase the sync went through, once it ended with `status`."""
        self._close()
        for phase, seconds in self.counts.phase_seconds.items():
            PHASE_SECONDS.labels(phase, status).observe(seconds)

    # What the pipeline reports.

    def listed(self, files: int) -> None:
        self.counts.files_total += files

    def read(self) -> None:
        self.counts.files_read += 1

    def to_chunk(self, documents: int) -> None:
        self.counts.documents_to_chunk = documents

    def chunked(self) -> None:
        self.counts.documents_chunked += 1

    def to_embed(self, vectors: int) -> None:
        self.counts.vectors_to_embed = vectors

    def embedded(self, vectors: int) -> None:
        self.counts.vectors_embedded += vectors

    def _close(self) -> None:
        now = time.monotonic()
        if self.phase is not None:
            self.counts.phase_seconds[self.phase] = round(
                self.counts.phase_seconds.get(self.phase, 0.0) + now - self._began, 3
            )
        self._began = now
