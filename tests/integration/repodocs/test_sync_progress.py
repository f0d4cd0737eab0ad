"""A running sync's progress, watched as a caller watches it: ListSyncs while a generated repository
of a thousand files syncs, and the service's /metrics once it has."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import httpx
from integration.repodocs.helpers import SYNC_TIMEOUT, GitRepo, Running

from cograph.repodocs.v1 import repodocs_service_pb2 as pb

PHASES = [
    pb.SYNC_PHASE_FETCH,
    pb.SYNC_PHASE_DISCOVER,
    pb.SYNC_PHASE_CHUNK,
    pb.SYNC_PHASE_EMBED,
    pb.SYNC_PHASE_LINK,
]
NAMES = ["fetch", "discover", "chunk", "embed", "link"]


def thousand_files() -> dict[str, str]:
    """A thousand files as a repository has them: 300 documents, each naming a function of one of
    150 source files of two functions each, and 550 assets nothing indexes (which keeps the sync's
    embedding short, yet long enough to be seen growing: 600 vectors)."""
    files = {
        f"docs/area{i % 7}/topic{i}.md": f"# Topic {i}\n\nHow topic {i} works: call `handle_{i % 150}()`.\n"
        for i in range(300)
    }
    files |= {
        f"src/pkg{i % 10}/module{i}.py": (
            f'def handle_{i}(event):\n    """Handle it."""\n    return event\n\n\n'
            f'def close_{i}():\n    """Close it."""\n'
        )
        for i in range(150)
    }
    files |= {f"assets/icon{i}.svg": f'<svg id="{i}"/>\n' for i in range(550)}
    return files


def _phase_count(metrics: str, phase: str) -> float:
    pattern = rf'^cograph_repodocs_sync_phase_seconds_count\{{phase="{phase}",status="success"\}} (\S+)$'
    found = re.search(pattern, metrics, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


async def test_progress_grows_while_a_thousand_files_sync(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("generated", thousand_files())
    ops = httpx.AsyncClient(base_url=f"http://127.0.0.1:{service.host.http.port}", timeout=10)
    before = (await ops.get("/metrics")).text

    # Each batch of 256 takes at least 0.6 s, more than twice the 0.25 s in which the sync copies
    # its progress to its row: whatever the machine's speed, every count between batches is written.
    service.provider.pace = 0.6
    repository = await service.register("generated", clone_url=str(origin.root))  # its sync starts
    seen: list[pb.Sync] = []
    deadline = time.monotonic() + SYNC_TIMEOUT
    while True:
        [sync] = (await service.stub.ListSyncs(pb.ListSyncsRequest(repository_id=repository.id))).syncs
        seen.append(sync)
        if sync.status in (pb.SYNC_STATUS_SUCCESS, pb.SYNC_STATUS_ERROR):
            break
        assert time.monotonic() < deadline, sync
        await asyncio.sleep(0.05)
    final = seen[-1]
    assert final.status == pb.SYNC_STATUS_SUCCESS, final.error
    running = [s for s in seen if s.status == pb.SYNC_STATUS_RUNNING and s.phase]

    # The phases come in their order, and the caller saw the long one (discovering a thousand
    # files takes about 0.1 s, less than the progress is written in).
    order = [PHASES.index(s.phase) for s in running]
    assert order == sorted(order), order
    assert pb.SYNC_PHASE_EMBED in {s.phase for s in running}, order

    # Embedding: a known total from the start of the phase, and counts seen growing towards it.
    embedding = [s.progress for s in running if s.phase == pb.SYNC_PHASE_EMBED]
    total = final.progress.vectors_to_embed
    assert total == 300 + 150 * 2  # a chunk per document; each module's two functions (modules carry none)
    assert {p.vectors_to_embed for p in embedding} == {total}
    done = [p.vectors_embedded for p in embedding]
    assert done == sorted(done), done
    assert len({d for d in done if 0 < d < total}) >= 2, done  # more than one step seen in between

    # Every count ends complete: the files read, every document chunked, every vector made.
    progress = final.progress
    assert (progress.files_read, progress.files_total) == (450, 450)
    assert progress.documents_chunked == progress.documents_to_chunk == final.counters.indexed_documents
    assert progress.documents_to_chunk == 300
    assert progress.vectors_embedded == total
    assert final.phase == pb.SYNC_PHASE_LINK
    assert set(progress.phase_seconds) == set(NAMES)
    assert all(seconds >= 0 for seconds in progress.phase_seconds.values())
    # While discovering, the files read were counted against a total listed first.
    discovering = [s.progress for s in running if s.phase == pb.SYNC_PHASE_DISCOVER]
    assert all(p.files_read <= p.files_total for p in discovering), discovering

    # The metrics time each phase of the sync that succeeded.
    after = (await ops.get("/metrics")).text
    await ops.aclose()
    for phase in NAMES:
        assert _phase_count(after, phase) == _phase_count(before, phase) + 1, phase
