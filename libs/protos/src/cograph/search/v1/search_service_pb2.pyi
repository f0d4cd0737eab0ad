from cograph.collections.v1 import collections_service_pb2 as _collections_service_pb2
from cograph.repodocs.v1 import repodocs_service_pb2 as _repodocs_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RetrieveMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RETRIEVE_MODE_UNSPECIFIED: _ClassVar[RetrieveMode]
    RETRIEVE_MODE_CODE: _ClassVar[RetrieveMode]
    RETRIEVE_MODE_WIKI: _ClassVar[RetrieveMode]

class Store(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STORE_UNSPECIFIED: _ClassVar[Store]
    STORE_CODE: _ClassVar[Store]
    STORE_REPO_DOCS: _ClassVar[Store]
    STORE_COLLECTIONS: _ClassVar[Store]
    STORE_EMBEDDING: _ClassVar[Store]
RETRIEVE_MODE_UNSPECIFIED: RetrieveMode
RETRIEVE_MODE_CODE: RetrieveMode
RETRIEVE_MODE_WIKI: RetrieveMode
STORE_UNSPECIFIED: Store
STORE_CODE: Store
STORE_REPO_DOCS: Store
STORE_COLLECTIONS: Store
STORE_EMBEDDING: Store

class Scope(_message.Message):
    __slots__ = ("repository_ids", "collection_ids")
    REPOSITORY_IDS_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_IDS_FIELD_NUMBER: _ClassVar[int]
    repository_ids: _containers.RepeatedScalarFieldContainer[str]
    collection_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, repository_ids: _Optional[_Iterable[str]] = ..., collection_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class StoreFailure(_message.Message):
    __slots__ = ("store", "message")
    STORE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    store: Store
    message: str
    def __init__(self, store: _Optional[_Union[Store, str]] = ..., message: _Optional[str] = ...) -> None: ...

class CodeResult(_message.Message):
    __slots__ = ("hit", "related_repo_doc_chunks")
    HIT_FIELD_NUMBER: _ClassVar[int]
    RELATED_REPO_DOC_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    hit: _repodocs_service_pb2.CodeHit
    related_repo_doc_chunks: _containers.RepeatedCompositeFieldContainer[_repodocs_service_pb2.RelatedDocChunk]
    def __init__(self, hit: _Optional[_Union[_repodocs_service_pb2.CodeHit, _Mapping]] = ..., related_repo_doc_chunks: _Optional[_Iterable[_Union[_repodocs_service_pb2.RelatedDocChunk, _Mapping]]] = ...) -> None: ...

class RetrieveRequest(_message.Message):
    __slots__ = ("query", "mode", "scope", "limit", "related_limit", "kinds")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    RELATED_LIMIT_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    query: str
    mode: RetrieveMode
    scope: Scope
    limit: int
    related_limit: int
    kinds: _containers.RepeatedScalarFieldContainer[_repodocs_service_pb2.DocumentKind]
    def __init__(self, query: _Optional[str] = ..., mode: _Optional[_Union[RetrieveMode, str]] = ..., scope: _Optional[_Union[Scope, _Mapping]] = ..., limit: _Optional[int] = ..., related_limit: _Optional[int] = ..., kinds: _Optional[_Iterable[_Union[_repodocs_service_pb2.DocumentKind, str]]] = ...) -> None: ...

class RetrieveResponse(_message.Message):
    __slots__ = ("code", "docs", "failures")
    CODE_FIELD_NUMBER: _ClassVar[int]
    DOCS_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    code: _containers.RepeatedCompositeFieldContainer[CodeResult]
    docs: _containers.RepeatedCompositeFieldContainer[_repodocs_service_pb2.DocChunkHit]
    failures: _containers.RepeatedCompositeFieldContainer[StoreFailure]
    def __init__(self, code: _Optional[_Iterable[_Union[CodeResult, _Mapping]]] = ..., docs: _Optional[_Iterable[_Union[_repodocs_service_pb2.DocChunkHit, _Mapping]]] = ..., failures: _Optional[_Iterable[_Union[StoreFailure, _Mapping]]] = ...) -> None: ...

class SearchCollectionRequest(_message.Message):
    __slots__ = ("query", "collection_id", "limit")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    query: str
    collection_id: str
    limit: int
    def __init__(self, query: _Optional[str] = ..., collection_id: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class SearchCollectionResponse(_message.Message):
    __slots__ = ("hits", "failures")
    HITS_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[_collections_service_pb2.ChunkHit]
    failures: _containers.RepeatedCompositeFieldContainer[StoreFailure]
    def __init__(self, hits: _Optional[_Iterable[_Union[_collections_service_pb2.ChunkHit, _Mapping]]] = ..., failures: _Optional[_Iterable[_Union[StoreFailure, _Mapping]]] = ...) -> None: ...

class RouteRequest(_message.Message):
    __slots__ = ("query", "scope", "limit")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    query: str
    scope: Scope
    limit: int
    def __init__(self, query: _Optional[str] = ..., scope: _Optional[_Union[Scope, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class RoutePool(_message.Message):
    __slots__ = ("store", "confidence")
    STORE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    store: Store
    confidence: float
    def __init__(self, store: _Optional[_Union[Store, str]] = ..., confidence: _Optional[float] = ...) -> None: ...

class RouteResponse(_message.Message):
    __slots__ = ("pools", "code", "repo_docs", "collections", "failures")
    POOLS_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REPO_DOCS_FIELD_NUMBER: _ClassVar[int]
    COLLECTIONS_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    pools: _containers.RepeatedCompositeFieldContainer[RoutePool]
    code: _containers.RepeatedCompositeFieldContainer[CodeResult]
    repo_docs: _containers.RepeatedCompositeFieldContainer[_repodocs_service_pb2.DocChunkHit]
    collections: _containers.RepeatedCompositeFieldContainer[_collections_service_pb2.ChunkHit]
    failures: _containers.RepeatedCompositeFieldContainer[StoreFailure]
    def __init__(self, pools: _Optional[_Iterable[_Union[RoutePool, _Mapping]]] = ..., code: _Optional[_Iterable[_Union[CodeResult, _Mapping]]] = ..., repo_docs: _Optional[_Iterable[_Union[_repodocs_service_pb2.DocChunkHit, _Mapping]]] = ..., collections: _Optional[_Iterable[_Union[_collections_service_pb2.ChunkHit, _Mapping]]] = ..., failures: _Optional[_Iterable[_Union[StoreFailure, _Mapping]]] = ...) -> None: ...
