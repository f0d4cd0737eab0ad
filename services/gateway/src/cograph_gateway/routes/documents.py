"""/api/md-collections/{id}/documents and /chunks: uploads, documents with their metadata, chunks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from litestar import Controller, Request, delete, get, post
from litestar.datastructures import UploadFile
from litestar.di import NamedDependency
from litestar.exceptions import ClientException
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import JSONBody

from cograph_errors import shown
from cograph_gateway import schemas as s
from cograph_gateway.errors import Problem, cut, problem_responses
from cograph_gateway.operations import Operations
from cograph_gateway.operations.paging import PageRequest
from cograph_gateway.routes.common import ChunkId, CollectionId, DocumentId

Id = CollectionId

_SOURCE_KEY = Schema(
    type=OpenAPIType.STRING,
    min_length=1,
    max_length=1024,
    pattern=s.KEY,
    description="The path or name the document is stored under; its identity in the collection.",
)
_UPLOAD_BODY = RequestBody(
    required=True,
    description="JSON {source_key, content}, or multipart/form-data with a `file` part "
    "(its file name is the source_key unless a `source_key` field is given).",
    content={
        "application/json": OpenAPIMediaType(
            schema=Schema(
                type=OpenAPIType.OBJECT,
                required=["source_key", "content"],
                properties={
                    "source_key": _SOURCE_KEY,
                    "content": Schema(type=OpenAPIType.STRING, description="UTF-8 markdown."),
                },
                additional_properties=False,
            )
        ),
        "multipart/form-data": OpenAPIMediaType(
            schema=Schema(
                type=OpenAPIType.OBJECT,
                required=["file"],
                properties={
                    "file": Schema(type=OpenAPIType.STRING, content_media_type="application/octet-stream"),
                    "source_key": _SOURCE_KEY,
                },
            )
        ),
    },
)


@dataclass
class _UploadOperation(Operation):
    """One endpoint, two body encodings: Litestar's generator knows only one, so it is stated here."""

    def __post_init__(self) -> None:
        self.request_body = _UPLOAD_BODY


async def _read_upload(request: Request[Any, Any, Any]) -> tuple[str, bytes]:
    """(source_key, content) from a JSON or a multipart body."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type == "multipart/form-data":
        try:
            form = await request.form()
        except ClientException as error:
            if error.status_code == 413:  # over the request size limit, as a JSON body would be
                raise Problem(413, f"the multipart body is too large: {error.detail}") from None
            if error.detail == "Request Entity Too Large":  # Litestar's words for its parser's limits
                raise Problem(
                    400,
                    "the multipart body is over the parser's limits (1,000 parts, 8 headers to a part,"
                    " 4 KB to a header line): a document is one `file` part, with an optional"
                    " `source_key` field",
                ) from None
            raise Problem(400, f"the multipart body cannot be read: {error.detail}") from None
        except (UnicodeError, LookupError):  # a part without a filename is decoded as text (any codec named)
            raise Problem(
                400,
                "the multipart body cannot be read: a part without a filename is not valid text"
                " (UTF-8, or the charset the part names); send the document as a `file` part with"
                " a filename",
            ) from None
        try:
            if len(form.getall("file", [])) > 1:
                raise Problem(
                    400,
                    "a multipart upload carries one document in one `file` part: upload several"
                    " with POST /documents/batch",
                )
            file = form.get("file")
            source_key = form.get("source_key")
            given_key = source_key if isinstance(source_key, str) and source_key.strip() else None
            if isinstance(file, str) and given_key:  # a `file` part sent without a filename
                return given_key, file.encode()
            if not isinstance(file, UploadFile):
                raise Problem(
                    400,
                    "a multipart upload needs a `file` part holding the document"
                    + ("" if file is None else ", and a `source_key` field when that part has no filename"),
                )
            content = await file.read()
            key = given_key or file.filename
        finally:
            for value in form.values():
                if isinstance(value, UploadFile):
                    await value.close()
        if not key or not key.strip():
            raise Problem(400, "the uploaded file has no name: give a `source_key` field")
        return key, content
    if media_type in ("application/json", ""):
        body = await request.body()
        try:
            upload = msgspec.json.decode(body, type=s.DocumentUpload)
        except msgspec.ValidationError as error:
            raise Problem(400, f"the upload is not valid: {cut(str(error))}") from None
        except msgspec.DecodeError as error:
            if not _is_utf8(body):
                raise Problem(
                    400,
                    "the body is not UTF-8, as JSON must be: send a file in another encoding as multipart",
                ) from None
            raise Problem(
                400, f"the body is not valid JSON ({error}): send {{source_key, content}} or a multipart file"
            ) from None
        return upload.source_key, upload.content.encode()
    raise Problem(
        415,
        f"cannot upload a {shown(media_type)} body: send JSON {{source_key, content}} or multipart/form-data",
    )


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


class DocumentsController(Controller):
    path = "/api/md-collections/{collection_id:str}"
    tags = ("documents",)

    @post(
        "/documents",
        summary="Upload one document (JSON or a multipart file); answers its id and state",
        description="The state is created, replaced (same source_key, new content) or unchanged. "
        "A document the collection refuses is a 4xx problem whose `reason` says why.",
        operation_class=_UploadOperation,
        responses=problem_responses(403, 404, 413, 415, 422),
    )
    async def upload_document(
        self,
        collection_id: Id,
        request: Request[Any, Any, Any],
        ops: NamedDependency[Operations],
    ) -> s.UploadResult:
        return await ops.documents.upload(collection_id, lambda: _read_upload(request))

    @post(
        "/documents/batch",
        summary="Upload many documents; answers each one's result and the aggregate counts",
        description="Documents are judged one by one: a refused document is reported in its result "
        "(with the reason) and the others are still stored.",
        responses=problem_responses(403, 404, 413),
    )
    async def upload_documents(
        self,
        collection_id: Id,
        data: JSONBody[s.BatchUpload],
        ops: NamedDependency[Operations],
    ) -> s.BatchResult:
        return await ops.documents.upload_batch(collection_id, data.documents)

    @get("/documents", summary="The collection's documents", responses=problem_responses(403, 404))
    async def list_documents(
        self,
        collection_id: Id,
        ops: NamedDependency[Operations],
        page: NamedDependency[PageRequest],
    ) -> s.Page[s.DocumentSummary]:
        return await ops.documents.summaries(collection_id, page)

    @get(
        "/documents/{document_id:str}",
        summary="One document in full, with its parsed metadata",
        description="frontmatter (a JSON object), title, heading_tree, code_blocks, tables, links "
        "(with link_type and the target_document_id they resolved to), word_count and line_count.",
        responses=problem_responses(403, 404),
    )
    async def get_document(
        self,
        collection_id: Id,
        document_id: DocumentId,
        ops: NamedDependency[Operations],
    ) -> s.Document:
        return await ops.documents.get(collection_id, document_id)

    @delete(
        "/documents/{document_id:str}",
        summary="Delete a document and its chunks (owner or admin)",
        responses=problem_responses(403, 404),
    )
    async def delete_document(
        self,
        collection_id: Id,
        document_id: DocumentId,
        ops: NamedDependency[Operations],
    ) -> None:
        await ops.documents.delete(collection_id, document_id)

    @get(
        "/documents/{document_id:str}/chunks",
        summary="The chunks of a document: exactly what was embedded, with heading paths",
        responses=problem_responses(403, 404),
    )
    async def list_chunks(
        self,
        collection_id: Id,
        document_id: DocumentId,
        ops: NamedDependency[Operations],
        page: NamedDependency[PageRequest],
    ) -> s.Page[s.Chunk]:
        return await ops.documents.chunks(collection_id, document_id, page)

    @get("/chunks/{chunk_id:str}", summary="One chunk in full", responses=problem_responses(403, 404))
    async def get_chunk(
        self,
        collection_id: Id,
        chunk_id: ChunkId,
        ops: NamedDependency[Operations],
    ) -> s.Chunk:
        return await ops.documents.chunk(collection_id, chunk_id)
