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

class DocumentKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOCUMENT_KIND_UNSPECIFIED: _ClassVar[DocumentKind]
    DOCUMENT_KIND_REPO_DOC: _ClassVar[DocumentKind]
    DOCUMENT_KIND_WORKFLOW: _ClassVar[DocumentKind]
    DOCUMENT_KIND_EXAMPLE: _ClassVar[DocumentKind]
    DOCUMENT_KIND_TEST: _ClassVar[DocumentKind]
    DOCUMENT_KIND_CONFIG: _ClassVar[DocumentKind]

class SyncStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SYNC_STATUS_UNSPECIFIED: _ClassVar[SyncStatus]
    SYNC_STATUS_QUEUED: _ClassVar[SyncStatus]
    SYNC_STATUS_RUNNING: _ClassVar[SyncStatus]
    SYNC_STATUS_SUCCESS: _ClassVar[SyncStatus]
    SYNC_STATUS_ERROR: _ClassVar[SyncStatus]

class SyncPhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SYNC_PHASE_UNSPECIFIED: _ClassVar[SyncPhase]
    SYNC_PHASE_FETCH: _ClassVar[SyncPhase]
    SYNC_PHASE_DISCOVER: _ClassVar[SyncPhase]
    SYNC_PHASE_CHUNK: _ClassVar[SyncPhase]
    SYNC_PHASE_EMBED: _ClassVar[SyncPhase]
    SYNC_PHASE_LINK: _ClassVar[SyncPhase]

class SyncTrigger(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SYNC_TRIGGER_UNSPECIFIED: _ClassVar[SyncTrigger]
    SYNC_TRIGGER_MANUAL: _ClassVar[SyncTrigger]
    SYNC_TRIGGER_SCHEDULE: _ClassVar[SyncTrigger]
    SYNC_TRIGGER_REGISTRATION: _ClassVar[SyncTrigger]
    SYNC_TRIGGER_WEBHOOK: _ClassVar[SyncTrigger]

class WebhookProvider(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WEBHOOK_PROVIDER_UNSPECIFIED: _ClassVar[WebhookProvider]
    WEBHOOK_PROVIDER_GITHUB: _ClassVar[WebhookProvider]
    WEBHOOK_PROVIDER_GITLAB: _ClassVar[WebhookProvider]
    WEBHOOK_PROVIDER_GITEA: _ClassVar[WebhookProvider]

class WebhookVerdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WEBHOOK_VERDICT_UNSPECIFIED: _ClassVar[WebhookVerdict]
    WEBHOOK_VERDICT_QUEUED: _ClassVar[WebhookVerdict]
    WEBHOOK_VERDICT_IGNORED: _ClassVar[WebhookVerdict]
    WEBHOOK_VERDICT_UNAUTHENTICATED: _ClassVar[WebhookVerdict]
    WEBHOOK_VERDICT_FORBIDDEN: _ClassVar[WebhookVerdict]

class MentionForm(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MENTION_FORM_UNSPECIFIED: _ClassVar[MentionForm]
    MENTION_FORM_BACKTICK: _ClassVar[MentionForm]
    MENTION_FORM_DOTTED: _ClassVar[MentionForm]
    MENTION_FORM_CALL: _ClassVar[MentionForm]
    MENTION_FORM_REFERENCE: _ClassVar[MentionForm]

class MentionReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MENTION_REASON_UNSPECIFIED: _ClassVar[MentionReason]
    MENTION_REASON_EXPLICIT_TARGET: _ClassVar[MentionReason]
    MENTION_REASON_DOCUMENT_IMPORT: _ClassVar[MentionReason]
    MENTION_REASON_HEADING_CONTEXT: _ClassVar[MentionReason]
    MENTION_REASON_TEXT_CONTEXT: _ClassVar[MentionReason]
    MENTION_REASON_QUALIFIED_NAME: _ClassVar[MentionReason]
    MENTION_REASON_UNIQUE_PUBLIC: _ClassVar[MentionReason]
    MENTION_REASON_SAME_FILE: _ClassVar[MentionReason]
    MENTION_REASON_NAME_MATCH: _ClassVar[MentionReason]
    MENTION_REASON_NEAREST_DEFINITION: _ClassVar[MentionReason]

class Language(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LANGUAGE_UNSPECIFIED: _ClassVar[Language]
    LANGUAGE_PYTHON: _ClassVar[Language]
    LANGUAGE_GO: _ClassVar[Language]
    LANGUAGE_TYPESCRIPT: _ClassVar[Language]
    LANGUAGE_JAVASCRIPT: _ClassVar[Language]

class CodeNodeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CODE_NODE_KIND_UNSPECIFIED: _ClassVar[CodeNodeKind]
    CODE_NODE_KIND_FUNCTION: _ClassVar[CodeNodeKind]
    CODE_NODE_KIND_CLASS: _ClassVar[CodeNodeKind]
    CODE_NODE_KIND_METHOD: _ClassVar[CodeNodeKind]
    CODE_NODE_KIND_TYPE: _ClassVar[CodeNodeKind]
    CODE_NODE_KIND_INTERFACE: _ClassVar[CodeNodeKind]
    CODE_NODE_KIND_CONSTANT: _ClassVar[CodeNodeKind]
    CODE_NODE_KIND_MODULE: _ClassVar[CodeNodeKind]
    CODE_NODE_KIND_VARIABLE: _ClassVar[CodeNodeKind]
    CODE_NODE_KIND_ATTRIBUTE: _ClassVar[CodeNodeKind]
    CODE_NODE_KIND_PROPERTY: _ClassVar[CodeNodeKind]
VISIBILITY_UNSPECIFIED: Visibility
VISIBILITY_PUBLIC: Visibility
VISIBILITY_PRIVATE: Visibility
DOCUMENT_KIND_UNSPECIFIED: DocumentKind
DOCUMENT_KIND_REPO_DOC: DocumentKind
DOCUMENT_KIND_WORKFLOW: DocumentKind
DOCUMENT_KIND_EXAMPLE: DocumentKind
DOCUMENT_KIND_TEST: DocumentKind
DOCUMENT_KIND_CONFIG: DocumentKind
SYNC_STATUS_UNSPECIFIED: SyncStatus
SYNC_STATUS_QUEUED: SyncStatus
SYNC_STATUS_RUNNING: SyncStatus
SYNC_STATUS_SUCCESS: SyncStatus
SYNC_STATUS_ERROR: SyncStatus
SYNC_PHASE_UNSPECIFIED: SyncPhase
SYNC_PHASE_FETCH: SyncPhase
SYNC_PHASE_DISCOVER: SyncPhase
SYNC_PHASE_CHUNK: SyncPhase
SYNC_PHASE_EMBED: SyncPhase
SYNC_PHASE_LINK: SyncPhase
SYNC_TRIGGER_UNSPECIFIED: SyncTrigger
SYNC_TRIGGER_MANUAL: SyncTrigger
SYNC_TRIGGER_SCHEDULE: SyncTrigger
SYNC_TRIGGER_REGISTRATION: SyncTrigger
SYNC_TRIGGER_WEBHOOK: SyncTrigger
WEBHOOK_PROVIDER_UNSPECIFIED: WebhookProvider
WEBHOOK_PROVIDER_GITHUB: WebhookProvider
WEBHOOK_PROVIDER_GITLAB: WebhookProvider
WEBHOOK_PROVIDER_GITEA: WebhookProvider
WEBHOOK_VERDICT_UNSPECIFIED: WebhookVerdict
WEBHOOK_VERDICT_QUEUED: WebhookVerdict
WEBHOOK_VERDICT_IGNORED: WebhookVerdict
WEBHOOK_VERDICT_UNAUTHENTICATED: WebhookVerdict
WEBHOOK_VERDICT_FORBIDDEN: WebhookVerdict
MENTION_FORM_UNSPECIFIED: MentionForm
MENTION_FORM_BACKTICK: MentionForm
MENTION_FORM_DOTTED: MentionForm
MENTION_FORM_CALL: MentionForm
MENTION_FORM_REFERENCE: MentionForm
MENTION_REASON_UNSPECIFIED: MentionReason
MENTION_REASON_EXPLICIT_TARGET: MentionReason
MENTION_REASON_DOCUMENT_IMPORT: MentionReason
MENTION_REASON_HEADING_CONTEXT: MentionReason
MENTION_REASON_TEXT_CONTEXT: MentionReason
MENTION_REASON_QUALIFIED_NAME: MentionReason
MENTION_REASON_UNIQUE_PUBLIC: MentionReason
MENTION_REASON_SAME_FILE: MentionReason
MENTION_REASON_NAME_MATCH: MentionReason
MENTION_REASON_NEAREST_DEFINITION: MentionReason
LANGUAGE_UNSPECIFIED: Language
LANGUAGE_PYTHON: Language
LANGUAGE_GO: Language
LANGUAGE_TYPESCRIPT: Language
LANGUAGE_JAVASCRIPT: Language
CODE_NODE_KIND_UNSPECIFIED: CodeNodeKind
CODE_NODE_KIND_FUNCTION: CodeNodeKind
CODE_NODE_KIND_CLASS: CodeNodeKind
CODE_NODE_KIND_METHOD: CodeNodeKind
CODE_NODE_KIND_TYPE: CodeNodeKind
CODE_NODE_KIND_INTERFACE: CodeNodeKind
CODE_NODE_KIND_CONSTANT: CodeNodeKind
CODE_NODE_KIND_MODULE: CodeNodeKind
CODE_NODE_KIND_VARIABLE: CodeNodeKind
CODE_NODE_KIND_ATTRIBUTE: CodeNodeKind
CODE_NODE_KIND_PROPERTY: CodeNodeKind

class RepositoryRef(_message.Message):
    __slots__ = ("host", "owner", "name")
    HOST_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    host: str
    owner: str
    name: str
    def __init__(self, host: _Optional[str] = ..., owner: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class Repository(_message.Message):
    __slots__ = ("id", "ref", "clone_url", "checkout_path", "visibility", "owner_subject", "group_grants", "default_branch", "web_url", "created_at", "last_sync", "sync_interval_seconds")
    ID_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    CLONE_URL_FIELD_NUMBER: _ClassVar[int]
    CHECKOUT_PATH_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    OWNER_SUBJECT_FIELD_NUMBER: _ClassVar[int]
    GROUP_GRANTS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_BRANCH_FIELD_NUMBER: _ClassVar[int]
    WEB_URL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_SYNC_FIELD_NUMBER: _ClassVar[int]
    SYNC_INTERVAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    ref: RepositoryRef
    clone_url: str
    checkout_path: str
    visibility: Visibility
    owner_subject: str
    group_grants: _containers.RepeatedScalarFieldContainer[str]
    default_branch: str
    web_url: str
    created_at: _timestamp_pb2.Timestamp
    last_sync: Sync
    sync_interval_seconds: int
    def __init__(self, id: _Optional[str] = ..., ref: _Optional[_Union[RepositoryRef, _Mapping]] = ..., clone_url: _Optional[str] = ..., checkout_path: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., owner_subject: _Optional[str] = ..., group_grants: _Optional[_Iterable[str]] = ..., default_branch: _Optional[str] = ..., web_url: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_sync: _Optional[_Union[Sync, _Mapping]] = ..., sync_interval_seconds: _Optional[int] = ...) -> None: ...

class RepositoryAccess(_message.Message):
    __slots__ = ("repository_id", "ref", "visibility", "owner_subject", "group_grants")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    OWNER_SUBJECT_FIELD_NUMBER: _ClassVar[int]
    GROUP_GRANTS_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    ref: RepositoryRef
    visibility: Visibility
    owner_subject: str
    group_grants: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, repository_id: _Optional[str] = ..., ref: _Optional[_Union[RepositoryRef, _Mapping]] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., owner_subject: _Optional[str] = ..., group_grants: _Optional[_Iterable[str]] = ...) -> None: ...

class Page(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class RegisterRepositoryRequest(_message.Message):
    __slots__ = ("ref", "clone_url", "checkout_path", "visibility", "owner_subject", "default_branch", "web_url")
    REF_FIELD_NUMBER: _ClassVar[int]
    CLONE_URL_FIELD_NUMBER: _ClassVar[int]
    CHECKOUT_PATH_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    OWNER_SUBJECT_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_BRANCH_FIELD_NUMBER: _ClassVar[int]
    WEB_URL_FIELD_NUMBER: _ClassVar[int]
    ref: RepositoryRef
    clone_url: str
    checkout_path: str
    visibility: Visibility
    owner_subject: str
    default_branch: str
    web_url: str
    def __init__(self, ref: _Optional[_Union[RepositoryRef, _Mapping]] = ..., clone_url: _Optional[str] = ..., checkout_path: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., owner_subject: _Optional[str] = ..., default_branch: _Optional[str] = ..., web_url: _Optional[str] = ...) -> None: ...

class RegisterRepositoryResponse(_message.Message):
    __slots__ = ("repository",)
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    repository: Repository
    def __init__(self, repository: _Optional[_Union[Repository, _Mapping]] = ...) -> None: ...

class GetRepositoryRequest(_message.Message):
    __slots__ = ("repository_id", "ref")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    ref: RepositoryRef
    def __init__(self, repository_id: _Optional[str] = ..., ref: _Optional[_Union[RepositoryRef, _Mapping]] = ...) -> None: ...

class GetRepositoryResponse(_message.Message):
    __slots__ = ("repository",)
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    repository: Repository
    def __init__(self, repository: _Optional[_Union[Repository, _Mapping]] = ...) -> None: ...

class ListRepositoriesRequest(_message.Message):
    __slots__ = ("repository_ids", "page")
    REPOSITORY_IDS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    repository_ids: _containers.RepeatedScalarFieldContainer[str]
    page: Page
    def __init__(self, repository_ids: _Optional[_Iterable[str]] = ..., page: _Optional[_Union[Page, _Mapping]] = ...) -> None: ...

class ListRepositoriesResponse(_message.Message):
    __slots__ = ("repositories", "next_page_token")
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedCompositeFieldContainer[Repository]
    next_page_token: str
    def __init__(self, repositories: _Optional[_Iterable[_Union[Repository, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListRepositoryAccessRequest(_message.Message):
    __slots__ = ("repository_ids",)
    REPOSITORY_IDS_FIELD_NUMBER: _ClassVar[int]
    repository_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, repository_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ListRepositoryAccessResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[RepositoryAccess]
    def __init__(self, entries: _Optional[_Iterable[_Union[RepositoryAccess, _Mapping]]] = ...) -> None: ...

class GetRepositoryAccessRequest(_message.Message):
    __slots__ = ("ref",)
    REF_FIELD_NUMBER: _ClassVar[int]
    ref: RepositoryRef
    def __init__(self, ref: _Optional[_Union[RepositoryRef, _Mapping]] = ...) -> None: ...

class GetRepositoryAccessResponse(_message.Message):
    __slots__ = ("access",)
    ACCESS_FIELD_NUMBER: _ClassVar[int]
    access: RepositoryAccess
    def __init__(self, access: _Optional[_Union[RepositoryAccess, _Mapping]] = ...) -> None: ...

class AddRepositoryGrantRequest(_message.Message):
    __slots__ = ("repository_id", "group")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    group: str
    def __init__(self, repository_id: _Optional[str] = ..., group: _Optional[str] = ...) -> None: ...

class AddRepositoryGrantResponse(_message.Message):
    __slots__ = ("repository",)
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    repository: Repository
    def __init__(self, repository: _Optional[_Union[Repository, _Mapping]] = ...) -> None: ...

class RemoveRepositoryGrantRequest(_message.Message):
    __slots__ = ("repository_id", "group")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    group: str
    def __init__(self, repository_id: _Optional[str] = ..., group: _Optional[str] = ...) -> None: ...

class RemoveRepositoryGrantResponse(_message.Message):
    __slots__ = ("repository",)
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    repository: Repository
    def __init__(self, repository: _Optional[_Union[Repository, _Mapping]] = ...) -> None: ...

class UpdateRepositoryRequest(_message.Message):
    __slots__ = ("repository_id", "visibility", "default_branch", "sync_interval_seconds", "default_sync_interval")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_BRANCH_FIELD_NUMBER: _ClassVar[int]
    SYNC_INTERVAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_SYNC_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    visibility: Visibility
    default_branch: str
    sync_interval_seconds: int
    default_sync_interval: bool
    def __init__(self, repository_id: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., default_branch: _Optional[str] = ..., sync_interval_seconds: _Optional[int] = ..., default_sync_interval: _Optional[bool] = ...) -> None: ...

class UpdateRepositoryResponse(_message.Message):
    __slots__ = ("repository",)
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    repository: Repository
    def __init__(self, repository: _Optional[_Union[Repository, _Mapping]] = ...) -> None: ...

class DeleteRepositoryRequest(_message.Message):
    __slots__ = ("repository_id",)
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    def __init__(self, repository_id: _Optional[str] = ...) -> None: ...

class DeleteRepositoryResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SyncCounters(_message.Message):
    __slots__ = ("discovered_files", "indexed_documents", "indexed_chunks", "unchanged_documents", "deleted_documents", "replaced_files")
    DISCOVERED_FILES_FIELD_NUMBER: _ClassVar[int]
    INDEXED_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    INDEXED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    DELETED_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FILES_FIELD_NUMBER: _ClassVar[int]
    discovered_files: int
    indexed_documents: int
    indexed_chunks: int
    unchanged_documents: int
    deleted_documents: int
    replaced_files: int
    def __init__(self, discovered_files: _Optional[int] = ..., indexed_documents: _Optional[int] = ..., indexed_chunks: _Optional[int] = ..., unchanged_documents: _Optional[int] = ..., deleted_documents: _Optional[int] = ..., replaced_files: _Optional[int] = ...) -> None: ...

class SkippedFile(_message.Message):
    __slots__ = ("path", "reason")
    PATH_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    path: str
    reason: str
    def __init__(self, path: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class SyncProgress(_message.Message):
    __slots__ = ("files_read", "files_total", "documents_chunked", "documents_to_chunk", "vectors_embedded", "vectors_to_embed", "phase_seconds")
    class PhaseSecondsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    FILES_READ_FIELD_NUMBER: _ClassVar[int]
    FILES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_CHUNKED_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_TO_CHUNK_FIELD_NUMBER: _ClassVar[int]
    VECTORS_EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    VECTORS_TO_EMBED_FIELD_NUMBER: _ClassVar[int]
    PHASE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    files_read: int
    files_total: int
    documents_chunked: int
    documents_to_chunk: int
    vectors_embedded: int
    vectors_to_embed: int
    phase_seconds: _containers.ScalarMap[str, float]
    def __init__(self, files_read: _Optional[int] = ..., files_total: _Optional[int] = ..., documents_chunked: _Optional[int] = ..., documents_to_chunk: _Optional[int] = ..., vectors_embedded: _Optional[int] = ..., vectors_to_embed: _Optional[int] = ..., phase_seconds: _Optional[_Mapping[str, float]] = ...) -> None: ...

class Sync(_message.Message):
    __slots__ = ("id", "repository_id", "status", "trigger", "commit_sha", "counters", "code_nodes", "mentions", "skipped", "error", "started_at", "finished_at", "phase", "progress")
    ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    COMMIT_SHA_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    CODE_NODES_FIELD_NUMBER: _ClassVar[int]
    MENTIONS_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    id: str
    repository_id: str
    status: SyncStatus
    trigger: SyncTrigger
    commit_sha: str
    counters: SyncCounters
    code_nodes: int
    mentions: int
    skipped: _containers.RepeatedCompositeFieldContainer[SkippedFile]
    error: str
    started_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    phase: SyncPhase
    progress: SyncProgress
    def __init__(self, id: _Optional[str] = ..., repository_id: _Optional[str] = ..., status: _Optional[_Union[SyncStatus, str]] = ..., trigger: _Optional[_Union[SyncTrigger, str]] = ..., commit_sha: _Optional[str] = ..., counters: _Optional[_Union[SyncCounters, _Mapping]] = ..., code_nodes: _Optional[int] = ..., mentions: _Optional[int] = ..., skipped: _Optional[_Iterable[_Union[SkippedFile, _Mapping]]] = ..., error: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., phase: _Optional[_Union[SyncPhase, str]] = ..., progress: _Optional[_Union[SyncProgress, _Mapping]] = ...) -> None: ...

class SyncRepositoryRequest(_message.Message):
    __slots__ = ("repository_id", "wait", "force_relink")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    FORCE_RELINK_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    wait: bool
    force_relink: bool
    def __init__(self, repository_id: _Optional[str] = ..., wait: _Optional[bool] = ..., force_relink: _Optional[bool] = ...) -> None: ...

class SyncRepositoryResponse(_message.Message):
    __slots__ = ("sync",)
    SYNC_FIELD_NUMBER: _ClassVar[int]
    sync: Sync
    def __init__(self, sync: _Optional[_Union[Sync, _Mapping]] = ...) -> None: ...

class DeliverWebhookRequest(_message.Message):
    __slots__ = ("provider", "headers", "body")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    provider: WebhookProvider
    headers: _containers.ScalarMap[str, str]
    body: bytes
    def __init__(self, provider: _Optional[_Union[WebhookProvider, str]] = ..., headers: _Optional[_Mapping[str, str]] = ..., body: _Optional[bytes] = ...) -> None: ...

class DeliverWebhookResponse(_message.Message):
    __slots__ = ("verdict", "reason", "queued")
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    verdict: WebhookVerdict
    reason: str
    queued: int
    def __init__(self, verdict: _Optional[_Union[WebhookVerdict, str]] = ..., reason: _Optional[str] = ..., queued: _Optional[int] = ...) -> None: ...

class ListSyncsRequest(_message.Message):
    __slots__ = ("repository_id", "page")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    page: Page
    def __init__(self, repository_id: _Optional[str] = ..., page: _Optional[_Union[Page, _Mapping]] = ...) -> None: ...

class ListSyncsResponse(_message.Message):
    __slots__ = ("syncs", "next_page_token")
    SYNCS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    syncs: _containers.RepeatedCompositeFieldContainer[Sync]
    next_page_token: str
    def __init__(self, syncs: _Optional[_Iterable[_Union[Sync, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DocumentSummary(_message.Message):
    __slots__ = ("id", "repository_id", "path", "kind", "title", "slug", "content_hash", "chunk_count", "indexed_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SLUG_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    INDEXED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    repository_id: str
    path: str
    kind: DocumentKind
    title: str
    slug: str
    content_hash: str
    chunk_count: int
    indexed_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., repository_id: _Optional[str] = ..., path: _Optional[str] = ..., kind: _Optional[_Union[DocumentKind, str]] = ..., title: _Optional[str] = ..., slug: _Optional[str] = ..., content_hash: _Optional[str] = ..., chunk_count: _Optional[int] = ..., indexed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Document(_message.Message):
    __slots__ = ("summary", "content")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    summary: DocumentSummary
    content: str
    def __init__(self, summary: _Optional[_Union[DocumentSummary, _Mapping]] = ..., content: _Optional[str] = ...) -> None: ...

class ListDocumentsRequest(_message.Message):
    __slots__ = ("repository_id", "kinds", "page")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    kinds: _containers.RepeatedScalarFieldContainer[DocumentKind]
    page: Page
    def __init__(self, repository_id: _Optional[str] = ..., kinds: _Optional[_Iterable[_Union[DocumentKind, str]]] = ..., page: _Optional[_Union[Page, _Mapping]] = ...) -> None: ...

class ListDocumentsResponse(_message.Message):
    __slots__ = ("documents", "next_page_token")
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[DocumentSummary]
    next_page_token: str
    def __init__(self, documents: _Optional[_Iterable[_Union[DocumentSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetDocumentRequest(_message.Message):
    __slots__ = ("repository_id", "document_id")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    document_id: str
    def __init__(self, repository_id: _Optional[str] = ..., document_id: _Optional[str] = ...) -> None: ...

class GetDocumentResponse(_message.Message):
    __slots__ = ("document",)
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    document: Document
    def __init__(self, document: _Optional[_Union[Document, _Mapping]] = ...) -> None: ...

class DocsTreeNode(_message.Message):
    __slots__ = ("title", "slug", "path", "children")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SLUG_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    title: str
    slug: str
    path: str
    children: _containers.RepeatedCompositeFieldContainer[DocsTreeNode]
    def __init__(self, title: _Optional[str] = ..., slug: _Optional[str] = ..., path: _Optional[str] = ..., children: _Optional[_Iterable[_Union[DocsTreeNode, _Mapping]]] = ...) -> None: ...

class GetDocsTreeRequest(_message.Message):
    __slots__ = ("repository_id",)
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    def __init__(self, repository_id: _Optional[str] = ...) -> None: ...

class GetDocsTreeResponse(_message.Message):
    __slots__ = ("roots",)
    ROOTS_FIELD_NUMBER: _ClassVar[int]
    roots: _containers.RepeatedCompositeFieldContainer[DocsTreeNode]
    def __init__(self, roots: _Optional[_Iterable[_Union[DocsTreeNode, _Mapping]]] = ...) -> None: ...

class TocEntry(_message.Message):
    __slots__ = ("level", "text", "anchor")
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_FIELD_NUMBER: _ClassVar[int]
    level: int
    text: str
    anchor: str
    def __init__(self, level: _Optional[int] = ..., text: _Optional[str] = ..., anchor: _Optional[str] = ...) -> None: ...

class PageLink(_message.Message):
    __slots__ = ("slug", "title")
    SLUG_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    slug: str
    title: str
    def __init__(self, slug: _Optional[str] = ..., title: _Optional[str] = ...) -> None: ...

class GetDocsPageRequest(_message.Message):
    __slots__ = ("repository_id", "slug")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    SLUG_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    slug: str
    def __init__(self, repository_id: _Optional[str] = ..., slug: _Optional[str] = ...) -> None: ...

class GetDocsPageResponse(_message.Message):
    __slots__ = ("document", "toc", "siblings", "previous", "next", "related_code", "related_code_mentions")
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    TOC_FIELD_NUMBER: _ClassVar[int]
    SIBLINGS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIELD_NUMBER: _ClassVar[int]
    RELATED_CODE_FIELD_NUMBER: _ClassVar[int]
    RELATED_CODE_MENTIONS_FIELD_NUMBER: _ClassVar[int]
    document: Document
    toc: _containers.RepeatedCompositeFieldContainer[TocEntry]
    siblings: _containers.RepeatedCompositeFieldContainer[PageLink]
    previous: PageLink
    next: PageLink
    related_code: _containers.RepeatedCompositeFieldContainer[CodeNode]
    related_code_mentions: _containers.RepeatedCompositeFieldContainer[PageMention]
    def __init__(self, document: _Optional[_Union[Document, _Mapping]] = ..., toc: _Optional[_Iterable[_Union[TocEntry, _Mapping]]] = ..., siblings: _Optional[_Iterable[_Union[PageLink, _Mapping]]] = ..., previous: _Optional[_Union[PageLink, _Mapping]] = ..., next: _Optional[_Union[PageLink, _Mapping]] = ..., related_code: _Optional[_Iterable[_Union[CodeNode, _Mapping]]] = ..., related_code_mentions: _Optional[_Iterable[_Union[PageMention, _Mapping]]] = ...) -> None: ...

class PageMention(_message.Message):
    __slots__ = ("code_node_id", "mention", "form", "reason")
    CODE_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    MENTION_FIELD_NUMBER: _ClassVar[int]
    FORM_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    code_node_id: str
    mention: str
    form: MentionForm
    reason: MentionReason
    def __init__(self, code_node_id: _Optional[str] = ..., mention: _Optional[str] = ..., form: _Optional[_Union[MentionForm, str]] = ..., reason: _Optional[_Union[MentionReason, str]] = ...) -> None: ...

class Chunk(_message.Message):
    __slots__ = ("id", "document_id", "repository_id", "chunk_index", "heading_path", "content", "path", "slug", "kind", "heading_anchor", "embedding_model")
    ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_INDEX_FIELD_NUMBER: _ClassVar[int]
    HEADING_PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SLUG_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    HEADING_ANCHOR_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    id: str
    document_id: str
    repository_id: str
    chunk_index: int
    heading_path: _containers.RepeatedScalarFieldContainer[str]
    content: str
    path: str
    slug: str
    kind: DocumentKind
    heading_anchor: str
    embedding_model: str
    def __init__(self, id: _Optional[str] = ..., document_id: _Optional[str] = ..., repository_id: _Optional[str] = ..., chunk_index: _Optional[int] = ..., heading_path: _Optional[_Iterable[str]] = ..., content: _Optional[str] = ..., path: _Optional[str] = ..., slug: _Optional[str] = ..., kind: _Optional[_Union[DocumentKind, str]] = ..., heading_anchor: _Optional[str] = ..., embedding_model: _Optional[str] = ...) -> None: ...

class GetChunkRequest(_message.Message):
    __slots__ = ("repository_id", "chunk_id")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    chunk_id: str
    def __init__(self, repository_id: _Optional[str] = ..., chunk_id: _Optional[str] = ...) -> None: ...

class GetChunkResponse(_message.Message):
    __slots__ = ("chunk",)
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    chunk: Chunk
    def __init__(self, chunk: _Optional[_Union[Chunk, _Mapping]] = ...) -> None: ...

class CodeNode(_message.Message):
    __slots__ = ("id", "repository_id", "name", "qualified_name", "kind", "language", "path", "start_line", "end_line", "signature")
    ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUALIFIED_NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    id: str
    repository_id: str
    name: str
    qualified_name: str
    kind: CodeNodeKind
    language: Language
    path: str
    start_line: int
    end_line: int
    signature: str
    def __init__(self, id: _Optional[str] = ..., repository_id: _Optional[str] = ..., name: _Optional[str] = ..., qualified_name: _Optional[str] = ..., kind: _Optional[_Union[CodeNodeKind, str]] = ..., language: _Optional[_Union[Language, str]] = ..., path: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., signature: _Optional[str] = ...) -> None: ...

class StreamRanks(_message.Message):
    __slots__ = ("dense", "text", "symbol")
    DENSE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_FIELD_NUMBER: _ClassVar[int]
    dense: int
    text: int
    symbol: int
    def __init__(self, dense: _Optional[int] = ..., text: _Optional[int] = ..., symbol: _Optional[int] = ...) -> None: ...

class DocChunkHit(_message.Message):
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

class CodeHit(_message.Message):
    __slots__ = ("node", "score", "ranks")
    NODE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    node: CodeNode
    score: float
    ranks: StreamRanks
    def __init__(self, node: _Optional[_Union[CodeNode, _Mapping]] = ..., score: _Optional[float] = ..., ranks: _Optional[_Union[StreamRanks, _Mapping]] = ...) -> None: ...

class SearchDocChunksRequest(_message.Message):
    __slots__ = ("repository_ids", "query", "query_embedding", "embedding_model", "limit", "kinds", "dense_weight", "text_weight", "rrf_k")
    REPOSITORY_IDS_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    QUERY_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    DENSE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    TEXT_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    repository_ids: _containers.RepeatedScalarFieldContainer[str]
    query: str
    query_embedding: _containers.RepeatedScalarFieldContainer[float]
    embedding_model: str
    limit: int
    kinds: _containers.RepeatedScalarFieldContainer[DocumentKind]
    dense_weight: float
    text_weight: float
    rrf_k: float
    def __init__(self, repository_ids: _Optional[_Iterable[str]] = ..., query: _Optional[str] = ..., query_embedding: _Optional[_Iterable[float]] = ..., embedding_model: _Optional[str] = ..., limit: _Optional[int] = ..., kinds: _Optional[_Iterable[_Union[DocumentKind, str]]] = ..., dense_weight: _Optional[float] = ..., text_weight: _Optional[float] = ..., rrf_k: _Optional[float] = ...) -> None: ...

class SearchDocChunksResponse(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[DocChunkHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[DocChunkHit, _Mapping]]] = ...) -> None: ...

class SearchCodeRequest(_message.Message):
    __slots__ = ("repository_ids", "query", "query_embedding", "embedding_model", "limit", "dense_weight", "text_weight", "symbol_weight", "rrf_k")
    REPOSITORY_IDS_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    QUERY_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    DENSE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    TEXT_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    repository_ids: _containers.RepeatedScalarFieldContainer[str]
    query: str
    query_embedding: _containers.RepeatedScalarFieldContainer[float]
    embedding_model: str
    limit: int
    dense_weight: float
    text_weight: float
    symbol_weight: float
    rrf_k: float
    def __init__(self, repository_ids: _Optional[_Iterable[str]] = ..., query: _Optional[str] = ..., query_embedding: _Optional[_Iterable[float]] = ..., embedding_model: _Optional[str] = ..., limit: _Optional[int] = ..., dense_weight: _Optional[float] = ..., text_weight: _Optional[float] = ..., symbol_weight: _Optional[float] = ..., rrf_k: _Optional[float] = ...) -> None: ...

class SearchCodeResponse(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[CodeHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[CodeHit, _Mapping]]] = ...) -> None: ...

class RelatedDocChunk(_message.Message):
    __slots__ = ("chunk", "document_title", "form", "reason")
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_TITLE_FIELD_NUMBER: _ClassVar[int]
    FORM_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    chunk: Chunk
    document_title: str
    form: MentionForm
    reason: MentionReason
    def __init__(self, chunk: _Optional[_Union[Chunk, _Mapping]] = ..., document_title: _Optional[str] = ..., form: _Optional[_Union[MentionForm, str]] = ..., reason: _Optional[_Union[MentionReason, str]] = ...) -> None: ...

class RelatedDocChunks(_message.Message):
    __slots__ = ("code_node_id", "chunks")
    CODE_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    code_node_id: str
    chunks: _containers.RepeatedCompositeFieldContainer[RelatedDocChunk]
    def __init__(self, code_node_id: _Optional[str] = ..., chunks: _Optional[_Iterable[_Union[RelatedDocChunk, _Mapping]]] = ...) -> None: ...

class FindDocumentsByContentRequest(_message.Message):
    __slots__ = ("content_hashes", "repository_ids", "every_repository")
    CONTENT_HASHES_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_IDS_FIELD_NUMBER: _ClassVar[int]
    EVERY_REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    content_hashes: _containers.RepeatedScalarFieldContainer[str]
    repository_ids: _containers.RepeatedScalarFieldContainer[str]
    every_repository: bool
    def __init__(self, content_hashes: _Optional[_Iterable[str]] = ..., repository_ids: _Optional[_Iterable[str]] = ..., every_repository: _Optional[bool] = ...) -> None: ...

class ContentMatch(_message.Message):
    __slots__ = ("content_hash", "repository_id", "repository", "document_id", "path")
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    content_hash: str
    repository_id: str
    repository: str
    document_id: str
    path: str
    def __init__(self, content_hash: _Optional[str] = ..., repository_id: _Optional[str] = ..., repository: _Optional[str] = ..., document_id: _Optional[str] = ..., path: _Optional[str] = ...) -> None: ...

class FindDocumentsByContentResponse(_message.Message):
    __slots__ = ("matches",)
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[ContentMatch]
    def __init__(self, matches: _Optional[_Iterable[_Union[ContentMatch, _Mapping]]] = ...) -> None: ...

class GetRelatedDocChunksRequest(_message.Message):
    __slots__ = ("repository_ids", "code_node_ids", "limit")
    REPOSITORY_IDS_FIELD_NUMBER: _ClassVar[int]
    CODE_NODE_IDS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    repository_ids: _containers.RepeatedScalarFieldContainer[str]
    code_node_ids: _containers.RepeatedScalarFieldContainer[str]
    limit: int
    def __init__(self, repository_ids: _Optional[_Iterable[str]] = ..., code_node_ids: _Optional[_Iterable[str]] = ..., limit: _Optional[int] = ...) -> None: ...

class GetRelatedDocChunksResponse(_message.Message):
    __slots__ = ("related",)
    RELATED_FIELD_NUMBER: _ClassVar[int]
    related: _containers.RepeatedCompositeFieldContainer[RelatedDocChunks]
    def __init__(self, related: _Optional[_Iterable[_Union[RelatedDocChunks, _Mapping]]] = ...) -> None: ...

class ReadFileRangeRequest(_message.Message):
    __slots__ = ("repository_id", "path", "start_line", "end_line")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    path: str
    start_line: int
    end_line: int
    def __init__(self, repository_id: _Optional[str] = ..., path: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ...) -> None: ...

class ReadFileRangeResponse(_message.Message):
    __slots__ = ("path", "language", "start_line", "end_line", "total_lines", "content", "commit_sha")
    PATH_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    COMMIT_SHA_FIELD_NUMBER: _ClassVar[int]
    path: str
    language: Language
    start_line: int
    end_line: int
    total_lines: int
    content: str
    commit_sha: str
    def __init__(self, path: _Optional[str] = ..., language: _Optional[_Union[Language, str]] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., total_lines: _Optional[int] = ..., content: _Optional[str] = ..., commit_sha: _Optional[str] = ...) -> None: ...
