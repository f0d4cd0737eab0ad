"""Domain structs to protobuf messages and back: the only place that knows both."""

from __future__ import annotations

import msgspec
from google.protobuf.timestamp_pb2 import Timestamp

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_collections.domain.collections import Access, Collection, Visibility
from cograph_collections.domain.documents import (
    ChunkHit,
    ContentMatch,
    StoredChunk,
    StoredDocument,
    StoredLink,
)
from cograph_collections.domain.jobs import Job, Kind, Status
from cograph_collections.domain.uploads import Outcome, Reason, State

VISIBILITY_TO_PB = {
    Visibility.PUBLIC: pb.VISIBILITY_PUBLIC,
    Visibility.PRIVATE: pb.VISIBILITY_PRIVATE,
    Visibility.ADMIN_ONLY: pb.VISIBILITY_ADMIN_ONLY,
}
VISIBILITY_FROM_PB = {value: key for key, value in VISIBILITY_TO_PB.items()}


def visibility_from_pb(value: pb.Visibility) -> str:
    """The visibility as the domain spells it; '' for a value that names none, which the domain
    refuses where it checks the other fields, in their order."""
    return VISIBILITY_FROM_PB.get(value, "")


def timestamp(value: object) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)  # type: ignore[arg-type]
    return stamp


def collection_to_pb(row: Collection) -> pb.Collection:
    return pb.Collection(
        id=str(row.id),
        name=row.name,
        description=row.description,
        visibility=VISIBILITY_TO_PB[row.visibility],
        owner=row.owner,
        group_grants=row.group_grants,
        document_count=row.document_count,
        chunk_count=row.chunk_count,
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
    )


def access_to_pb(row: Access) -> pb.CollectionAccess:
    return pb.CollectionAccess(
        collection_id=str(row.id),
        visibility=VISIBILITY_TO_PB[row.visibility],
        owner=row.owner,
        group_grants=row.group_grants,
    )


_STATE_TO_PB = {
    State.CREATED: pb.DOCUMENT_STATE_CREATED,
    State.REPLACED: pb.DOCUMENT_STATE_REPLACED,
    State.UNCHANGED: pb.DOCUMENT_STATE_UNCHANGED,
}
_REASON_TO_PB = {
    Reason.INVALID_SOURCE_KEY: pb.DocumentError.REASON_INVALID_SOURCE_KEY,
    Reason.NOT_UTF8: pb.DocumentError.REASON_NOT_UTF8,
    Reason.BINARY: pb.DocumentError.REASON_BINARY,
    Reason.TOO_LARGE: pb.DocumentError.REASON_TOO_LARGE,
    Reason.DUPLICATE_IN_BATCH: pb.DocumentError.REASON_DUPLICATE_IN_BATCH,
}
_LINK_TYPE_TO_PB = {
    "absolute": pb.LINK_TYPE_ABSOLUTE,
    "anchor": pb.LINK_TYPE_ANCHOR,
    "markdown": pb.LINK_TYPE_MARKDOWN,
    "relative": pb.LINK_TYPE_RELATIVE,
    "wiki": pb.LINK_TYPE_WIKI,
}
KIND_TO_PB = {
    Kind.UPLOAD: pb.JOB_KIND_UPLOAD,
    Kind.EMBED: pb.JOB_KIND_EMBED,
    Kind.RESOLVE_LINKS: pb.JOB_KIND_RESOLVE_LINKS,
}
STATUS_TO_PB = {
    Status.QUEUED: pb.JOB_STATUS_QUEUED,
    Status.RUNNING: pb.JOB_STATUS_RUNNING,
    Status.SUCCESS: pb.JOB_STATUS_SUCCESS,
    Status.ERROR: pb.JOB_STATUS_ERROR,
}
KIND_FROM_PB = {value: key for key, value in KIND_TO_PB.items()}
STATUS_FROM_PB = {value: key for key, value in STATUS_TO_PB.items()}


def outcome_to_pb(outcome: Outcome) -> pb.DocumentResult:
    result = pb.DocumentResult(
        source_key=outcome.source_key,
        document_id=str(outcome.document_id) if outcome.document_id else "",
        warnings=outcome.warnings,
    )
    if outcome.failure is not None:
        result.error.CopyFrom(
            pb.DocumentError(reason=_REASON_TO_PB[outcome.failure.reason], message=outcome.failure.message)
        )
    else:
        assert outcome.state is not None
        result.state = _STATE_TO_PB[outcome.state]
    return result


def counts_to_pb(outcomes: list[Outcome]) -> pb.UploadCounts:
    states = [o.state for o in outcomes]
    return pb.UploadCounts(
        created=states.count(State.CREATED),
        replaced=states.count(State.REPLACED),
        unchanged=states.count(State.UNCHANGED),
        failed=sum(1 for o in outcomes if o.failure is not None),
    )


def summary_to_pb(document: StoredDocument) -> pb.DocumentSummary:
    return pb.DocumentSummary(
        id=str(document.id),
        collection_id=str(document.collection_id),
        source_key=document.source_key,
        title=document.title or "",
        content_hash=document.content_hash,
        size_bytes=document.size_bytes,
        chunk_count=document.chunk_count,
        created_at=timestamp(document.created_at),
        updated_at=timestamp(document.updated_at),
    )


def document_to_pb(document: StoredDocument, links: list[StoredLink]) -> pb.Document:
    structure = document.structure
    return pb.Document(
        summary=summary_to_pb(document),
        content=document.content,
        metadata=pb.DocumentMetadata(
            frontmatter_json=msgspec.json.encode(document.frontmatter).decode(),
            title=document.title or "",
            heading_tree=[pb.Heading(**h) for h in structure.get("heading_tree", [])],
            code_blocks=[
                pb.CodeBlock(
                    language=c.get("language") or "",
                    content=c["content"],
                    start_line=c["start_line"],
                    end_line=c["end_line"],
                )
                for c in structure.get("code_blocks", [])
            ],
            tables=[
                pb.Table(
                    header=t["header"],
                    rows=[pb.TableRow(cells=row) for row in t["rows"]],
                    start_line=t["start_line"],
                    end_line=t["end_line"],
                )
                for t in structure.get("tables", [])
            ],
            links=[
                pb.Link(
                    text=link.text,
                    href=link.href,
                    line=link.line,
                    link_type=_LINK_TYPE_TO_PB[link.link_type],
                    target_document_id=str(link.target_document_id) if link.target_document_id else "",
                    anchor=link.anchor or "",
                )
                for link in links
            ],
            word_count=document.word_count,
            line_count=document.line_count,
            warnings=structure.get("warnings", []),
        ),
    )


def chunk_to_pb(chunk: StoredChunk) -> pb.Chunk:
    return pb.Chunk(
        id=str(chunk.id),
        document_id=str(chunk.document_id),
        collection_id=str(chunk.collection_id),
        chunk_index=chunk.chunk_index,
        heading_path=chunk.heading_path,
        heading_level=chunk.heading_level,
        section_anchor=chunk.section_anchor,
        content=chunk.content,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        embedding_model=chunk.embedding_model or "",
        chunker=pb.ChunkerParams(
            max_chars=chunk.chunker_max_chars,
            min_chars=chunk.chunker_min_chars,
            max_chunks=chunk.chunker_max_chunks,
        ),
        source_key=chunk.source_key,
    )


def hit_to_pb(hit: ChunkHit) -> pb.ChunkHit:
    return pb.ChunkHit(
        chunk=chunk_to_pb(hit.chunk),
        document_title=hit.document_title,
        score=hit.score,
        ranks=pb.StreamRanks(dense=hit.ranks.get("dense", 0), text=hit.ranks.get("text", 0)),
    )


def match_to_pb(match: ContentMatch) -> pb.ContentMatch:
    return pb.ContentMatch(
        content_hash=match.content_hash,
        collection_id=str(match.collection_id),
        collection_name=match.collection_name,
        document_id=str(match.document_id),
        source_key=match.source_key,
    )


def job_to_pb(job: Job, max_attempts: int) -> pb.Job:
    message = pb.Job(
        id=str(job.id),
        collection_id=str(job.collection_id),
        kind=KIND_TO_PB[job.kind],
        status=STATUS_TO_PB[job.status],
        error=job.error or "",
        retry_of=str(job.retry_of) if job.retry_of else "",
        requested_by=job.requested_by,
        progress_done=job.progress_done,
        progress_total=job.progress_total,
        created_at=timestamp(job.created_at),
        attempts=job.attempts,
        max_attempts=max_attempts,
        interruptions=[
            pb.JobInterruption(
                at=timestamp(interruption.at),
                worker=interruption.worker,
                reason=interruption.reason,
                progress_done=interruption.done,
                progress_total=interruption.total,
            )
            for interruption in job.interruptions
        ],
    )
    for field, value in (
        ("started_at", job.started_at),
        ("finished_at", job.finished_at),
        ("heartbeat_at", job.heartbeat_at),
        ("not_before", job.not_before),
    ):
        if value is not None:
            getattr(message, field).CopyFrom(timestamp(value))
    return message
