"""The index_repo_docs step of a sync, without I/O to the database: discovered files against the
indexed documents, what to (re)chunk, what to prune, the six counters and the slugs.

Documents are keyed by path and content hash. A document keeps its id (and so its
slug) while its path stays, whatever its content; a rename is a delete plus a new
document.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import msgspec

from cograph_repodocs.application.progress import SyncProgress
from cograph_repodocs.domain.chunking import ChunkedDocument, WordWindowChunker
from cograph_repodocs.domain.discovery import (
    NOTHING_IGNORED,
    DiscoveredFile,
    DiscoveryResult,
    GitIgnored,
    classify,
)
from cograph_repodocs.domain.slugs import assign_slugs
from cograph_repodocs.stores.documents import DocumentState
from cograph_repodocs.stores.syncs import Counters, Skipped, SyncPhase
from cograph_repodocs.walking import walk


class PreparedDocument(msgspec.Struct, frozen=True, kw_only=True):
    id: uuid.UUID
    file: DiscoveredFile
    chunked: ChunkedDocument
    is_new: bool


class DocPlan(msgspec.Struct, frozen=True, kw_only=True):
    prepared: list[PreparedDocument]
    """New, changed and stale documents, chunked: the only ones embedded."""
    deleted: list[DocumentState]
    slugs: dict[uuid.UUID, str]
    """The slug of every document the repository has after this sync."""
    counters: Counters
    skipped: list[Skipped]


def plan_documents(
    root: Path,
    stored: list[DocumentState],
    max_file_bytes: int,
    chunker: WordWindowChunker,
    ignored: GitIgnored = NOTHING_IGNORED,
    progress: SyncProgress | None = None,
) -> DocPlan:
    """Walk the checkout and decide every document's fate. Blocking (reads and chunks): run it in a
    thread. `progress` enters the chunk phase once the walk is over."""
    progress = progress or SyncProgress()
    discovered = walk(root, max_file_bytes, ignored, listed=progress.listed, read=progress.read)
    by_path = {state.path: state for state in stored}
    counters = Counters(discovered_files=_discovered(discovered))
    to_chunk: list[tuple[uuid.UUID, DiscoveredFile, bool]] = []
    kept: list[tuple[str, str]] = []  # (id, path) of every document after this sync
    for file in discovered.files:
        state = by_path.get(file.path)
        same = state is not None and state.content_hash == file.content_hash and state.kind == file.kind
        if state is not None and same and not state.stale:
            counters.unchanged_documents += 1
            kept.append((str(state.id), file.path))
            continue
        document_id = state.id if state is not None else uuid.uuid4()
        if state is not None and state.content_hash != file.content_hash:
            counters.replaced_files += 1
        to_chunk.append((document_id, file, state is None))
        kept.append((str(document_id), file.path))
    progress.enter(SyncPhase.CHUNK)
    progress.to_chunk(len(to_chunk))
    prepared: list[PreparedDocument] = []
    for document_id, file, is_new in to_chunk:
        chunked = chunker.chunk(file.path, file.content)
        prepared.append(PreparedDocument(id=document_id, file=file, chunked=chunked, is_new=is_new))
        counters.indexed_documents += 1
        counters.indexed_chunks += len(chunked.chunks)
        progress.chunked()
    present = {file.path for file in discovered.files}
    deleted = [state for state in stored if state.path not in present]
    counters.deleted_documents = len(deleted)
    held = {str(state.id): state.slug for state in stored}
    slugs = {uuid.UUID(doc_id): slug for doc_id, slug in assign_slugs(kept, held).items()}
    skipped = [Skipped(s.path, s.reason) for s in discovered.skipped]
    return DocPlan(prepared=prepared, deleted=deleted, slugs=slugs, counters=counters, skipped=skipped)


def _discovered(result: DiscoveryResult) -> int:
    """Files that matched a discovery rule: those read, and those matched but skipped (too large,
    binary, not UTF-8, a bad symlink). An unreadable directory is no file."""
    matched_skips = sum(
        1 for s in result.skipped if not s.reason.startswith("directory unreadable") and classify(s.path)
    )
    return len(result.files) + matched_skips
