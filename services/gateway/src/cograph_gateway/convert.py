"""Protobuf messages to REST bodies and back; citations are made here, once, for REST and MCP."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph.search.v1 import search_service_pb2 as spb
from cograph_gateway import schemas as s
from cograph_gateway.errors import Problem
from cograph_gateway.policy import (
    CollectionAccess,
    CollectionVisibility,
    RepositoryAccess,
    RepositoryVisibility,
)

# A clone URL the server fetches over the network (https, ssh, git, scp-like user@host:path).
_REMOTE_URL = re.compile(r"^(?:(?:https?|ssh|git)://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
_VISIBILITY_TO_PB: dict[str, cpb.Visibility] = {
    "public": cpb.VISIBILITY_PUBLIC,
    "private": cpb.VISIBILITY_PRIVATE,
    "admin_only": cpb.VISIBILITY_ADMIN_ONLY,
}
_VISIBILITY_FROM_PB: dict[int, s.VisibilityName] = {
    cpb.VISIBILITY_PUBLIC: "public",
    cpb.VISIBILITY_PRIVATE: "private",
    cpb.VISIBILITY_ADMIN_ONLY: "admin_only",
}
_REPO_VISIBILITY_TO_PB: dict[str, rpb.Visibility] = {
    "public": rpb.VISIBILITY_PUBLIC,
    "private": rpb.VISIBILITY_PRIVATE,
}
_REPO_VISIBILITY_FROM_PB: dict[int, s.RepositoryVisibilityName] = {
    rpb.VISIBILITY_PUBLIC: "public",
    rpb.VISIBILITY_PRIVATE: "private",
}
_STATE: dict[int, s.DocumentStateName] = {
    cpb.DOCUMENT_STATE_CREATED: "created",
    cpb.DOCUMENT_STATE_REPLACED: "replaced",
    cpb.DOCUMENT_STATE_UNCHANGED: "unchanged",
}
_LINK_TYPE: dict[int, s.LinkTypeName] = {
    cpb.LINK_TYPE_ABSOLUTE: "absolute",
    cpb.LINK_TYPE_ANCHOR: "anchor",
    cpb.LINK_TYPE_MARKDOWN: "markdown",
    cpb.LINK_TYPE_RELATIVE: "relative",
    cpb.LINK_TYPE_WIKI: "wiki",
}
_JOB_KIND: dict[int, s.JobKindName] = {
    cpb.JOB_KIND_UPLOAD: "upload",
    cpb.JOB_KIND_EMBED: "embed",
    cpb.JOB_KIND_RESOLVE_LINKS: "resolve_links",
}
JOB_KIND_TO_PB: dict[str, cpb.JobKind] = {name: cast(cpb.JobKind, v) for v, name in _JOB_KIND.items()}
_JOB_STATUS: dict[int, s.JobStatusName] = {
    cpb.JOB_STATUS_QUEUED: "queued",
    cpb.JOB_STATUS_RUNNING: "running",
    cpb.JOB_STATUS_SUCCESS: "success",
    cpb.JOB_STATUS_ERROR: "error",
}
JOB_STATUS_TO_PB: dict[str, cpb.JobStatus] = {name: cast(cpb.JobStatus, v) for v, name in _JOB_STATUS.items()}
_ERROR_REASON: dict[int, Any] = {
    cpb.DocumentError.REASON_INVALID_SOURCE_KEY: "invalid_source_key",
    cpb.DocumentError.REASON_NOT_UTF8: "not_utf8",
    cpb.DocumentError.REASON_BINARY: "binary",
    cpb.DocumentError.REASON_TOO_LARGE: "too_large",
    cpb.DocumentError.REASON_DUPLICATE_IN_BATCH: "duplicate_in_batch",
}
_DOC_KIND: dict[int, s.DocumentKindName] = {
    rpb.DOCUMENT_KIND_REPO_DOC: "repo_doc",
    rpb.DOCUMENT_KIND_WORKFLOW: "workflow",
    rpb.DOCUMENT_KIND_EXAMPLE: "example",
    rpb.DOCUMENT_KIND_TEST: "test",
    rpb.DOCUMENT_KIND_CONFIG: "config",
}
DOC_KIND_TO_PB: dict[str, rpb.DocumentKind] = {
    name: cast(rpb.DocumentKind, v) for v, name in _DOC_KIND.items()
}
_SYNC_STATUS: dict[int, s.SyncStatusName] = {
    rpb.SYNC_STATUS_QUEUED: "queued",
    rpb.SYNC_STATUS_RUNNING: "running",
    rpb.SYNC_STATUS_SUCCESS: "success",
    rpb.SYNC_STATUS_ERROR: "error",
}
_SYNC_TRIGGER: dict[int, s.SyncTriggerName] = {
    rpb.SYNC_TRIGGER_MANUAL: "manual",
    rpb.SYNC_TRIGGER_SCHEDULE: "schedule",
    rpb.SYNC_TRIGGER_REGISTRATION: "registration",
    rpb.SYNC_TRIGGER_WEBHOOK: "webhook",
}
_SYNC_PHASE: dict[int, s.SyncPhaseName] = {
    rpb.SYNC_PHASE_FETCH: "fetch",
    rpb.SYNC_PHASE_DISCOVER: "discover",
    rpb.SYNC_PHASE_CHUNK: "chunk",
    rpb.SYNC_PHASE_EMBED: "embed",
    rpb.SYNC_PHASE_LINK: "link",
}
_MENTION_FORM: dict[int, s.MentionFormName] = {
    rpb.MENTION_FORM_BACKTICK: "backtick",
    rpb.MENTION_FORM_DOTTED: "dotted",
    rpb.MENTION_FORM_CALL: "call",
    rpb.MENTION_FORM_REFERENCE: "reference",
}
# Why a mention links to its symbol; "" for a link stored before reasons were.
_MENTION_REASON: dict[int, s.MentionReasonName] = {
    rpb.MENTION_REASON_EXPLICIT_TARGET: "explicit_target",
    rpb.MENTION_REASON_DOCUMENT_IMPORT: "document_import",
    rpb.MENTION_REASON_HEADING_CONTEXT: "heading_context",
    rpb.MENTION_REASON_TEXT_CONTEXT: "text_context",
    rpb.MENTION_REASON_QUALIFIED_NAME: "qualified_name",
    rpb.MENTION_REASON_UNIQUE_PUBLIC: "unique_public",
    rpb.MENTION_REASON_SAME_FILE: "same_file",
    rpb.MENTION_REASON_NAME_MATCH: "name_match",
    rpb.MENTION_REASON_NEAREST_DEFINITION: "nearest_definition",
}
_LANGUAGE = {
    rpb.LANGUAGE_PYTHON: "python",
    rpb.LANGUAGE_GO: "go",
    rpb.LANGUAGE_TYPESCRIPT: "typescript",
    rpb.LANGUAGE_JAVASCRIPT: "javascript",
}
_NODE_KIND = {
    rpb.CODE_NODE_KIND_FUNCTION: "function",
    rpb.CODE_NODE_KIND_CLASS: "class",
    rpb.CODE_NODE_KIND_METHOD: "method",
    rpb.CODE_NODE_KIND_TYPE: "type",
    rpb.CODE_NODE_KIND_INTERFACE: "interface",
    rpb.CODE_NODE_KIND_CONSTANT: "constant",
    rpb.CODE_NODE_KIND_MODULE: "module",
    rpb.CODE_NODE_KIND_VARIABLE: "variable",
    rpb.CODE_NODE_KIND_ATTRIBUTE: "attribute",
    rpb.CODE_NODE_KIND_PROPERTY: "property",
}
_STORE: dict[int, s.StoreName] = {
    spb.STORE_CODE: "code",
    spb.STORE_REPO_DOCS: "repo_docs",
    spb.STORE_COLLECTIONS: "collections",
    spb.STORE_EMBEDDING: "embedding",
}


N = TypeVar("N")


def _known(names: Mapping[int, N], value: int, what: str) -> N:
    """The name of an enum value: one the gateway does not know is a service answering past this
    gateway's contracts (or a broken one), an error to show, never a guess at a likely value."""
    try:
        return names[value]
    except KeyError:
        raise Problem(
            502, f"a service behind the gateway answered a {what} this gateway does not know ({value})"
        ) from None


def _time(stamp: Timestamp) -> dt.datetime:
    return stamp.ToDatetime(dt.UTC)


def _optional_time(message: Message, field: str) -> dt.datetime | None:
    return _time(getattr(message, field)) if message.HasField(field) else None


# Collections.


def visibility_to_pb(name: s.VisibilityName) -> cpb.Visibility:
    return _VISIBILITY_TO_PB[name]


def collection_from_pb(message: cpb.Collection) -> s.Collection:
    return s.Collection(
        id=message.id,
        name=message.name,
        description=message.description,
        visibility=_known(_VISIBILITY_FROM_PB, message.visibility, "visibility"),
        owner=message.owner,
        group_grants=sorted(message.group_grants),
        document_count=message.document_count,
        chunk_count=message.chunk_count,
        created_at=_time(message.created_at),
        updated_at=_time(message.updated_at),
    )


def access_from_pb(entry: cpb.CollectionAccess) -> CollectionAccess:
    # An unknown visibility is treated as private: failing closed.
    return CollectionAccess(
        collection_id=entry.collection_id,
        visibility=CollectionVisibility(_known(_VISIBILITY_FROM_PB, entry.visibility, "visibility")),
        owner=entry.owner,
        group_grants=frozenset(entry.group_grants),
    )


def collection_citation(collection_id: str, anchor: str = "") -> str:
    """The citable address of a collection or one of its sections: collection/<id>[#<anchor>]."""
    return f"collection/{collection_id}#{anchor}" if anchor else f"collection/{collection_id}"


def document_result_from_pb(message: cpb.DocumentResult) -> s.DocumentResult:
    if message.WhichOneof("outcome") == "error":
        return s.DocumentResult(
            source_key=message.source_key,
            document_id=None,
            state=None,
            error=s.DocumentError(
                reason=_ERROR_REASON.get(message.error.reason, "unknown"), message=message.error.message
            ),
        )
    return s.DocumentResult(
        source_key=message.source_key,
        document_id=message.document_id or None,
        # A refused document has no state (unspecified); a stored one has one the gateway knows.
        state=None
        if message.state == cpb.DOCUMENT_STATE_UNSPECIFIED
        else _known(_STATE, message.state, "state"),
        warnings=list(message.warnings),
    )


def counts_from_pb(message: cpb.UploadCounts) -> s.UploadCounts:
    return s.UploadCounts(
        created=message.created, replaced=message.replaced, unchanged=message.unchanged, failed=message.failed
    )


def summary_from_pb(message: cpb.DocumentSummary) -> s.DocumentSummary:
    return s.DocumentSummary(
        id=message.id,
        collection_id=message.collection_id,
        source_key=message.source_key,
        title=message.title,
        content_hash=message.content_hash,
        size_bytes=message.size_bytes,
        chunk_count=message.chunk_count,
        created_at=_time(message.created_at),
        updated_at=_time(message.updated_at),
    )


def _frontmatter(raw: str) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def metadata_from_pb(message: cpb.DocumentMetadata) -> s.DocumentMetadata:
    return s.DocumentMetadata(
        frontmatter=_frontmatter(message.frontmatter_json),
        title=message.title,
        heading_tree=[
            s.Heading(level=h.level, text=h.text, anchor=h.anchor, line=h.line) for h in message.heading_tree
        ],
        code_blocks=[
            s.CodeBlock(language=b.language, content=b.content, start_line=b.start_line, end_line=b.end_line)
            for b in message.code_blocks
        ],
        tables=[
            s.Table(
                header=list(t.header),
                rows=[list(row.cells) for row in t.rows],
                start_line=t.start_line,
                end_line=t.end_line,
            )
            for t in message.tables
        ],
        links=[
            s.Link(
                text=link.text,
                href=link.href,
                line=link.line,
                link_type=_LINK_TYPE.get(link.link_type, "unknown"),
                target_document_id=link.target_document_id or None,
                anchor=link.anchor,
            )
            for link in message.links
        ],
        word_count=message.word_count,
        line_count=message.line_count,
        warnings=list(message.warnings),
    )


def document_from_pb(message: cpb.Document) -> s.Document:
    summary = message.summary
    return s.Document(
        id=summary.id,
        collection_id=summary.collection_id,
        source_key=summary.source_key,
        title=summary.title,
        content_hash=summary.content_hash,
        size_bytes=summary.size_bytes,
        chunk_count=summary.chunk_count,
        created_at=_time(summary.created_at),
        updated_at=_time(summary.updated_at),
        content=message.content,
        metadata=metadata_from_pb(message.metadata),
    )


def chunk_from_pb(message: cpb.Chunk) -> s.Chunk:
    return s.Chunk(
        id=message.id,
        document_id=message.document_id,
        collection_id=message.collection_id,
        source_key=message.source_key,
        chunk_index=message.chunk_index,
        heading_path=list(message.heading_path),
        heading_level=message.heading_level,
        section_anchor=message.section_anchor,
        content=message.content,
        start_line=message.start_line,
        end_line=message.end_line,
        embedding_model=message.embedding_model or None,
        chunker=s.ChunkerParams(
            max_chars=message.chunker.max_chars,
            min_chars=message.chunker.min_chars,
            max_chunks=message.chunker.max_chunks,
        ),
        citation=collection_citation(message.collection_id, message.section_anchor),
    )


def chunk_hit_from_pb(message: cpb.ChunkHit) -> s.ChunkHit:
    return s.ChunkHit(
        chunk=chunk_from_pb(message.chunk),
        document_title=message.document_title,
        score=message.score,
        ranks=s.CollectionStreamRanks(dense=message.ranks.dense, text=message.ranks.text),
    )


def embed_status_from_pb(message: cpb.GetEmbedStatusResponse) -> s.EmbedStatus:
    return s.EmbedStatus(
        model=message.model,
        total_chunks=message.total_chunks,
        embedded_chunks=message.embedded_chunks,
        pending_chunks=message.pending_chunks,
        stale_chunks=message.stale_chunks,
        outdated_chunker_chunks=message.outdated_chunker_chunks,
    )


def job_from_pb(message: cpb.Job) -> s.Job:
    return s.Job(
        id=message.id,
        collection_id=message.collection_id,
        kind=_known(_JOB_KIND, message.kind, "job kind"),
        status=_known(_JOB_STATUS, message.status, "job status"),
        error=message.error or None,
        retry_of=message.retry_of or None,
        requested_by=message.requested_by,
        progress_done=message.progress_done,
        progress_total=message.progress_total,
        created_at=_time(message.created_at),
        started_at=_optional_time(message, "started_at"),
        finished_at=_optional_time(message, "finished_at"),
        heartbeat_at=_optional_time(message, "heartbeat_at"),
        attempts=message.attempts,
        max_attempts=message.max_attempts,
        interruptions=[
            s.JobInterruption(
                at=_time(interruption.at),
                worker=interruption.worker,
                reason=interruption.reason,
                progress_done=interruption.progress_done,
                progress_total=interruption.progress_total,
            )
            for interruption in message.interruptions
        ],
        not_before=_optional_time(message, "not_before"),
    )


INT32_MAX = 2**31 - 1


def limit_to_pb(limit: int | None) -> int:
    """A requested hit limit as the search service takes it. None (not given) is 0, for which the
    search service applies its configured default; it alone judges the range, so a limit too large
    for the int32 field goes as the largest one, which it refuses with its own message."""
    return 0 if limit is None else min(limit, INT32_MAX)


def failure_from_pb(message: spb.StoreFailure) -> s.StoreFailure:
    return s.StoreFailure(store=_STORE.get(message.store, "unknown"), message=message.message)


# Repositories.


def repo_visibility_to_pb(name: s.RepositoryVisibilityName) -> rpb.Visibility:
    return _REPO_VISIBILITY_TO_PB[name]


def repository_access_from_pb(entry: rpb.RepositoryAccess) -> RepositoryAccess:
    return RepositoryAccess(
        repository_id=entry.repository_id,
        host=entry.ref.host,
        owner=entry.ref.owner,
        name=entry.ref.name,
        visibility=RepositoryVisibility(_known(_REPO_VISIBILITY_FROM_PB, entry.visibility, "visibility")),
        owner_subject=entry.owner_subject,
        group_grants=frozenset(entry.group_grants),
    )


# What a reader sees of a failed sync of a repository read from the server's disk: git's words
# quote that directory, which only administrators see.
SYNC_ERROR_WITHHELD = "the sync failed; an administrator can see why"


def sync_from_pb(message: rpb.Sync, *, show_error: bool = True) -> s.Sync:
    c, p = message.counters, message.progress
    return s.Sync(
        id=message.id,
        repository_id=message.repository_id,
        status=_SYNC_STATUS.get(message.status, "unknown"),
        trigger=_SYNC_TRIGGER.get(message.trigger, "unknown"),
        commit_sha=message.commit_sha,
        counters=s.SyncCounters(
            discovered_files=c.discovered_files,
            indexed_documents=c.indexed_documents,
            indexed_chunks=c.indexed_chunks,
            unchanged_documents=c.unchanged_documents,
            deleted_documents=c.deleted_documents,
            replaced_files=c.replaced_files,
        ),
        code_nodes=message.code_nodes,
        mentions=message.mentions,
        skipped=[s.SkippedFile(path=f.path, reason=f.reason) for f in message.skipped],
        error=(message.error if show_error else SYNC_ERROR_WITHHELD) if message.error else None,
        started_at=_optional_time(message, "started_at"),
        finished_at=_optional_time(message, "finished_at"),
        phase=_SYNC_PHASE.get(message.phase),
        progress=s.SyncProgress(
            files_read=p.files_read,
            files_total=p.files_total,
            documents_chunked=p.documents_chunked,
            documents_to_chunk=p.documents_to_chunk,
            vectors_embedded=p.vectors_embedded,
            vectors_to_embed=p.vectors_to_embed,
            phase_seconds=dict(p.phase_seconds),
        ),
    )


def is_remote_url(clone_url: str) -> bool:
    """Whether a clone URL is fetched over the network; any other (file://, a bare path) is
    a directory on the server."""
    return _REMOTE_URL.match(clone_url) is not None


def reads_server_disk(message: rpb.Repository) -> bool:
    """Whether the repository is read from a directory on the server: a checkout path, or a
    clone URL that is not fetched over the network."""
    source = message.WhichOneof("source")
    return source == "checkout_path" or (source == "clone_url" and not is_remote_url(message.clone_url))


def repository_from_pb(message: rpb.Repository, *, show_server_paths: bool) -> s.Repository:
    """A checkout path, or a clone URL naming a directory on the server, is shown to
    administrators only; others see null (and no sync error, which would quote it)."""
    source = message.WhichOneof("source")
    shown = show_server_paths or not reads_server_disk(message)
    return s.Repository(
        id=message.id,
        host=message.ref.host,
        owner=message.ref.owner,
        name=message.ref.name,
        clone_url=message.clone_url if source == "clone_url" and shown else None,
        checkout_path=message.checkout_path if source == "checkout_path" and show_server_paths else None,
        visibility=_known(_REPO_VISIBILITY_FROM_PB, message.visibility, "visibility"),
        owner_subject=message.owner_subject,
        group_grants=sorted(message.group_grants),
        default_branch=message.default_branch,
        web_url=message.web_url,
        created_at=_optional_time(message, "created_at"),
        last_sync=sync_from_pb(message.last_sync, show_error=shown)
        if message.HasField("last_sync")
        else None,
        sync_interval_seconds=message.sync_interval_seconds
        if message.HasField("sync_interval_seconds")
        else None,
    )


def repo_summary_from_pb(message: rpb.DocumentSummary) -> s.RepoDocumentSummary:
    return s.RepoDocumentSummary(
        id=message.id,
        repository_id=message.repository_id,
        path=message.path,
        kind=_DOC_KIND.get(message.kind, "unknown"),
        title=message.title,
        slug=message.slug,
        content_hash=message.content_hash,
        chunk_count=message.chunk_count,
        indexed_at=_optional_time(message, "indexed_at"),
    )


def repo_document_from_pb(message: rpb.Document) -> s.RepoDocument:
    summary = repo_summary_from_pb(message.summary)
    return s.RepoDocument(
        id=summary.id,
        repository_id=summary.repository_id,
        path=summary.path,
        kind=summary.kind,
        title=summary.title,
        slug=summary.slug,
        content_hash=summary.content_hash,
        chunk_count=summary.chunk_count,
        indexed_at=summary.indexed_at,
        content=message.content,
    )


def docs_tree_node_from_pb(message: rpb.DocsTreeNode) -> s.DocsTreeNode:
    return s.DocsTreeNode(
        title=message.title,
        slug=message.slug or None,
        path=message.path,
        children=[docs_tree_node_from_pb(child) for child in message.children],
    )


def code_node_from_pb(message: rpb.CodeNode) -> s.CodeNode:
    return s.CodeNode(
        id=message.id,
        repository_id=message.repository_id,
        name=message.name,
        qualified_name=message.qualified_name,
        kind=_NODE_KIND.get(message.kind, "unknown"),
        language=_LANGUAGE.get(message.language, "unknown"),
        path=message.path,
        start_line=message.start_line,
        end_line=message.end_line,
        signature=message.signature,
    )


def _page_link(message: rpb.PageLink, present: bool) -> s.PageLink | None:
    return s.PageLink(slug=message.slug, title=message.title) if present and message.slug else None


def docs_page_from_pb(message: rpb.GetDocsPageResponse) -> s.DocsPage:
    return s.DocsPage(
        document=repo_document_from_pb(message.document),
        toc=[s.TocEntry(level=t.level, text=t.text, anchor=t.anchor) for t in message.toc],
        siblings=[s.PageLink(slug=p.slug, title=p.title) for p in message.siblings],
        previous=_page_link(message.previous, message.HasField("previous")),
        next=_page_link(message.next, message.HasField("next")),
        related_code=[code_node_from_pb(n) for n in message.related_code],
        related_code_mentions=[
            s.PageMention(
                node_id=m.code_node_id,
                mention=m.mention,
                form=_MENTION_FORM.get(m.form, "unknown"),
                reason=_MENTION_REASON.get(m.reason, ""),
            )
            for m in message.related_code_mentions
        ],
    )


def repo_citation(chunk: rpb.Chunk) -> str:
    """The citable address of a repository doc chunk: its page slug and heading anchor."""
    page = chunk.slug or chunk.path
    return f"{page}#{chunk.heading_anchor}" if chunk.heading_anchor else page


def repo_chunk_from_pb(message: rpb.Chunk) -> s.RepoChunk:
    return s.RepoChunk(
        id=message.id,
        document_id=message.document_id,
        repository_id=message.repository_id,
        chunk_index=message.chunk_index,
        heading_path=list(message.heading_path),
        content=message.content,
        path=message.path,
        slug=message.slug,
        kind=_DOC_KIND.get(message.kind, "unknown"),
        heading_anchor=message.heading_anchor,
        embedding_model=message.embedding_model or None,
        citation=repo_citation(message),
    )


def related_from_pb(message: rpb.RelatedDocChunk) -> s.RelatedDocChunk:
    return s.RelatedDocChunk(
        chunk=repo_chunk_from_pb(message.chunk),
        document_title=message.document_title,
        form=_MENTION_FORM.get(message.form, "unknown"),
        reason=_MENTION_REASON.get(message.reason, ""),
    )


def _code_ranks(ranks: rpb.StreamRanks) -> s.CodeStreamRanks:
    return s.CodeStreamRanks(dense=ranks.dense, text=ranks.text, symbol=ranks.symbol)


def code_result_from_pb(message: spb.CodeResult) -> s.CodeResult:
    return s.CodeResult(
        node=code_node_from_pb(message.hit.node),
        score=message.hit.score,
        ranks=_code_ranks(message.hit.ranks),
        related_repo_doc_chunks=[related_from_pb(r) for r in message.related_repo_doc_chunks],
    )


def doc_hit_from_pb(message: rpb.DocChunkHit) -> s.DocChunkHit:
    return s.DocChunkHit(
        chunk=repo_chunk_from_pb(message.chunk),
        document_title=message.document_title,
        score=message.score,
        ranks=_code_ranks(message.ranks),
    )


def file_range_from_pb(message: rpb.ReadFileRangeResponse) -> s.FileRange:
    return s.FileRange(
        path=message.path,
        language=_LANGUAGE.get(message.language, "unknown"),
        start_line=message.start_line,
        end_line=message.end_line,
        total_lines=message.total_lines,
        content=message.content,
        commit_sha=message.commit_sha,
    )


def route_from_pb(message: spb.RouteResponse) -> s.RouteResult:
    return s.RouteResult(
        pools=[
            s.RoutePool(store=_STORE.get(p.store, "unknown"), confidence=p.confidence) for p in message.pools
        ],
        code=[code_result_from_pb(c) for c in message.code],
        repo_docs=[doc_hit_from_pb(h) for h in message.repo_docs],
        collections=[chunk_hit_from_pb(h) for h in message.collections],
        failures=[failure_from_pb(f) for f in message.failures],
    )
