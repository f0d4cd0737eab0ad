"""CollectionsServicer: protobuf in, domain calls, protobuf out. Status codes come from domain errors."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_collections import domain
from cograph_collections.documents import DocumentStore
from cograph_collections.ingest import Upload
from cograph_collections.jobs import JobStore
from cograph_collections.mapping import (
    KIND_FROM_PB,
    STATUS_FROM_PB,
    access_to_pb,
    chunk_to_pb,
    collection_to_pb,
    counts_to_pb,
    document_to_pb,
    job_to_pb,
    outcome_to_pb,
    summary_to_pb,
    visibility_from_pb,
)
from cograph_collections.search import ChunkSearch
from cograph_collections.service import Collections
from cograph_collections.store import CollectionRow, CollectionStore
from cograph_grpc import (
    InvalidArgument,
    NotFound,
    check_search,
    check_typed_text,
    next_page_token,
    page_request,
    parse_content_hashes,
    parse_id,
    parse_ids,
)
from cograph_grpc.paging import INTEGER, TEXT, TIMESTAMP, UUID
from cograph_retrieval import DEFAULT_RRF_K, Query

Context = aio.ServicerContext[Any, Any]


class CollectionsServicer(pb_grpc.CollectionsServiceServicer):
    def __init__(self, pool: asyncpg.Pool[Any], collections: Collections, max_batch_documents: int) -> None:
        self._pool = pool
        self._collections = collections
        self._max_batch = max_batch_documents
        self._search = ChunkSearch(pool)

    async def _require(self, store: CollectionStore, collection_id: uuid.UUID) -> CollectionRow:
        row = await store.get(collection_id)
        if row is None:
            raise NotFound(f"collection {collection_id} does not exist")
        return row

    async def CreateCollection(
        self, request: pb.CreateCollectionRequest, context: Context
    ) -> pb.CreateCollectionResponse:
        name = domain.check_name(request.name)
        description = domain.check_description(request.description)
        visibility = visibility_from_pb(request.visibility)
        if not request.owner:
            raise InvalidArgument("a collection needs an owner")
        check_typed_text(request.owner, "owner")
        async with self._pool.acquire() as connection:
            store = CollectionStore(connection)
            collection_id = await store.create(name, description, visibility, request.owner)
            row = await self._require(store, collection_id)
        return pb.CreateCollectionResponse(collection=collection_to_pb(row))

    async def GetCollection(
        self, request: pb.GetCollectionRequest, context: Context
    ) -> pb.GetCollectionResponse:
        collection_id = parse_id(request.collection_id, "collection")
        async with self._pool.acquire() as connection:
            row = await self._require(CollectionStore(connection), collection_id)
        return pb.GetCollectionResponse(collection=collection_to_pb(row))

    async def ListCollections(
        self, request: pb.ListCollectionsRequest, context: Context
    ) -> pb.ListCollectionsResponse:
        ids = parse_ids(request.collection_ids, "collection")
        check_typed_text(request.query, "name filter")
        page = page_request(request.page.page_size, request.page.page_token, (TEXT, UUID))
        async with self._pool.acquire() as connection:
            rows = await CollectionStore(connection).find(
                ids, query=request.query, limit=page.limit, after=page.after
            )
        return pb.ListCollectionsResponse(
            collections=[collection_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.name, row.id)),
        )

    async def UpdateCollection(
        self, request: pb.UpdateCollectionRequest, context: Context
    ) -> pb.UpdateCollectionResponse:
        collection_id = parse_id(request.collection_id, "collection")
        name = domain.check_name(request.name) if request.HasField("name") else None
        description = (
            domain.check_description(request.description) if request.HasField("description") else None
        )
        visibility = visibility_from_pb(request.visibility) if request.HasField("visibility") else None
        async with self._pool.acquire() as connection:
            store = CollectionStore(connection)
            if not await store.update(
                collection_id, name=name, description=description, visibility=visibility
            ):
                raise NotFound(f"collection {collection_id} does not exist")
            row = await self._require(store, collection_id)
        return pb.UpdateCollectionResponse(collection=collection_to_pb(row))

    async def DeleteCollection(
        self, request: pb.DeleteCollectionRequest, context: Context
    ) -> pb.DeleteCollectionResponse:
        collection_id = parse_id(request.collection_id, "collection")
        async with self._pool.acquire() as connection:
            if not await CollectionStore(connection).delete(collection_id):
                raise NotFound(f"collection {collection_id} does not exist")
        return pb.DeleteCollectionResponse()

    async def ListCollectionAccess(
        self, request: pb.ListCollectionAccessRequest, context: Context
    ) -> pb.ListCollectionAccessResponse:
        async with self._pool.acquire() as connection:
            rows = await CollectionStore(connection).access()
        return pb.ListCollectionAccessResponse(entries=[access_to_pb(row) for row in rows])

    async def GetCollectionAccess(
        self, request: pb.GetCollectionAccessRequest, context: Context
    ) -> pb.GetCollectionAccessResponse:
        collection_id = parse_id(request.collection_id, "collection")
        async with self._pool.acquire() as connection:
            row = await CollectionStore(connection).access_of(collection_id)
        # No collection is no error: the gateway's policy decides what a missing one answers.
        if row is None:
            return pb.GetCollectionAccessResponse()
        return pb.GetCollectionAccessResponse(access=access_to_pb(row))

    async def AddGrant(self, request: pb.AddGrantRequest, context: Context) -> pb.AddGrantResponse:
        collection_id = parse_id(request.collection_id, "collection")
        group = domain.check_group(request.group)
        async with self._pool.acquire() as connection, connection.transaction():
            store = CollectionStore(connection)
            await self._require(store, collection_id)
            await store.add_grant(collection_id, group)
            row = await self._require(store, collection_id)
        return pb.AddGrantResponse(collection=collection_to_pb(row))

    async def RemoveGrant(self, request: pb.RemoveGrantRequest, context: Context) -> pb.RemoveGrantResponse:
        collection_id = parse_id(request.collection_id, "collection")
        async with self._pool.acquire() as connection, connection.transaction():
            store = CollectionStore(connection)
            await self._require(store, collection_id)
            await store.remove_grant(collection_id, domain.check_group(request.group))
            row = await self._require(store, collection_id)
        return pb.RemoveGrantResponse(collection=collection_to_pb(row))

    async def _existing(self, collection_id: str) -> uuid.UUID:
        parsed = parse_id(collection_id, "collection")
        async with self._pool.acquire() as connection:
            await self._require(CollectionStore(connection), parsed)
        return parsed

    async def UploadDocument(
        self, request: pb.UploadDocumentRequest, context: Context
    ) -> pb.UploadDocumentResponse:
        collection_id = await self._existing(request.collection_id)
        upload = Upload(request.document.source_key, request.document.content)
        outcomes, job_id = await self._collections.upload(collection_id, [upload], request.requested_by)
        return pb.UploadDocumentResponse(result=outcome_to_pb(outcomes[0]), job_id=str(job_id))

    async def UploadDocuments(
        self, request: pb.UploadDocumentsRequest, context: Context
    ) -> pb.UploadDocumentsResponse:
        collection_id = await self._existing(request.collection_id)
        if not request.documents:
            raise InvalidArgument("a batch needs at least one document")
        if len(request.documents) > self._max_batch:
            raise InvalidArgument(
                f"a batch holds at most {self._max_batch} documents; this one has {len(request.documents)}"
            )
        uploads = [Upload(d.source_key, d.content) for d in request.documents]
        outcomes, job_id = await self._collections.upload(collection_id, uploads, request.requested_by)
        return pb.UploadDocumentsResponse(
            results=[outcome_to_pb(o) for o in outcomes], counts=counts_to_pb(outcomes), job_id=str(job_id)
        )

    async def GetDocument(self, request: pb.GetDocumentRequest, context: Context) -> pb.GetDocumentResponse:
        collection_id = parse_id(request.collection_id, "collection")
        document_id = parse_id(request.document_id, "document")
        # One snapshot: a replacement committed between the two reads gave one version's content
        # with the other's links.
        async with (
            self._pool.acquire() as connection,
            connection.transaction(isolation="repeatable_read", readonly=True),
        ):
            store = DocumentStore(connection)
            document = await store.get(collection_id, document_id)
            if document is None:
                raise NotFound(f"document {document_id} does not exist in collection {collection_id}")
            links = await store.links(document_id)
        return pb.GetDocumentResponse(document=document_to_pb(document, links))

    async def ListDocuments(
        self, request: pb.ListDocumentsRequest, context: Context
    ) -> pb.ListDocumentsResponse:
        collection_id = await self._existing(request.collection_id)
        page = page_request(request.page.page_size, request.page.page_token, (TEXT,))
        async with self._pool.acquire() as connection:
            rows = await DocumentStore(connection).summaries(collection_id, page.limit, page.after)
        return pb.ListDocumentsResponse(
            documents=[summary_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.source_key,)),
        )

    async def DeleteDocument(
        self, request: pb.DeleteDocumentRequest, context: Context
    ) -> pb.DeleteDocumentResponse:
        collection_id = parse_id(request.collection_id, "collection")
        document_id = parse_id(request.document_id, "document")
        await self._collections.delete_document(collection_id, document_id, request.requested_by)
        return pb.DeleteDocumentResponse()

    async def FindDocumentsByContent(
        self, request: pb.FindDocumentsByContentRequest, context: Context
    ) -> pb.FindDocumentsByContentResponse:
        scope = parse_ids(list(request.collection_ids), "collection")
        hashes = parse_content_hashes(list(request.content_hashes))
        if not scope or not hashes:
            return pb.FindDocumentsByContentResponse()
        async with self._pool.acquire() as connection:
            matches = await DocumentStore(connection).by_content(scope, hashes)
        return pb.FindDocumentsByContentResponse(
            matches=[
                pb.ContentMatch(
                    content_hash=match.content_hash,
                    collection_id=str(match.collection_id),
                    collection_name=match.collection_name,
                    document_id=str(match.document_id),
                    source_key=match.source_key,
                )
                for match in matches
            ]
        )

    async def ListChunks(self, request: pb.ListChunksRequest, context: Context) -> pb.ListChunksResponse:
        collection_id = parse_id(request.collection_id, "collection")
        document_id = parse_id(request.document_id, "document")
        page = page_request(request.page.page_size, request.page.page_token, (INTEGER,))
        async with self._pool.acquire() as connection:
            store = DocumentStore(connection)
            if await store.get(collection_id, document_id) is None:
                raise NotFound(f"document {document_id} does not exist in collection {collection_id}")
            rows = await store.chunks(collection_id, document_id, page.limit, page.after)
        return pb.ListChunksResponse(
            chunks=[chunk_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.chunk_index,)),
        )

    async def GetChunk(self, request: pb.GetChunkRequest, context: Context) -> pb.GetChunkResponse:
        collection_id = parse_id(request.collection_id, "collection")
        chunk_id = parse_id(request.chunk_id, "chunk")
        async with self._pool.acquire() as connection:
            chunk = await DocumentStore(connection).chunk(collection_id, chunk_id)
        if chunk is None:
            raise NotFound(f"chunk {chunk_id} does not exist in collection {collection_id}")
        return pb.GetChunkResponse(chunk=chunk_to_pb(chunk))

    async def GetEmbedStatus(
        self, request: pb.GetEmbedStatusRequest, context: Context
    ) -> pb.GetEmbedStatusResponse:
        collection_id = await self._existing(request.collection_id)
        status = await self._collections.embed_status(collection_id)
        return pb.GetEmbedStatusResponse(
            total_chunks=status.total,
            embedded_chunks=status.embedded,
            pending_chunks=status.pending,
            stale_chunks=status.stale,
            model=status.model,
            outdated_chunker_chunks=status.outdated_chunker,
        )

    async def ReEmbedCollection(
        self, request: pb.ReEmbedCollectionRequest, context: Context
    ) -> pb.ReEmbedCollectionResponse:
        collection_id = await self._existing(request.collection_id)
        job = await self._collections.re_embed(collection_id, request.requested_by)
        return pb.ReEmbedCollectionResponse(job=job_to_pb(job))

    async def ListJobs(self, request: pb.ListJobsRequest, context: Context) -> pb.ListJobsResponse:
        ids = parse_ids(request.collection_ids, "collection")
        page = page_request(request.page.page_size, request.page.page_token, (TIMESTAMP, UUID))
        async with self._pool.acquire() as connection:
            rows = await JobStore(connection).find(
                ids,
                status=STATUS_FROM_PB.get(request.status),
                kind=KIND_FROM_PB.get(request.kind),
                limit=page.limit,
                after=page.after,
            )
        return pb.ListJobsResponse(
            jobs=[job_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.created_at, row.id)),
        )

    async def GetJob(self, request: pb.GetJobRequest, context: Context) -> pb.GetJobResponse:
        job_id = parse_id(request.job_id, "job")
        async with self._pool.acquire() as connection:
            job = await JobStore(connection).get(job_id)
        if job is None:
            raise NotFound(f"job {job_id} does not exist")
        return pb.GetJobResponse(job=job_to_pb(job))

    async def RetryJob(self, request: pb.RetryJobRequest, context: Context) -> pb.RetryJobResponse:
        job_id = parse_id(request.job_id, "job")
        job = await self._collections.retry(job_id, request.requested_by)
        return pb.RetryJobResponse(job=job_to_pb(job))

    async def SearchChunks(
        self, request: pb.SearchChunksRequest, context: Context
    ) -> pb.SearchChunksResponse:
        check_search(
            request.query,
            request.limit,
            request.rrf_k,
            (request.dense_weight, request.text_weight),
            request.query_embedding,
        )
        query = Query(
            text=request.query,
            scope=parse_ids(request.collection_ids, "collection"),
            limit=request.limit,
            embedding=list(request.query_embedding),
            model=request.embedding_model,
            dense_weight=request.dense_weight,
            text_weight=request.text_weight,
            rrf_k=request.rrf_k or DEFAULT_RRF_K,
            candidates=max(100, request.limit),
        )
        hits = await self._search.search(query, fill_to_limit=request.fill_to_limit)
        return pb.SearchChunksResponse(
            hits=[
                pb.ChunkHit(
                    chunk=chunk_to_pb(hit.chunk),
                    document_title=hit.document_title,
                    score=hit.score,
                    ranks=pb.StreamRanks(dense=hit.ranks.get("dense", 0), text=hit.ranks.get("text", 0)),
                )
                for hit in hits
            ]
        )
