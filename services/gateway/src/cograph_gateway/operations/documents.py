"""A collection's documents and chunks: upload, read, delete."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph_gateway.access import parse_id
from cograph_gateway.convert import (
    chunk_from_pb,
    counts_from_pb,
    document_from_pb,
    document_result_from_pb,
    summary_from_pb,
)
from cograph_gateway.duplicates import warn_of_repository_copies
from cograph_gateway.errors import Problem
from cograph_gateway.operations.base import OperationGroup
from cograph_gateway.operations.paging import PageRequest, page_of
from cograph_gateway.policy import Operation
from cograph_gateway.schemas import (
    BatchResult,
    Chunk,
    Document,
    DocumentSummary,
    DocumentUpload,
    Page,
    UploadResult,
)

# Why a single document was refused, as HTTP: too large is 413, anything else about it 422.
_REASON_STATUS = {"too_large": 413}

# Reads an upload's (source_key, content) from the request: only once the caller may upload.
UploadReader = Callable[[], Awaitable[tuple[str, bytes]]]


class DocumentOperations(OperationGroup):
    async def upload(self, collection_id: str, read: UploadReader) -> UploadResult:
        """Store one document; a document the collection refuses is a problem with its reason."""
        found = await self._access.collection(self._principal, Operation.UPLOAD_DOCUMENT, collection_id)
        source_key, content = await read()
        response = await self._backends.collections.UploadDocument(
            cpb.UploadDocumentRequest(
                collection_id=found.collection_id,
                document=cpb.DocumentContent(source_key=source_key, content=content),
                requested_by=self._principal.subject,
            )
        )
        result = document_result_from_pb(response.result)
        if result.error is not None or result.state is None or result.document_id is None:
            reason = result.error.reason if result.error else "unknown"
            message = result.error.message if result.error else "the document was not stored"
            raise Problem(_REASON_STATUS.get(reason, 422), message, reason=reason, source_key=source_key)
        await warn_of_repository_copies([result], [content], self._principal, self._backends, self._access)
        return UploadResult(
            source_key=result.source_key,
            document_id=result.document_id,
            state=result.state,
            job_id=response.job_id,
            warnings=result.warnings,
        )

    async def upload_batch(self, collection_id: str, documents: list[DocumentUpload]) -> BatchResult:
        """Store many documents, each judged on its own: a refused one is reported, the others stored."""
        found = await self._access.collection(self._principal, Operation.UPLOAD_DOCUMENTS, collection_id)
        contents = [d.content.encode() for d in documents]
        response = await self._backends.collections.UploadDocuments(
            cpb.UploadDocumentsRequest(
                collection_id=found.collection_id,
                documents=[
                    cpb.DocumentContent(source_key=d.source_key, content=content)
                    for d, content in zip(documents, contents, strict=True)
                ],
                requested_by=self._principal.subject,
            )
        )
        results = [document_result_from_pb(r) for r in response.results]
        await warn_of_repository_copies(results, contents, self._principal, self._backends, self._access)
        return BatchResult(results=results, counts=counts_from_pb(response.counts), job_id=response.job_id)

    async def summaries(self, collection_id: str, page: PageRequest) -> Page[DocumentSummary]:
        found = await self._access.collection(self._principal, Operation.LIST_DOCUMENTS, collection_id)
        response = await self._backends.collections.ListDocuments(
            cpb.ListDocumentsRequest(collection_id=found.collection_id, page=page.collections())
        )
        return page_of([summary_from_pb(d) for d in response.documents], response.next_page_token)

    async def get(
        self,
        collection_id: str,
        document_id: str,
        operation: Operation = Operation.GET_DOCUMENT,
    ) -> Document:
        """One document in full, with its parsed metadata."""
        found = await self._access.collection(self._principal, operation, collection_id)
        response = await self._backends.collections.GetDocument(
            cpb.GetDocumentRequest(
                collection_id=found.collection_id, document_id=parse_id(document_id, "document")
            )
        )
        return document_from_pb(response.document)

    async def delete(self, collection_id: str, document_id: str) -> None:
        found = await self._access.collection(self._principal, Operation.DELETE_DOCUMENT, collection_id)
        await self._backends.collections.DeleteDocument(
            cpb.DeleteDocumentRequest(
                collection_id=found.collection_id,
                document_id=parse_id(document_id, "document"),
                requested_by=self._principal.subject,
            )
        )

    async def chunks(self, collection_id: str, document_id: str, page: PageRequest) -> Page[Chunk]:
        """A document's chunks: exactly what was embedded."""
        found = await self._access.collection(self._principal, Operation.LIST_CHUNKS, collection_id)
        response = await self._backends.collections.ListChunks(
            cpb.ListChunksRequest(
                collection_id=found.collection_id,
                document_id=parse_id(document_id, "document"),
                page=page.collections(),
            )
        )
        return page_of([chunk_from_pb(c) for c in response.chunks], response.next_page_token)

    async def chunk(
        self,
        collection_id: str,
        chunk_id: str,
        operation: Operation = Operation.GET_CHUNK,
    ) -> Chunk:
        found = await self._access.collection(self._principal, operation, collection_id)
        response = await self._backends.collections.GetChunk(
            cpb.GetChunkRequest(collection_id=found.collection_id, chunk_id=parse_id(chunk_id, "chunk"))
        )
        return chunk_from_pb(response.chunk)
