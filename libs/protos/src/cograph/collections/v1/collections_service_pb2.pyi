import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Visibility(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VISIBILITY_UNSPECIFIED: _ClassVar[Visibility]
    VISIBILITY_PUBLIC: _ClassVar[Visibility]
    VISIBILITY_PRIVATE: _ClassVar[Visibility]
    VISIBILITY_ADMIN_ONLY: _ClassVar[Visibility]

class DocumentState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOCUMENT_STATE_UNSPECIFIED: _ClassVar[DocumentState]
    DOCUMENT_STATE_CREATED: _ClassVar[DocumentState]
    DOCUMENT_STATE_REPLACED: _ClassVar[DocumentState]
    DOCUMENT_STATE_UNCHANGED: _ClassVar[DocumentState]

class LinkType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LINK_TYPE_UNSPECIFIED: _ClassVar[LinkType]
    LINK_TYPE_ABSOLUTE: _ClassVar[LinkType]
    LINK_TYPE_ANCHOR: _ClassVar[LinkType]
    LINK_TYPE_MARKDOWN: _ClassVar[LinkType]
    LINK_TYPE_RELATIVE: _ClassVar[LinkType]
    LINK_TYPE_WIKI: _ClassVar[LinkType]

class JobKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_KIND_UNSPECIFIED: _ClassVar[JobKind]
    JOB_KIND_UPLOAD: _ClassVar[JobKind]
    JOB_KIND_EMBED: _ClassVar[JobKind]
    JOB_KIND_RESOLVE_LINKS: _ClassVar[JobKind]

class JobStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATUS_UNSPECIFIED: _ClassVar[JobStatus]
    JOB_STATUS_QUEUED: _ClassVar[JobStatus]
    JOB_STATUS_RUNNING: _ClassVar[JobStatus]
    JOB_STATUS_SUCCESS: _ClassVar[JobStatus]
    JOB_STATUS_ERROR: _ClassVar[JobStatus]
VISIBILITY_UNSPECIFIED: Visibility
VISIBILITY_PUBLIC: Visibility
VISIBILITY_PRIVATE: Visibility
VISIBILITY_ADMIN_ONLY: Visibility
DOCUMENT_STATE_UNSPECIFIED: DocumentState
DOCUMENT_STATE_CREATED: DocumentState
DOCUMENT_STATE_REPLACED: DocumentState
DOCUMENT_STATE_UNCHANGED: DocumentState
LINK_TYPE_UNSPECIFIED: LinkType
LINK_TYPE_ABSOLUTE: LinkType
LINK_TYPE_ANCHOR: LinkType
LINK_TYPE_MARKDOWN: LinkType
LINK_TYPE_RELATIVE: LinkType
LINK_TYPE_WIKI: LinkType
JOB_KIND_UNSPECIFIED: JobKind
JOB_KIND_UPLOAD: JobKind
JOB_KIND_EMBED: JobKind
JOB_KIND_RESOLVE_LINKS: JobKind
JOB_STATUS_UNSPECIFIED: JobStatus
JOB_STATUS_QUEUED: JobStatus
JOB_STATUS_RUNNING: JobStatus
JOB_STATUS_SUCCESS: JobStatus
JOB_STATUS_ERROR: JobStatus

class Collection(_message.Message):
    __slots__ = ("id", "name", "description", "visibility", "owner", "group_grants", "document_count", "chunk_count", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    GROUP_GRANTS_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    description: str
    visibility: Visibility
    owner: str
    group_grants: _containers.RepeatedScalarFieldContainer[str]
    document_count: int
    chunk_count: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., owner: _Optional[str] = ..., group_grants: _Optional[_Iterable[str]] = ..., document_count: _Optional[int] = ..., chunk_count: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CollectionAccess(_message.Message):
    __slots__ = ("collection_id", "visibility", "owner", "group_grants")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    GROUP_GRANTS_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    visibility: Visibility
    owner: str
    group_grants: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, collection_id: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., owner: _Optional[str] = ..., group_grants: _Optional[_Iterable[str]] = ...) -> None: ...

class Page(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class CreateCollectionRequest(_message.Message):
    __slots__ = ("name", "description", "visibility", "owner")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    visibility: Visibility
    owner: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., owner: _Optional[str] = ...) -> None: ...

class CreateCollectionResponse(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: Collection
    def __init__(self, collection: _Optional[_Union[Collection, _Mapping]] = ...) -> None: ...

class GetCollectionRequest(_message.Message):
    __slots__ = ("collection_id",)
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    def __init__(self, collection_id: _Optional[str] = ...) -> None: ...

class GetCollectionResponse(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: Collection
    def __init__(self, collection: _Optional[_Union[Collection, _Mapping]] = ...) -> None: ...

class ListCollectionsRequest(_message.Message):
    __slots__ = ("collection_ids", "query", "page")
    COLLECTION_IDS_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    collection_ids: _containers.RepeatedScalarFieldContainer[str]
    query: str
    page: Page
    def __init__(self, collection_ids: _Optional[_Iterable[str]] = ..., query: _Optional[str] = ..., page: _Optional[_Union[Page, _Mapping]] = ...) -> None: ...

class ListCollectionsResponse(_message.Message):
    __slots__ = ("collections", "next_page_token")
    COLLECTIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    collections: _containers.RepeatedCompositeFieldContainer[Collection]
    next_page_token: str
    def __init__(self, collections: _Optional[_Iterable[_Union[Collection, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateCollectionRequest(_message.Message):
    __slots__ = ("collection_id", "name", "description", "visibility")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    name: str
    description: str
    visibility: Visibility
    def __init__(self, collection_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ...) -> None: ...

class UpdateCollectionResponse(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: Collection
    def __init__(self, collection: _Optional[_Union[Collection, _Mapping]] = ...) -> None: ...

class DeleteCollectionRequest(_message.Message):
    __slots__ = ("collection_id",)
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    def __init__(self, collection_id: _Optional[str] = ...) -> None: ...

class DeleteCollectionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListCollectionAccessRequest(_message.Message):
    __slots__ = ("collection_ids",)
    COLLECTION_IDS_FIELD_NUMBER: _ClassVar[int]
    collection_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, collection_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ListCollectionAccessResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[CollectionAccess]
    def __init__(self, entries: _Optional[_Iterable[_Union[CollectionAccess, _Mapping]]] = ...) -> None: ...

class GetCollectionAccessRequest(_message.Message):
    __slots__ = ("collection_id",)
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    def __init__(self, collection_id: _Optional[str] = ...) -> None: ...

class GetCollectionAccessResponse(_message.Message):
    __slots__ = ("access",)
    ACCESS_FIELD_NUMBER: _ClassVar[int]
    access: CollectionAccess
    def __init__(self, access: _Optional[_Union[CollectionAccess, _Mapping]] = ...) -> None: ...

class AddGrantRequest(_message.Message):
    __slots__ = ("collection_id", "group")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    group: str
    def __init__(self, collection_id: _Optional[str] = ..., group: _Optional[str] = ...) -> None: ...

class AddGrantResponse(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: Collection
    def __init__(self, collection: _Optional[_Union[Collection, _Mapping]] = ...) -> None: ...

class RemoveGrantRequest(_message.Message):
    __slots__ = ("collection_id", "group")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    group: str
    def __init__(self, collection_id: _Optional[str] = ..., group: _Optional[str] = ...) -> None: ...

class RemoveGrantResponse(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: Collection
    def __init__(self, collection: _Optional[_Union[Collection, _Mapping]] = ...) -> None: ...

class DocumentContent(_message.Message):
    __slots__ = ("source_key", "content")
    SOURCE_KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    source_key: str
    content: bytes
    def __init__(self, source_key: _Optional[str] = ..., content: _Optional[bytes] = ...) -> None: ...

class DocumentError(_message.Message):
    __slots__ = ("reason", "message")
    class Reason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        REASON_UNSPECIFIED: _ClassVar[DocumentError.Reason]
        REASON_INVALID_SOURCE_KEY: _ClassVar[DocumentError.Reason]
        REASON_NOT_UTF8: _ClassVar[DocumentError.Reason]
        REASON_BINARY: _ClassVar[DocumentError.Reason]
        REASON_TOO_LARGE: _ClassVar[DocumentError.Reason]
        REASON_DUPLICATE_IN_BATCH: _ClassVar[DocumentError.Reason]
    REASON_UNSPECIFIED: DocumentError.Reason
    REASON_INVALID_SOURCE_KEY: DocumentError.Reason
    REASON_NOT_UTF8: DocumentError.Reason
    REASON_BINARY: DocumentError.Reason
    REASON_TOO_LARGE: DocumentError.Reason
    REASON_DUPLICATE_IN_BATCH: DocumentError.Reason
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    reason: DocumentError.Reason
    message: str
    def __init__(self, reason: _Optional[_Union[DocumentError.Reason, str]] = ..., message: _Optional[str] = ...) -> None: ...

class DocumentResult(_message.Message):
    __slots__ = ("source_key", "document_id", "state", "error", "warnings")
    SOURCE_KEY_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    source_key: str
    document_id: str
    state: DocumentState
    error: DocumentError
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, source_key: _Optional[str] = ..., document_id: _Optional[str] = ..., state: _Optional[_Union[DocumentState, str]] = ..., error: _Optional[_Union[DocumentError, _Mapping]] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class UploadCounts(_message.Message):
    __slots__ = ("created", "replaced", "unchanged", "failed")
    CREATED_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    created: int
    replaced: int
    unchanged: int
    failed: int
    def __init__(self, created: _Optional[int] = ..., replaced: _Optional[int] = ..., unchanged: _Optional[int] = ..., failed: _Optional[int] = ...) -> None: ...

class UploadDocumentRequest(_message.Message):
    __slots__ = ("collection_id", "document", "requested_by")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    document: DocumentContent
    requested_by: str
    def __init__(self, collection_id: _Optional[str] = ..., document: _Optional[_Union[DocumentContent, _Mapping]] = ..., requested_by: _Optional[str] = ...) -> None: ...

class UploadDocumentResponse(_message.Message):
    __slots__ = ("result", "job_id")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    result: DocumentResult
    job_id: str
    def __init__(self, result: _Optional[_Union[DocumentResult, _Mapping]] = ..., job_id: _Optional[str] = ...) -> None: ...

class UploadDocumentsRequest(_message.Message):
    __slots__ = ("collection_id", "documents", "requested_by")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    documents: _containers.RepeatedCompositeFieldContainer[DocumentContent]
    requested_by: str
    def __init__(self, collection_id: _Optional[str] = ..., documents: _Optional[_Iterable[_Union[DocumentContent, _Mapping]]] = ..., requested_by: _Optional[str] = ...) -> None: ...

class UploadDocumentsResponse(_message.Message):
    __slots__ = ("results", "counts", "job_id")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[DocumentResult]
    counts: UploadCounts
    job_id: str
    def __init__(self, results: _Optional[_Iterable[_Union[DocumentResult, _Mapping]]] = ..., counts: _Optional[_Union[UploadCounts, _Mapping]] = ..., job_id: _Optional[str] = ...) -> None: ...

class Heading(_message.Message):
    __slots__ = ("level", "text", "anchor", "line")
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    level: int
    text: str
    anchor: str
    line: int
    def __init__(self, level: _Optional[int] = ..., text: _Optional[str] = ..., anchor: _Optional[str] = ..., line: _Optional[int] = ...) -> None: ...

class CodeBlock(_message.Message):
    __slots__ = ("language", "content", "start_line", "end_line")
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    language: str
    content: str
    start_line: int
    end_line: int
    def __init__(self, language: _Optional[str] = ..., content: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ...) -> None: ...

class TableRow(_message.Message):
    __slots__ = ("cells",)
    CELLS_FIELD_NUMBER: _ClassVar[int]
    cells: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cells: _Optional[_Iterable[str]] = ...) -> None: ...

class Table(_message.Message):
    __slots__ = ("header", "rows", "start_line", "end_line")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    header: _containers.RepeatedScalarFieldContainer[str]
    rows: _containers.RepeatedCompositeFieldContainer[TableRow]
    start_line: int
    end_line: int
    def __init__(self, header: _Optional[_Iterable[str]] = ..., rows: _Optional[_Iterable[_Union[TableRow, _Mapping]]] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ...) -> None: ...

class Link(_message.Message):
    __slots__ = ("text", "href", "line", "link_type", "target_document_id", "anchor")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    HREF_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    LINK_TYPE_FIELD_NUMBER: _ClassVar[int]
    TARGET_DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_FIELD_NUMBER: _ClassVar[int]
    text: str
    href: str
    line: int
    link_type: LinkType
    target_document_id: str
    anchor: str
    def __init__(self, text: _Optional[str] = ..., href: _Optional[str] = ..., line: _Optional[int] = ..., link_type: _Optional[_Union[LinkType, str]] = ..., target_document_id: _Optional[str] = ..., anchor: _Optional[str] = ...) -> None: ...

class DocumentMetadata(_message.Message):
    __slots__ = ("frontmatter_json", "title", "heading_tree", "code_blocks", "tables", "links", "word_count", "line_count", "warnings")
    FRONTMATTER_JSON_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    HEADING_TREE_FIELD_NUMBER: _ClassVar[int]
    CODE_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    LINKS_FIELD_NUMBER: _ClassVar[int]
    WORD_COUNT_FIELD_NUMBER: _ClassVar[int]
    LINE_COUNT_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    frontmatter_json: str
    title: str
    heading_tree: _containers.RepeatedCompositeFieldContainer[Heading]
    code_blocks: _containers.RepeatedCompositeFieldContainer[CodeBlock]
    tables: _containers.RepeatedCompositeFieldContainer[Table]
    links: _containers.RepeatedCompositeFieldContainer[Link]
    word_count: int
    line_count: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, frontmatter_json: _Optional[str] = ..., title: _Optional[str] = ..., heading_tree: _Optional[_Iterable[_Union[Heading, _Mapping]]] = ..., code_blocks: _Optional[_Iterable[_Union[CodeBlock, _Mapping]]] = ..., tables: _Optional[_Iterable[_Union[Table, _Mapping]]] = ..., links: _Optional[_Iterable[_Union[Link, _Mapping]]] = ..., word_count: _Optional[int] = ..., line_count: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class DocumentSummary(_message.Message):
    __slots__ = ("id", "collection_id", "source_key", "title", "content_hash", "size_bytes", "chunk_count", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KEY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    collection_id: str
    source_key: str
    title: str
    content_hash: str
    size_bytes: int
    chunk_count: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., collection_id: _Optional[str] = ..., source_key: _Optional[str] = ..., title: _Optional[str] = ..., content_hash: _Optional[str] = ..., size_bytes: _Optional[int] = ..., chunk_count: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Document(_message.Message):
    __slots__ = ("summary", "content", "metadata")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    summary: DocumentSummary
    content: str
    metadata: DocumentMetadata
    def __init__(self, summary: _Optional[_Union[DocumentSummary, _Mapping]] = ..., content: _Optional[str] = ..., metadata: _Optional[_Union[DocumentMetadata, _Mapping]] = ...) -> None: ...

class GetDocumentRequest(_message.Message):
    __slots__ = ("collection_id", "document_id")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    document_id: str
    def __init__(self, collection_id: _Optional[str] = ..., document_id: _Optional[str] = ...) -> None: ...

class GetDocumentResponse(_message.Message):
    __slots__ = ("document",)
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    document: Document
    def __init__(self, document: _Optional[_Union[Document, _Mapping]] = ...) -> None: ...

class ListDocumentsRequest(_message.Message):
    __slots__ = ("collection_id", "page")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    page: Page
    def __init__(self, collection_id: _Optional[str] = ..., page: _Optional[_Union[Page, _Mapping]] = ...) -> None: ...

class ListDocumentsResponse(_message.Message):
    __slots__ = ("documents", "next_page_token")
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[DocumentSummary]
    next_page_token: str
    def __init__(self, documents: _Optional[_Iterable[_Union[DocumentSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteDocumentRequest(_message.Message):
    __slots__ = ("collection_id", "document_id", "requested_by")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    document_id: str
    requested_by: str
    def __init__(self, collection_id: _Optional[str] = ..., document_id: _Optional[str] = ..., requested_by: _Optional[str] = ...) -> None: ...

class DeleteDocumentResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ChunkerParams(_message.Message):
    __slots__ = ("max_chars", "min_chars", "max_chunks")
    MAX_CHARS_FIELD_NUMBER: _ClassVar[int]
    MIN_CHARS_FIELD_NUMBER: _ClassVar[int]
    MAX_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    max_chars: int
    min_chars: int
    max_chunks: int
    def __init__(self, max_chars: _Optional[int] = ..., min_chars: _Optional[int] = ..., max_chunks: _Optional[int] = ...) -> None: ...

class Chunk(_message.Message):
    __slots__ = ("id", "document_id", "collection_id", "chunk_index", "heading_path", "heading_level", "section_anchor", "content", "embedding_model", "chunker", "source_key", "start_line", "end_line")
    ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_INDEX_FIELD_NUMBER: _ClassVar[int]
    HEADING_PATH_FIELD_NUMBER: _ClassVar[int]
    HEADING_LEVEL_FIELD_NUMBER: _ClassVar[int]
    SECTION_ANCHOR_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    CHUNKER_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KEY_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    id: str
    document_id: str
    collection_id: str
    chunk_index: int
    heading_path: _containers.RepeatedScalarFieldContainer[str]
    heading_level: int
    section_anchor: str
    content: str
    embedding_model: str
    chunker: ChunkerParams
    source_key: str
    start_line: int
    end_line: int
    def __init__(self, id: _Optional[str] = ..., document_id: _Optional[str] = ..., collection_id: _Optional[str] = ..., chunk_index: _Optional[int] = ..., heading_path: _Optional[_Iterable[str]] = ..., heading_level: _Optional[int] = ..., section_anchor: _Optional[str] = ..., content: _Optional[str] = ..., embedding_model: _Optional[str] = ..., chunker: _Optional[_Union[ChunkerParams, _Mapping]] = ..., source_key: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ...) -> None: ...

class ListChunksRequest(_message.Message):
    __slots__ = ("collection_id", "document_id", "page")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    document_id: str
    page: Page
    def __init__(self, collection_id: _Optional[str] = ..., document_id: _Optional[str] = ..., page: _Optional[_Union[Page, _Mapping]] = ...) -> None: ...

class ListChunksResponse(_message.Message):
    __slots__ = ("chunks", "next_page_token")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[Chunk]
    next_page_token: str
    def __init__(self, chunks: _Optional[_Iterable[_Union[Chunk, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetChunkRequest(_message.Message):
    __slots__ = ("collection_id", "chunk_id")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    chunk_id: str
    def __init__(self, collection_id: _Optional[str] = ..., chunk_id: _Optional[str] = ...) -> None: ...

class GetChunkResponse(_message.Message):
    __slots__ = ("chunk",)
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    chunk: Chunk
    def __init__(self, chunk: _Optional[_Union[Chunk, _Mapping]] = ...) -> None: ...

class StreamRanks(_message.Message):
    __slots__ = ("dense", "text")
    DENSE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    dense: int
    text: int
    def __init__(self, dense: _Optional[int] = ..., text: _Optional[int] = ...) -> None: ...

class ChunkHit(_message.Message):
    __slots__ = ("chunk", "document_title", "score", "ranks")
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_TITLE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    chunk: Chunk
    document_title: str
    score: float
    ranks: StreamRanks
    def __init__(self, chunk: _Optional[_Union[Chunk, _Mapping]] = ..., document_title: _Optional[str] = ..., score: _Optional[float] = ..., ranks: _Optional[_Union[StreamRanks, _Mapping]] = ...) -> None: ...

class FindDocumentsByContentRequest(_message.Message):
    __slots__ = ("content_hashes", "collection_ids", "every_collection")
    CONTENT_HASHES_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_IDS_FIELD_NUMBER: _ClassVar[int]
    EVERY_COLLECTION_FIELD_NUMBER: _ClassVar[int]
    content_hashes: _containers.RepeatedScalarFieldContainer[str]
    collection_ids: _containers.RepeatedScalarFieldContainer[str]
    every_collection: bool
    def __init__(self, content_hashes: _Optional[_Iterable[str]] = ..., collection_ids: _Optional[_Iterable[str]] = ..., every_collection: _Optional[bool] = ...) -> None: ...

class ContentMatch(_message.Message):
    __slots__ = ("content_hash", "collection_id", "collection_name", "document_id", "source_key")
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_NAME_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KEY_FIELD_NUMBER: _ClassVar[int]
    content_hash: str
    collection_id: str
    collection_name: str
    document_id: str
    source_key: str
    def __init__(self, content_hash: _Optional[str] = ..., collection_id: _Optional[str] = ..., collection_name: _Optional[str] = ..., document_id: _Optional[str] = ..., source_key: _Optional[str] = ...) -> None: ...

class FindDocumentsByContentResponse(_message.Message):
    __slots__ = ("matches",)
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[ContentMatch]
    def __init__(self, matches: _Optional[_Iterable[_Union[ContentMatch, _Mapping]]] = ...) -> None: ...

class SearchChunksRequest(_message.Message):
    __slots__ = ("collection_ids", "query", "query_embedding", "embedding_model", "limit", "dense_weight", "text_weight", "rrf_k", "fill_to_limit")
    COLLECTION_IDS_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    QUERY_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    DENSE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    TEXT_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    FILL_TO_LIMIT_FIELD_NUMBER: _ClassVar[int]
    collection_ids: _containers.RepeatedScalarFieldContainer[str]
    query: str
    query_embedding: _containers.RepeatedScalarFieldContainer[float]
    embedding_model: str
    limit: int
    dense_weight: float
    text_weight: float
    rrf_k: float
    fill_to_limit: bool
    def __init__(self, collection_ids: _Optional[_Iterable[str]] = ..., query: _Optional[str] = ..., query_embedding: _Optional[_Iterable[float]] = ..., embedding_model: _Optional[str] = ..., limit: _Optional[int] = ..., dense_weight: _Optional[float] = ..., text_weight: _Optional[float] = ..., rrf_k: _Optional[float] = ..., fill_to_limit: _Optional[bool] = ...) -> None: ...

class SearchChunksResponse(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[ChunkHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[ChunkHit, _Mapping]]] = ...) -> None: ...

class GetEmbedStatusRequest(_message.Message):
    __slots__ = ("collection_id",)
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    def __init__(self, collection_id: _Optional[str] = ...) -> None: ...

class GetEmbedStatusResponse(_message.Message):
    __slots__ = ("total_chunks", "embedded_chunks", "pending_chunks", "stale_chunks", "model", "outdated_chunker_chunks")
    TOTAL_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    PENDING_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    STALE_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    OUTDATED_CHUNKER_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    total_chunks: int
    embedded_chunks: int
    pending_chunks: int
    stale_chunks: int
    model: str
    outdated_chunker_chunks: int
    def __init__(self, total_chunks: _Optional[int] = ..., embedded_chunks: _Optional[int] = ..., pending_chunks: _Optional[int] = ..., stale_chunks: _Optional[int] = ..., model: _Optional[str] = ..., outdated_chunker_chunks: _Optional[int] = ...) -> None: ...

class ReEmbedCollectionRequest(_message.Message):
    __slots__ = ("collection_id", "requested_by")
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    collection_id: str
    requested_by: str
    def __init__(self, collection_id: _Optional[str] = ..., requested_by: _Optional[str] = ...) -> None: ...

class ReEmbedCollectionResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: Job
    def __init__(self, job: _Optional[_Union[Job, _Mapping]] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("id", "collection_id", "kind", "status", "error", "retry_of", "requested_by", "progress_done", "progress_total", "created_at", "started_at", "finished_at", "heartbeat_at", "attempts", "max_attempts", "interruptions", "not_before")
    ID_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RETRY_OF_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_DONE_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_AT_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    MAX_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    INTERRUPTIONS_FIELD_NUMBER: _ClassVar[int]
    NOT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    id: str
    collection_id: str
    kind: JobKind
    status: JobStatus
    error: str
    retry_of: str
    requested_by: str
    progress_done: int
    progress_total: int
    created_at: _timestamp_pb2.Timestamp
    started_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    heartbeat_at: _timestamp_pb2.Timestamp
    attempts: int
    max_attempts: int
    interruptions: _containers.RepeatedCompositeFieldContainer[JobInterruption]
    not_before: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., collection_id: _Optional[str] = ..., kind: _Optional[_Union[JobKind, str]] = ..., status: _Optional[_Union[JobStatus, str]] = ..., error: _Optional[str] = ..., retry_of: _Optional[str] = ..., requested_by: _Optional[str] = ..., progress_done: _Optional[int] = ..., progress_total: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., heartbeat_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attempts: _Optional[int] = ..., max_attempts: _Optional[int] = ..., interruptions: _Optional[_Iterable[_Union[JobInterruption, _Mapping]]] = ..., not_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class JobInterruption(_message.Message):
    __slots__ = ("at", "worker", "reason", "progress_done", "progress_total")
    AT_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_DONE_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    at: _timestamp_pb2.Timestamp
    worker: str
    reason: str
    progress_done: int
    progress_total: int
    def __init__(self, at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., worker: _Optional[str] = ..., reason: _Optional[str] = ..., progress_done: _Optional[int] = ..., progress_total: _Optional[int] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("collection_ids", "status", "kind", "page")
    COLLECTION_IDS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    collection_ids: _containers.RepeatedScalarFieldContainer[str]
    status: JobStatus
    kind: JobKind
    page: Page
    def __init__(self, collection_ids: _Optional[_Iterable[str]] = ..., status: _Optional[_Union[JobStatus, str]] = ..., kind: _Optional[_Union[JobKind, str]] = ..., page: _Optional[_Union[Page, _Mapping]] = ...) -> None: ...

class ListJobsResponse(_message.Message):
    __slots__ = ("jobs", "next_page_token")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[Job]
    next_page_token: str
    def __init__(self, jobs: _Optional[_Iterable[_Union[Job, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class GetJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: Job
    def __init__(self, job: _Optional[_Union[Job, _Mapping]] = ...) -> None: ...

class RetryJobRequest(_message.Message):
    __slots__ = ("job_id", "requested_by")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    requested_by: str
    def __init__(self, job_id: _Optional[str] = ..., requested_by: _Optional[str] = ...) -> None: ...

class RetryJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: Job
    def __init__(self, job: _Optional[_Union[Job, _Mapping]] = ...) -> None: ...
