"""REST request and response bodies (msgspec Structs); the OpenAPI document is generated from them.

Requests forbid unknown fields, so a misspelt field is a 400 naming it rather than silently ignored.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar

import msgspec
from msgspec import Meta

from cograph_errors import CONTROL_CHARACTERS, DEFAULT_RELATED_LIMIT, MAX_RELATED_LIMIT

VisibilityName = Literal["public", "private", "admin_only"]
RepositoryVisibilityName = Literal["public", "private"]
DocumentStateName = Literal["created", "replaced", "unchanged"]
LinkTypeName = Literal["absolute", "anchor", "markdown", "relative", "wiki", "unknown"]
JobKindName = Literal["upload", "embed", "resolve_links"]
JobStatusName = Literal["queued", "running", "success", "error"]
# What a caller may filter repository documents by; answers may also say "unknown".
RepoDocKind = Literal["repo_doc", "workflow", "example", "test", "config"]
DocumentKindName = Literal["repo_doc", "workflow", "example", "test", "config", "unknown"]
SyncStatusName = Literal["queued", "running", "success", "error", "unknown"]
SyncTriggerName = Literal["manual", "schedule", "registration", "webhook", "unknown"]
SyncPhaseName = Literal["fetch", "discover", "chunk", "embed", "link"]
# "embedding": the query was not embedded, and the answer is full text only.
StoreName = Literal["code", "repo_docs", "collections", "embedding", "unknown"]
# How prose names a symbol: reference ([text][pkg.Name], :class:`pkg.Name`), backtick, call, dotted.
MentionFormName = Literal["reference", "backtick", "call", "dotted", "unknown"]
# Why a mention links to its symbol (repodocs' domain/resolution.py); "" for a link stored before
# reasons were, until the repository's next sync links it again.
MentionReasonName = Literal[
    "explicit_target",
    "document_import",
    "heading_context",
    "text_context",
    "qualified_name",
    "unique_public",
    "same_file",
    "nearest_definition",
    "name_match",
    "",
]


def stated(**keywords: Any) -> Meta:
    """JSON Schema keywords the OpenAPI document states of a field whose check is the services'
    own, in their own words ("the collection name contains a control character (U+0001): remove
    it", "the query is empty"): msgspec enforces none of them, and Litestar copies them into the
    field's schema (the "extra" of extra_json_schema), so that a generated client knows them."""
    return Meta(extra_json_schema={"extra": keywords})


def _not_blank_without(controls: str) -> str:
    """A pattern: at least one character that is not white space, and none of `controls`."""
    return rf"^[^{controls}]*[^\s{controls}][^{controls}]*$"


# What a person types (a name, a group, a query): not blank, and no control character but tab,
# newline and carriage return (cograph_errors.check_typed_text).
TYPED_TEXT = _not_blank_without(CONTROL_CHARACTERS)
# A source key or a path on the server: not blank, and no control character at all.
_ANY_CONTROL = r"\x00-\x1f\x7f"
KEY = _not_blank_without(_ANY_CONTROL)

# Text that may be empty, without control characters.
NO_CONTROL = rf"^[^{CONTROL_CHARACTERS}]*$"

Name = Annotated[str, Meta(min_length=1, max_length=200), stated(pattern=TYPED_TEXT)]
Description = Annotated[str, Meta(max_length=5000), stated(pattern=NO_CONTROL)]
Group = Annotated[str, Meta(min_length=1, max_length=200, pattern=r"\S"), stated(pattern=TYPED_TEXT)]
# Not checked here: the collections service judges each key, so one bad key in a batch is
# that document's own error (invalid_source_key), not a 400 for the whole batch.
SourceKey = Annotated[str, stated(pattern=KEY)]
# The search service judges the length of a query and the limit against its settings
# (COGRAPH_SEARCH__MAX_QUERY_CHARS, __MAX_LIMIT, __DEFAULT_LIMIT): a bound stated here would be
# the wrong one as soon as they change, so none is.
Query = Annotated[
    str,
    Meta(
        description="What you are looking for: not blank, without control characters, at most the "
        "configured number of characters (COGRAPH_SEARCH__MAX_QUERY_CHARS, 2000 by default). The search "
        "service judges it, so a blank one is refused with a message saying so rather than a schema error.",
    ),
    stated(pattern=TYPED_TEXT),
]
Limit = Annotated[
    int,
    Meta(
        ge=1,
        description="Most hits. At most the configured maximum (COGRAPH_SEARCH__MAX_LIMIT, 100 by "
        "default); absent or null: the configured default (COGRAPH_SEARCH__DEFAULT_LIMIT, 10 by default).",
    ),
]
# Host, owner and repository names: what git hosts allow, no path separators.
RefPart = Annotated[str, Meta(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]

T = TypeVar("T")


class Page(msgspec.Struct, Generic[T]):
    items: list[T]
    # Pass as page_token to get the next page; null on the last page.
    next_page_token: str | None = None


class ProblemDetails(msgspec.Struct):
    """RFC 9457 problem details: every error the API answers."""

    type: str
    title: str
    status: int
    detail: str
    # Validation errors: which field or parameter, and what is wrong with it.
    errors: list[dict[str, Any]] | None = None


# Collections.


class CollectionCreate(msgspec.Struct, forbid_unknown_fields=True):
    name: Name
    description: Description = ""
    visibility: VisibilityName = "private"


class CollectionUpdate(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Only the fields given change."""

    # Stated in the OpenAPI document (openapi.py): a PATCH changes at least one field, and null
    # leaves a field as it is (the gateway answers "nothing to change" otherwise).
    schema_extra: ClassVar[dict[str, Any]] = {
        "minProperties": 1,
        "anyOf": [
            {"required": [field], "properties": {field: {"type": "string"}}}
            for field in ("name", "description", "visibility")
        ],
    }

    name: Name | None = None
    description: Description | None = None
    visibility: VisibilityName | None = None


class Collection(msgspec.Struct):
    id: str
    name: str
    description: str
    visibility: VisibilityName
    owner: str
    group_grants: list[str]
    document_count: int
    chunk_count: int
    created_at: dt.datetime
    updated_at: dt.datetime


class GrantCreate(msgspec.Struct, forbid_unknown_fields=True):
    group: Group


# Documents.


class DocumentUpload(msgspec.Struct, forbid_unknown_fields=True):
    source_key: SourceKey
    # UTF-8 markdown.
    content: str


class BatchUpload(msgspec.Struct, forbid_unknown_fields=True):
    # How many a batch may hold is the collections service's setting (max_batch_documents).
    documents: Annotated[list[DocumentUpload], Meta(min_length=1)]


class DocumentError(msgspec.Struct):
    reason: Literal["invalid_source_key", "not_utf8", "binary", "too_large", "duplicate_in_batch", "unknown"]
    message: str


class DocumentResult(msgspec.Struct):
    source_key: str
    # Null when the document failed.
    document_id: str | None
    # Null when the document failed; `error` says why.
    state: DocumentStateName | None
    error: DocumentError | None = None
    # What the parser read differently than the file may intend (a '---' block read as
    # markdown, say), and a repository doc with the same bytes: the document is indexed twice.
    warnings: list[str] = msgspec.field(default_factory=list)


class UploadResult(msgspec.Struct):
    source_key: str
    document_id: str
    state: DocumentStateName
    # The upload job that recorded this ingestion.
    job_id: str
    # As in a batch's DocumentResult.
    warnings: list[str] = msgspec.field(default_factory=list)


class UploadCounts(msgspec.Struct):
    created: int
    replaced: int
    unchanged: int
    failed: int


class BatchResult(msgspec.Struct):
    # In request order.
    results: list[DocumentResult]
    counts: UploadCounts
    job_id: str


class DocumentSummary(msgspec.Struct):
    id: str
    collection_id: str
    source_key: str
    title: str
    content_hash: str
    size_bytes: int
    chunk_count: int
    created_at: dt.datetime
    updated_at: dt.datetime


class Heading(msgspec.Struct):
    level: int
    text: str
    anchor: str
    line: int


class CodeBlock(msgspec.Struct):
    language: str
    content: str
    start_line: int
    end_line: int


class Table(msgspec.Struct):
    header: list[str]
    rows: list[list[str]]
    start_line: int
    end_line: int


class Link(msgspec.Struct):
    text: str
    href: str
    line: int
    link_type: LinkTypeName
    # The document of the same collection the link resolved to; null while unresolved.
    target_document_id: str | None
    anchor: str


class DocumentMetadata(msgspec.Struct):
    frontmatter: dict[str, Any]
    title: str
    heading_tree: list[Heading]
    code_blocks: list[CodeBlock]
    tables: list[Table]
    links: list[Link]
    word_count: int
    line_count: int
    # Where the parser read the file differently than it may intend.
    warnings: list[str] = msgspec.field(default_factory=list)


class Document(msgspec.Struct):
    id: str
    collection_id: str
    source_key: str
    title: str
    content_hash: str
    size_bytes: int
    chunk_count: int
    created_at: dt.datetime
    updated_at: dt.datetime
    content: str
    metadata: DocumentMetadata


class ChunkerParams(msgspec.Struct):
    max_chars: int
    min_chars: int
    max_chunks: int


class Chunk(msgspec.Struct):
    id: str
    document_id: str
    collection_id: str
    source_key: str
    chunk_index: int
    heading_path: list[str]
    heading_level: int
    section_anchor: str
    content: str
    # The document lines the chunk was cut from, 1-based and inclusive.
    start_line: int
    end_line: int
    # Null while not embedded.
    embedding_model: str | None
    chunker: ChunkerParams
    # Where this text lives: collection/<collection id>#<section anchor>.
    citation: str


class EmbedStatus(msgspec.Struct):
    model: str
    total_chunks: int
    embedded_chunks: int
    pending_chunks: int
    # Embedded by another model than the configured one: re-embed the collection.
    stale_chunks: int
    # Built with other chunker parameters than the current ones: re-embed re-chunks them.
    outdated_chunker_chunks: int


class JobInterruption(msgspec.Struct):
    """A run of a job that its worker did not end (it went silent, or stopped)."""

    at: dt.datetime
    worker: str
    # Why the run ended, e.g. "no heartbeat for 31 s".
    reason: str
    progress_done: int
    progress_total: int


class Job(msgspec.Struct):
    id: str
    collection_id: str
    kind: JobKindName
    status: JobStatusName
    error: str | None
    retry_of: str | None
    requested_by: str
    progress_done: int
    progress_total: int
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    heartbeat_at: dt.datetime | None
    # Runs so far, the running one included. A job whose worker was lost is queued again by
    # itself until it has had max_attempts runs; one that fails on its own content is not.
    attempts: int
    max_attempts: int
    # The runs a lost worker ended, oldest first.
    interruptions: list[JobInterruption]
    # Set while a requeued job waits for its backoff: it does not run before then.
    not_before: dt.datetime | None


# Search.


class SearchRequest(msgspec.Struct, forbid_unknown_fields=True):
    query: Query
    limit: Limit | None = None


RelatedLimit = Annotated[
    int,
    Meta(
        ge=1,
        le=MAX_RELATED_LIMIT,
        description=f"Most related doc chunks per code hit (at most {MAX_RELATED_LIMIT});"
        f" absent or null: {DEFAULT_RELATED_LIMIT}.",
    ),
]


class CodeSearchRequest(SearchRequest):
    related_limit: RelatedLimit | None = None


class CollectionStreamRanks(msgspec.Struct):
    # 1-based rank in each retrieval stream; 0: not found by it.
    dense: int
    text: int


class ChunkHit(msgspec.Struct):
    chunk: Chunk
    document_title: str
    score: float
    ranks: CollectionStreamRanks


class StoreFailure(msgspec.Struct):
    store: StoreName
    message: str


class CollectionSearchResult(msgspec.Struct):
    hits: list[ChunkHit]
    # Stores that failed or timed out; the hits are still valid.
    failures: list[StoreFailure]


# Repositories.


class RepositoryCreate(msgspec.Struct, forbid_unknown_fields=True):
    # Stated in the OpenAPI document (openapi.py): exactly one of clone_url and checkout_path.
    schema_extra: ClassVar[dict[str, Any]] = {
        "oneOf": [
            {"required": [given], "properties": {given: {"type": "string"}, other: {"type": "null"}}}
            for given, other in (("clone_url", "checkout_path"), ("checkout_path", "clone_url"))
        ]
    }

    host: RefPart
    owner: RefPart
    name: RefPart
    # An https or ssh URL (COGRAPH_REPODOCS__CLONE_ALLOWED_SCHEMES) of a host outside the internal
    # network (..._CLONE_ALLOWED_HOSTS widens it). Exactly one of clone_url and checkout_path.
    clone_url: Annotated[str, Meta(min_length=1, max_length=2000), stated(pattern=KEY)] | None = None
    # An existing checkout on the repodocs host, indexed where it is (administrators only).
    checkout_path: Annotated[str, Meta(min_length=1, max_length=2000), stated(pattern=KEY)] | None = None
    visibility: RepositoryVisibilityName = "private"
    # Empty: the remote's default branch.
    default_branch: Annotated[str, Meta(max_length=200)] = ""
    # Base URL of links to files on the git host, e.g. https://github.com/o/n/blob/main.
    web_url: Annotated[str, Meta(max_length=2000)] = ""


# A repository's own sync interval: 0 (none) or 60 seconds to a year; the service judges it in its
# own words, which name both bounds.
MAX_SYNC_INTERVAL_SECONDS = 366 * 86_400
SyncIntervalSeconds = Annotated[int, Meta(ge=0, le=MAX_SYNC_INTERVAL_SECONDS)]


class RepositoryUpdate(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Only the fields given change."""

    # Stated in the OpenAPI document (openapi.py): a PATCH changes at least one field, and null
    # leaves a field as it is (the gateway answers "nothing to change" otherwise).
    schema_extra: ClassVar[dict[str, Any]] = {
        "minProperties": 1,
        "anyOf": [
            {"required": [field], "not": {"properties": {field: {"type": "null"}}}}
            for field in ("visibility", "default_branch", "sync_interval_seconds")
        ],
    }

    visibility: RepositoryVisibilityName | None = None
    # The branch to track; "" for the remote's default. A new branch is synced at once. Not for a
    # repository read from a checkout path.
    default_branch: Annotated[str, Meta(max_length=200)] | None = None
    # Seconds between scheduled syncs (60 to a year), 0 for none (synced on request only), or
    # "default" for the deployment's COGRAPH_REPODOCS__SYNC_INTERVAL_SECONDS.
    sync_interval_seconds: SyncIntervalSeconds | Literal["default"] | None = None


class SyncCounters(msgspec.Struct):
    discovered_files: int
    indexed_documents: int
    indexed_chunks: int
    unchanged_documents: int
    deleted_documents: int
    replaced_files: int


class SyncProgress(msgspec.Struct):
    """What a sync has done so far, updated a few times a second while it runs; a total of 0 is
    not known yet."""

    # Files read and hashed (documents and source files), of those discovery listed.
    files_read: int
    files_total: int
    documents_chunked: int
    documents_to_chunk: int
    # Chunk windows and code symbols embedded.
    vectors_embedded: int
    vectors_to_embed: int
    # Seconds each phase took (fetch, discover, chunk, embed, link), the current one so far.
    phase_seconds: dict[str, float]


class SkippedFile(msgspec.Struct):
    path: str
    reason: str


class Sync(msgspec.Struct):
    id: str
    repository_id: str
    status: SyncStatusName
    trigger: SyncTriggerName
    commit_sha: str
    counters: SyncCounters
    code_nodes: int
    mentions: int
    skipped: list[SkippedFile]
    error: str | None
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    # The phase it is in while it runs (fetch, discover, chunk, embed, link), or the one it ended
    # in; null before it began.
    phase: SyncPhaseName | None = None
    progress: SyncProgress | None = None


class Repository(msgspec.Struct):
    id: str
    host: str
    owner: str
    name: str
    # Without the user name and password (token) it may have been registered with.
    clone_url: str | None
    # A directory on the server: shown to administrators only (null for others).
    checkout_path: str | None
    visibility: RepositoryVisibilityName
    owner_subject: str
    group_grants: list[str]
    default_branch: str
    web_url: str
    created_at: dt.datetime | None
    last_sync: Sync | None
    # Seconds between its scheduled syncs, 0 for none; null: the deployment's interval.
    sync_interval_seconds: int | None = None


class RepoDocumentSummary(msgspec.Struct):
    id: str
    repository_id: str
    path: str
    kind: DocumentKindName
    title: str
    slug: str
    content_hash: str
    chunk_count: int
    indexed_at: dt.datetime | None
    # A collection you can read that holds the same bytes: the document is indexed twice.
    warnings: list[str] = msgspec.field(default_factory=list)


class RepoDocument(msgspec.Struct):
    id: str
    repository_id: str
    path: str
    kind: DocumentKindName
    title: str
    slug: str
    content_hash: str
    chunk_count: int
    indexed_at: dt.datetime | None
    content: str
    # As in RepoDocumentSummary.
    warnings: list[str] = msgspec.field(default_factory=list)


class DocsTreeNode(msgspec.Struct):
    title: str
    # Null for a directory without a page of its own.
    slug: str | None
    path: str
    children: list[DocsTreeNode]


class DocsTree(msgspec.Struct):
    roots: list[DocsTreeNode]


class TocEntry(msgspec.Struct):
    level: int
    text: str
    anchor: str


class PageLink(msgspec.Struct):
    slug: str
    title: str


class CodeNode(msgspec.Struct):
    id: str
    repository_id: str
    name: str
    qualified_name: str
    kind: str
    language: str
    path: str
    start_line: int
    end_line: int
    signature: str


class PageMention(msgspec.Struct):
    """How a docs page mentions one of the code nodes it links to, and why it points there."""

    node_id: Annotated[str, Meta(description="The id of the related_code node it is about.")]
    mention: Annotated[
        str, Meta(description="The identifier as the page writes it, without backticks or parentheses.")
    ]
    form: MentionFormName
    reason: Annotated[
        MentionReasonName,
        Meta(
            description="Why the mention links to this node; empty for a link stored before reasons"
            " were, until the repository's next sync links it again."
        ),
    ]


class DocsPage(msgspec.Struct):
    document: RepoDocument
    toc: list[TocEntry]
    siblings: list[PageLink]
    previous: PageLink | None
    next: PageLink | None
    # The code this page's chunks mention.
    related_code: list[CodeNode]
    related_code_mentions: Annotated[
        list[PageMention],
        Meta(
            description="For each related_code node, in its order: the page's most deliberate"
            " mention of it (a reference, then a backticked name, a call, a dotted name; the first"
            " of that form) and why it resolved there."
        ),
    ]


class RepoChunk(msgspec.Struct):
    id: str
    document_id: str
    repository_id: str
    chunk_index: int
    heading_path: list[str]
    content: str
    path: str
    slug: str
    kind: DocumentKindName
    heading_anchor: str
    embedding_model: str | None
    # Where this text lives: the page slug and the heading anchor.
    citation: str


class RelatedDocChunk(msgspec.Struct):
    chunk: RepoChunk
    document_title: str
    # How the chunk names the symbol.
    form: MentionFormName
    # Why the mention links to this symbol.
    reason: MentionReasonName


class CodeStreamRanks(msgspec.Struct):
    dense: int
    text: int
    symbol: int


class CodeResult(msgspec.Struct):
    node: CodeNode
    score: float
    ranks: CodeStreamRanks
    related_repo_doc_chunks: list[RelatedDocChunk]


class DocChunkHit(msgspec.Struct):
    chunk: RepoChunk
    document_title: str
    score: float
    ranks: CodeStreamRanks


class CodeSearchResult(msgspec.Struct):
    hits: list[CodeResult]
    failures: list[StoreFailure]


class CodeDocs(msgspec.Struct):
    node_id: str
    chunks: list[RelatedDocChunk]


class FileRange(msgspec.Struct):
    path: str
    language: str
    start_line: int
    end_line: int
    total_lines: int
    content: str
    commit_sha: str


class RoutePool(msgspec.Struct):
    store: StoreName
    # The pool's best fused score scaled to 0..1, for comparing pools.
    confidence: float


class RouteResult(msgspec.Struct):
    pools: list[RoutePool]
    code: list[CodeResult]
    repo_docs: list[DocChunkHit]
    # Always up to the requested count, even at low confidence.
    collections: list[ChunkHit]
    failures: list[StoreFailure]


WebhookVerdictName = Literal["queued", "ignored"]


class WebhookReceipt(msgspec.Struct):
    """What a push webhook delivery became: 202 queued, 200 ignored (401 and 403 are problems)."""

    verdict: WebhookVerdictName
    # Why, for the git host's delivery log.
    reason: str
    # The registered repositories whose sync was queued.
    queued: int
