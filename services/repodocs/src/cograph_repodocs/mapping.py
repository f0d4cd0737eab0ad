"""Requests to the application layer's arguments, and its results (rows, domain values) to
protobuf messages: the only place that knows both."""

from __future__ import annotations

import datetime as dt
import uuid

import msgspec
from google.protobuf.timestamp_pb2 import Timestamp

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph_errors import InvalidArgument, check_search, parse_ids
from cograph_repodocs.application.code import SourceLines
from cograph_repodocs.application.documents import DocsPage, Related
from cograph_repodocs.application.repositories import Change, Registration, Repository
from cograph_repodocs.application.search import CodeHit, DocHit
from cograph_repodocs.domain.discovery import DocumentKind
from cograph_repodocs.domain.docs_tree import NavLink, TreeNode
from cograph_repodocs.domain.mentions import MentionForm
from cograph_repodocs.domain.resolution import Reason
from cograph_repodocs.domain.rules import Visibility, redact_credentials
from cograph_repodocs.domain.symbols import Language, SymbolKind
from cograph_repodocs.domain.webhooks import Provider, Verdict
from cograph_repodocs.stores.code import CodeNodeRow
from cograph_repodocs.stores.documents import ChunkRow, ContentMatch, DocumentRow
from cograph_repodocs.stores.repositories import AccessRow
from cograph_repodocs.stores.syncs import SyncPhase, SyncRow, SyncStatus, SyncTrigger
from cograph_retrieval import DEFAULT_RRF_K, Query

VISIBILITY_TO_PB = {Visibility.PUBLIC: pb.VISIBILITY_PUBLIC, Visibility.PRIVATE: pb.VISIBILITY_PRIVATE}
VISIBILITY_FROM_PB = {value: key for key, value in VISIBILITY_TO_PB.items()}
KIND_TO_PB = {
    DocumentKind.REPO_DOC: pb.DOCUMENT_KIND_REPO_DOC,
    DocumentKind.WORKFLOW: pb.DOCUMENT_KIND_WORKFLOW,
    DocumentKind.EXAMPLE: pb.DOCUMENT_KIND_EXAMPLE,
    DocumentKind.TEST: pb.DOCUMENT_KIND_TEST,
    DocumentKind.CONFIG: pb.DOCUMENT_KIND_CONFIG,
}
KIND_FROM_PB = {value: key for key, value in KIND_TO_PB.items()}
STATUS_TO_PB = {
    SyncStatus.QUEUED: pb.SYNC_STATUS_QUEUED,
    SyncStatus.RUNNING: pb.SYNC_STATUS_RUNNING,
    SyncStatus.SUCCESS: pb.SYNC_STATUS_SUCCESS,
    SyncStatus.ERROR: pb.SYNC_STATUS_ERROR,
}
PROVIDER_FROM_PB = {
    pb.WEBHOOK_PROVIDER_GITHUB: Provider.GITHUB,
    pb.WEBHOOK_PROVIDER_GITLAB: Provider.GITLAB,
    pb.WEBHOOK_PROVIDER_GITEA: Provider.GITEA,
}
VERDICT_TO_PB = {
    Verdict.QUEUED: pb.WEBHOOK_VERDICT_QUEUED,
    Verdict.IGNORED: pb.WEBHOOK_VERDICT_IGNORED,
    Verdict.UNAUTHENTICATED: pb.WEBHOOK_VERDICT_UNAUTHENTICATED,
    Verdict.FORBIDDEN: pb.WEBHOOK_VERDICT_FORBIDDEN,
}
TRIGGER_TO_PB = {
    SyncTrigger.MANUAL: pb.SYNC_TRIGGER_MANUAL,
    SyncTrigger.SCHEDULE: pb.SYNC_TRIGGER_SCHEDULE,
    SyncTrigger.REGISTRATION: pb.SYNC_TRIGGER_REGISTRATION,
    SyncTrigger.WEBHOOK: pb.SYNC_TRIGGER_WEBHOOK,
}
PHASE_TO_PB = {
    SyncPhase.FETCH: pb.SYNC_PHASE_FETCH,
    SyncPhase.DISCOVER: pb.SYNC_PHASE_DISCOVER,
    SyncPhase.CHUNK: pb.SYNC_PHASE_CHUNK,
    SyncPhase.EMBED: pb.SYNC_PHASE_EMBED,
    SyncPhase.LINK: pb.SYNC_PHASE_LINK,
}
FORM_TO_PB = {
    MentionForm.BACKTICK: pb.MENTION_FORM_BACKTICK,
    MentionForm.DOTTED: pb.MENTION_FORM_DOTTED,
    MentionForm.CALL: pb.MENTION_FORM_CALL,
    MentionForm.REFERENCE: pb.MENTION_FORM_REFERENCE,
}
REASON_TO_PB = {
    Reason.EXPLICIT_TARGET: pb.MENTION_REASON_EXPLICIT_TARGET,
    Reason.DOCUMENT_IMPORT: pb.MENTION_REASON_DOCUMENT_IMPORT,
    Reason.HEADING_CONTEXT: pb.MENTION_REASON_HEADING_CONTEXT,
    Reason.TEXT_CONTEXT: pb.MENTION_REASON_TEXT_CONTEXT,
    Reason.QUALIFIED_NAME: pb.MENTION_REASON_QUALIFIED_NAME,
    Reason.UNIQUE_PUBLIC: pb.MENTION_REASON_UNIQUE_PUBLIC,
    Reason.SAME_FILE: pb.MENTION_REASON_SAME_FILE,
    Reason.NAME_MATCH: pb.MENTION_REASON_NAME_MATCH,
    Reason.NEAREST_DEFINITION: pb.MENTION_REASON_NEAREST_DEFINITION,
}
LANGUAGE_TO_PB = {
    Language.PYTHON: pb.LANGUAGE_PYTHON,
    Language.GO: pb.LANGUAGE_GO,
    Language.TYPESCRIPT: pb.LANGUAGE_TYPESCRIPT,
    Language.JAVASCRIPT: pb.LANGUAGE_JAVASCRIPT,
}
NODE_KIND_TO_PB = {
    SymbolKind.FUNCTION: pb.CODE_NODE_KIND_FUNCTION,
    SymbolKind.CLASS: pb.CODE_NODE_KIND_CLASS,
    SymbolKind.METHOD: pb.CODE_NODE_KIND_METHOD,
    SymbolKind.TYPE: pb.CODE_NODE_KIND_TYPE,
    SymbolKind.INTERFACE: pb.CODE_NODE_KIND_INTERFACE,
    SymbolKind.CONSTANT: pb.CODE_NODE_KIND_CONSTANT,
    SymbolKind.MODULE: pb.CODE_NODE_KIND_MODULE,
    SymbolKind.VARIABLE: pb.CODE_NODE_KIND_VARIABLE,
    SymbolKind.ATTRIBUTE: pb.CODE_NODE_KIND_ATTRIBUTE,
    SymbolKind.PROPERTY: pb.CODE_NODE_KIND_PROPERTY,
}


def timestamp(value: dt.datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def registration_from_pb(request: pb.RegisterRepositoryRequest) -> Registration:
    source = request.WhichOneof("source")
    return Registration(
        host=request.ref.host,
        owner=request.ref.owner,
        name=request.ref.name,
        clone_url=request.clone_url if source == "clone_url" else None,
        checkout_path=request.checkout_path if source == "checkout_path" else None,
        visibility=VISIBILITY_FROM_PB.get(request.visibility),
        owner_subject=request.owner_subject,
        default_branch=request.default_branch,
        web_url=request.web_url,
    )


def change_from_pb(request: pb.UpdateRepositoryRequest) -> Change:
    """The fields the request gives; a visibility it names but no one knows is refused later."""
    interval: int | msgspec.UnsetType | None = msgspec.UNSET
    which = request.WhichOneof("sync_interval")
    if which == "sync_interval_seconds":
        interval = request.sync_interval_seconds
    elif which == "default_sync_interval":
        if not request.default_sync_interval:
            raise InvalidArgument("default_sync_interval is true when given")
        interval = None
    visibility: Visibility | msgspec.UnsetType | None = msgspec.UNSET
    if request.HasField("visibility"):
        visibility = VISIBILITY_FROM_PB.get(request.visibility)
    return Change(
        visibility=visibility,
        default_branch=request.default_branch if request.HasField("default_branch") else msgspec.UNSET,
        sync_interval_seconds=interval,
    )


def kinds_from_pb(values: list[pb.DocumentKind]) -> list[DocumentKind]:
    kinds = []
    for value in values:
        if value not in KIND_FROM_PB:
            raise InvalidArgument(f"document kind {value} is not one of the five kinds")
        kinds.append(KIND_FROM_PB[value])
    return kinds


def ref_to_pb(host: str, owner: str, name: str) -> pb.RepositoryRef:
    return pb.RepositoryRef(host=host, owner=owner, name=name)


def query_from_pb(request: pb.SearchDocChunksRequest | pb.SearchCodeRequest) -> Query:
    """The checked query of a search request: its text and numbers, then its scope's ids."""
    weights = [request.dense_weight, request.text_weight]
    if isinstance(request, pb.SearchCodeRequest):
        weights.append(request.symbol_weight)
    check_search(request.query, request.limit, request.rrf_k, weights, request.query_embedding)
    return Query(
        text=request.query,
        scope=parse_ids(list(request.repository_ids), "repository"),
        limit=request.limit,
        embedding=list(request.query_embedding),
        model=request.embedding_model,
        dense_weight=request.dense_weight,
        text_weight=request.text_weight,
        rrf_k=request.rrf_k or DEFAULT_RRF_K,
        candidates=max(100, request.limit),
    )


def repository_to_pb(repository: Repository) -> pb.Repository:
    row, last_sync = repository.row, repository.last_sync
    message = pb.Repository(
        id=str(row.id),
        ref=ref_to_pb(row.host, row.owner, row.name),
        visibility=VISIBILITY_TO_PB[row.visibility],
        owner_subject=row.owner_subject,
        group_grants=row.group_grants,
        default_branch=row.default_branch,
        web_url=row.web_url,
        created_at=timestamp(row.created_at),
    )
    if row.clone_url is not None:
        message.clone_url = redact_credentials(row.clone_url)  # git reads it; nobody else
    elif row.checkout_path is not None:
        message.checkout_path = row.checkout_path
    if last_sync is not None:
        message.last_sync.CopyFrom(sync_to_pb(last_sync))
    if row.sync_interval_seconds is not None:
        message.sync_interval_seconds = row.sync_interval_seconds
    return message


def access_to_pb(row: AccessRow) -> pb.RepositoryAccess:
    return pb.RepositoryAccess(
        repository_id=str(row.id),
        ref=ref_to_pb(row.host, row.owner, row.name),
        visibility=VISIBILITY_TO_PB[row.visibility],
        owner_subject=row.owner_subject,
        group_grants=row.group_grants,
    )


def sync_to_pb(row: SyncRow) -> pb.Sync:
    message = pb.Sync(
        id=str(row.id),
        repository_id=str(row.repository_id),
        status=STATUS_TO_PB[row.status],
        trigger=TRIGGER_TO_PB[row.trigger],
        commit_sha=row.commit_sha or "",
        counters=pb.SyncCounters(
            discovered_files=row.discovered_files,
            indexed_documents=row.indexed_documents,
            indexed_chunks=row.indexed_chunks,
            unchanged_documents=row.unchanged_documents,
            deleted_documents=row.deleted_documents,
            replaced_files=row.replaced_files,
        ),
        code_nodes=row.code_nodes,
        mentions=row.mentions,
        skipped=[pb.SkippedFile(path=s.path, reason=s.reason) for s in row.skipped],
        error=row.error or "",
        started_at=timestamp(row.started_at),
        phase=PHASE_TO_PB[row.phase] if row.phase else pb.SYNC_PHASE_UNSPECIFIED,
        progress=pb.SyncProgress(
            files_read=row.progress.files_read,
            files_total=row.progress.files_total,
            documents_chunked=row.progress.documents_chunked,
            documents_to_chunk=row.progress.documents_to_chunk,
            vectors_embedded=row.progress.vectors_embedded,
            vectors_to_embed=row.progress.vectors_to_embed,
            phase_seconds=row.progress.phase_seconds,
        ),
    )
    if row.finished_at is not None:
        message.finished_at.CopyFrom(timestamp(row.finished_at))
    return message


def summary_to_pb(row: DocumentRow) -> pb.DocumentSummary:
    return pb.DocumentSummary(
        id=str(row.id),
        repository_id=str(row.repository_id),
        path=row.path,
        kind=KIND_TO_PB[row.kind],
        title=row.title,
        slug=row.slug,
        content_hash=row.content_hash,
        chunk_count=row.chunk_count,
        indexed_at=timestamp(row.indexed_at),
    )


def document_to_pb(row: DocumentRow) -> pb.Document:
    return pb.Document(summary=summary_to_pb(row), content=row.content)


def tree_to_pb(nodes: list[TreeNode]) -> list[pb.DocsTreeNode]:
    return [
        pb.DocsTreeNode(title=n.title, slug=n.slug or "", path=n.path, children=tree_to_pb(n.children))
        for n in nodes
    ]


def _link(link: NavLink | None) -> pb.PageLink | None:
    return pb.PageLink(slug=link.slug, title=link.title) if link is not None else None


def page_to_pb(page: DocsPage) -> pb.GetDocsPageResponse:
    nav = page.nav
    return pb.GetDocsPageResponse(
        document=document_to_pb(page.document),
        toc=[pb.TocEntry(level=t.level, text=t.text, anchor=t.anchor) for t in nav.toc],
        siblings=[pb.PageLink(slug=s.slug, title=s.title) for s in nav.siblings],
        previous=_link(nav.previous),
        next=_link(nav.next),
        related_code=[node_to_pb(n) for n in page.related_code],
        related_code_mentions=[
            pb.PageMention(
                code_node_id=str(n.id),
                mention=n.mention,
                form=FORM_TO_PB[n.form],
                reason=_reason_to_pb(n.reason),
            )
            for n in page.related_code
        ],
    )


def chunk_to_pb(row: ChunkRow) -> pb.Chunk:
    return pb.Chunk(
        id=str(row.id),
        document_id=str(row.document_id),
        repository_id=str(row.repository_id),
        chunk_index=row.chunk_index,
        heading_path=row.heading_path,
        content=row.content,
        path=row.path,
        slug=row.slug,
        kind=KIND_TO_PB[row.kind],
        heading_anchor=row.heading_anchor,
        embedding_model=row.embedding_model or "",
    )


def node_to_pb(row: CodeNodeRow) -> pb.CodeNode:
    return pb.CodeNode(
        id=str(row.id),
        repository_id=str(row.repository_id),
        name=row.name,
        qualified_name=row.qualified_name,
        kind=NODE_KIND_TO_PB[row.kind],
        language=LANGUAGE_TO_PB[row.language],
        path=row.path,
        start_line=row.start_line,
        end_line=row.end_line,
        signature=row.signature,
    )


def content_match_to_pb(match: ContentMatch) -> pb.ContentMatch:
    return pb.ContentMatch(
        content_hash=match.content_hash,
        repository_id=str(match.repository_id),
        repository=match.repository,
        document_id=str(match.document_id),
        path=match.path,
    )


def _reason_to_pb(reason: Reason | None) -> pb.MentionReason:
    """Unspecified for a link stored before reasons were."""
    return REASON_TO_PB[reason] if reason else pb.MENTION_REASON_UNSPECIFIED


def related_to_pb(related: Related) -> list[pb.RelatedDocChunks]:
    """One entry per node found, in the order asked; a node nothing mentions has no chunks."""
    by_node: dict[uuid.UUID, list[pb.RelatedDocChunk]] = {node_id: [] for node_id in related.node_ids}
    for row in related.chunks:
        by_node[row.code_node_id].append(
            pb.RelatedDocChunk(
                chunk=chunk_to_pb(row),
                document_title=row.document_title,
                form=FORM_TO_PB[row.form],
                reason=_reason_to_pb(row.reason),
            )
        )
    return [
        pb.RelatedDocChunks(code_node_id=str(node_id), chunks=chunks) for node_id, chunks in by_node.items()
    ]


def doc_hit_to_pb(hit: DocHit) -> pb.DocChunkHit:
    return pb.DocChunkHit(
        chunk=chunk_to_pb(hit.chunk),
        document_title=hit.chunk.document_title,
        score=hit.score,
        ranks=pb.StreamRanks(dense=hit.ranks.get("dense", 0), text=hit.ranks.get("text", 0)),
    )


def code_hit_to_pb(hit: CodeHit) -> pb.CodeHit:
    return pb.CodeHit(
        node=node_to_pb(hit.node),
        score=hit.score,
        ranks=pb.StreamRanks(
            dense=hit.ranks.get("dense", 0),
            text=hit.ranks.get("text", 0),
            symbol=hit.ranks.get("symbol", 0),
        ),
    )


def source_lines_to_pb(source: SourceLines) -> pb.ReadFileRangeResponse:
    found = source.lines
    return pb.ReadFileRangeResponse(
        path=found.path,
        language=LANGUAGE_TO_PB[found.language],
        start_line=found.start_line,
        end_line=found.end_line,
        total_lines=found.total_lines,
        content=found.content,
        commit_sha=source.commit_sha,
    )
