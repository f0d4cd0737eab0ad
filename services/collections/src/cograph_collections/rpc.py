"""CollectionsServicer: protobuf in, calls on the application layer, protobuf out.

It reads what only the wire has (ids as text, page tokens, protobuf enums) and makes the argument
checks every service makes alike (cograph_errors), in the order the request's fields are read;
the domain's own rules, the transactions and the stores are the application layer's. The server
interceptor turns the errors raised into status codes.
"""

from __future__ import annotations

from typing import Any

from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_collections.application.collections import Collections
from cograph_collections.application.documents import Documents
from cograph_collections.application.jobs import Jobs
from cograph_collections.application.search import ChunkSearch
from cograph_collections.domain.jobs import JobQuery
from cograph_collections.domain.uploads import Upload
from cograph_collections.mapping import (
    KIND_FROM_PB,
    STATUS_FROM_PB,
    access_to_pb,
    chunk_to_pb,
    collection_to_pb,
    counts_to_pb,
    document_to_pb,
    hit_to_pb,
    job_to_pb,
    match_to_pb,
    outcome_to_pb,
    summary_to_pb,
    visibility_from_pb,
)
from cograph_errors import check_search, check_typed_text, parse_content_hashes, parse_id, parse_ids
from cograph_grpc import next_page_token, page_request
from cograph_grpc.paging import INTEGER, TEXT, TIMESTAMP, UUID
from cograph_retrieval import DEFAULT_RRF_K, Query

Context = aio.ServicerContext[Any, Any]


class CollectionsServicer(pb_grpc.CollectionsServiceServicer):
    def __init__(
        self, collections: Collections, documents: Documents, jobs: Jobs, search: ChunkSearch
    ) -> None:
        self._collections = collections
        self._documents = documents
        self._jobs = jobs
        self._search = search

    async def CreateCollection(
        self, request: pb.CreateCollectionRequest, context: Context
    ) -> pb.CreateCollectionResponse:
        collection = await self._collections.create(
            request.name, request.description, visibility_from_pb(request.visibility), request.owner
        )
        return pb.CreateCollectionResponse(collection=collection_to_pb(collection))

    async def GetCollection(
        self, request: pb.GetCollectionRequest, context: Context
    ) -> pb.GetCollectionResponse:
        collection = await self._collections.get(parse_id(request.collection_id, "collection"))
        return pb.GetCollectionResponse(collection=collection_to_pb(collection))

    async def ListCollections(
        self, request: pb.ListCollectionsRequest, context: Context
    ) -> pb.ListCollectionsResponse:
        ids = parse_ids(request.collection_ids, "collection")
        check_typed_text(request.query, "name filter")
        page = page_request(request.page.page_size, request.page.page_token, (TEXT, UUID))
        rows = await self._collections.find(ids, query=request.query, limit=page.limit, after=page.after)
        return pb.ListCollectionsResponse(
            collections=[collection_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.name, row.id)),
        )

    async def UpdateCollection(
        self, request: pb.UpdateCollectionRequest, context: Context
    ) -> pb.UpdateCollectionResponse:
        collection = await self._collections.update(
            parse_id(request.collection_id, "collection"),
            name=request.name if request.HasField("name") else None,
            description=request.description if request.HasField("description") else None,
            visibility=visibility_from_pb(request.visibility) if request.HasField("visibility") else None,
        )
        return pb.UpdateCollectionResponse(collection=collection_to_pb(collection))

    async def DeleteCollection(
        self, request: pb.DeleteCollectionRequest, context: Context
    ) -> pb.DeleteCollectionResponse:
        await self._collections.delete(parse_id(request.collection_id, "collection"))
        return pb.DeleteCollectionResponse()

    async def ListCollectionAccess(
        self, request: pb.ListCollectionAccessRequest, context: Context
    ) -> pb.ListCollectionAccessResponse:
        rows = await self._collections.access(parse_ids(list(request.collection_ids), "collection"))
        return pb.ListCollectionAccessResponse(entries=[access_to_pb(row) for row in rows])

    async def GetCollectionAccess(
        self, request: pb.GetCollectionAccessRequest, context: Context
    ) -> pb.GetCollectionAccessResponse:
        access = await self._collections.access_of(parse_id(request.collection_id, "collection"))
        if access is None:
            return pb.GetCollectionAccessResponse()
        return pb.GetCollectionAccessResponse(access=access_to_pb(access))

    async def AddGrant(self, request: pb.AddGrantRequest, context: Context) -> pb.AddGrantResponse:
        collection_id = parse_id(request.collection_id, "collection")
        collection = await self._collections.add_grant(collection_id, request.group)
        return pb.AddGrantResponse(collection=collection_to_pb(collection))

    async def RemoveGrant(self, request: pb.RemoveGrantRequest, context: Context) -> pb.RemoveGrantResponse:
        collection_id = parse_id(request.collection_id, "collection")
        collection = await self._collections.remove_grant(collection_id, request.group)
        return pb.RemoveGrantResponse(collection=collection_to_pb(collection))

    async def UploadDocument(
        self, request: pb.UploadDocumentRequest, context: Context
    ) -> pb.UploadDocumentResponse:
        collection_id = parse_id(request.collection_id, "collection")
        upload = Upload(request.document.source_key, request.document.content)
        outcomes, job_id = await self._documents.upload(collection_id, [upload], request.requested_by)
        return pb.UploadDocumentResponse(result=outcome_to_pb(outcomes[0]), job_id=str(job_id))

    async def UploadDocuments(
        self, request: pb.UploadDocumentsRequest, context: Context
    ) -> pb.UploadDocumentsResponse:
        collection_id = parse_id(request.collection_id, "collection")
        uploads = [Upload(d.source_key, d.content) for d in request.documents]
        outcomes, job_id = await self._documents.upload(collection_id, uploads, request.requested_by)
        return pb.UploadDocumentsResponse(
            results=[outcome_to_pb(o) for o in outcomes], counts=counts_to_pb(outcomes), job_id=str(job_id)
        )

    async def GetDocument(self, request: pb.GetDocumentRequest, context: Context) -> pb.GetDocumentResponse:
        collection_id = parse_id(request.collection_id, "collection")
        document_id = parse_id(request.document_id, "document")
        document, links = await self._documents.get(collection_id, document_id)
        return pb.GetDocumentResponse(document=document_to_pb(document, links))

    async def ListDocuments(
        self, request: pb.ListDocumentsRequest, context: Context
    ) -> pb.ListDocumentsResponse:
        collection_id = parse_id(request.collection_id, "collection")
        # A collection that does not exist is NOT_FOUND, whatever its page token holds.
        await self._collections.get(collection_id)
        page = page_request(request.page.page_size, request.page.page_token, (TEXT,))
        rows = await self._documents.summaries(collection_id, limit=page.limit, after=page.after)
        return pb.ListDocumentsResponse(
            documents=[summary_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.source_key,)),
        )

    async def DeleteDocument(
        self, request: pb.DeleteDocumentRequest, context: Context
    ) -> pb.DeleteDocumentResponse:
        collection_id = parse_id(request.collection_id, "collection")
        document_id = parse_id(request.document_id, "document")
        await self._documents.delete(collection_id, document_id, request.requested_by)
        return pb.DeleteDocumentResponse()

    async def FindDocumentsByContent(
        self, request: pb.FindDocumentsByContentRequest, context: Context
    ) -> pb.FindDocumentsByContentResponse:
        scope = None if request.every_collection else parse_ids(list(request.collection_ids), "collection")
        hashes = parse_content_hashes(list(request.content_hashes))
        matches = await self._documents.by_content(scope, hashes)
        return pb.FindDocumentsByContentResponse(matches=[match_to_pb(match) for match in matches])

    async def ListChunks(self, request: pb.ListChunksRequest, context: Context) -> pb.ListChunksResponse:
        collection_id = parse_id(request.collection_id, "collection")
        document_id = parse_id(request.document_id, "document")
        page = page_request(request.page.page_size, request.page.page_token, (INTEGER,))
        rows = await self._documents.chunks(collection_id, document_id, limit=page.limit, after=page.after)
        return pb.ListChunksResponse(
            chunks=[chunk_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.chunk_index,)),
        )

    async def GetChunk(self, request: pb.GetChunkRequest, context: Context) -> pb.GetChunkResponse:
        collection_id = parse_id(request.collection_id, "collection")
        chunk_id = parse_id(request.chunk_id, "chunk")
        chunk = await self._documents.chunk(collection_id, chunk_id)
        return pb.GetChunkResponse(chunk=chunk_to_pb(chunk))

    async def GetEmbedStatus(
        self, request: pb.GetEmbedStatusRequest, context: Context
    ) -> pb.GetEmbedStatusResponse:
        status = await self._documents.embed_status(parse_id(request.collection_id, "collection"))
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
        job = await self._jobs.re_embed(parse_id(request.collection_id, "collection"), request.requested_by)
        return pb.ReEmbedCollectionResponse(job=job_to_pb(job, self._jobs.max_attempts))

    async def ListJobs(self, request: pb.ListJobsRequest, context: Context) -> pb.ListJobsResponse:
        ids = parse_ids(request.collection_ids, "collection")
        page = page_request(request.page.page_size, request.page.page_token, (TIMESTAMP, UUID))
        query = JobQuery(
            collection_ids=ids,
            status=STATUS_FROM_PB.get(request.status),
            kind=KIND_FROM_PB.get(request.kind),
            limit=page.limit,
            after=tuple(page.after),
        )
        rows = await self._jobs.find(query)
        return pb.ListJobsResponse(
            jobs=[job_to_pb(row, self._jobs.max_attempts) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.created_at, row.id)),
        )

    async def GetJob(self, request: pb.GetJobRequest, context: Context) -> pb.GetJobResponse:
        job = await self._jobs.get(parse_id(request.job_id, "job"))
        return pb.GetJobResponse(job=job_to_pb(job, self._jobs.max_attempts))

    async def RetryJob(self, request: pb.RetryJobRequest, context: Context) -> pb.RetryJobResponse:
        job = await self._jobs.retry(parse_id(request.job_id, "job"), request.requested_by)
        return pb.RetryJobResponse(job=job_to_pb(job, self._jobs.max_attempts))

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
        return pb.SearchChunksResponse(hits=[hit_to_pb(hit) for hit in hits])
