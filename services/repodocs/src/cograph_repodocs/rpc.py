"""RepoDocsServicer: protobuf in, one call on the application layer, protobuf out.

Ids and page tokens are the request's spelling and are decoded here; every rule, lookup and
transaction is the application layer's. Refusals are cograph_errors, mapped to status codes by
the server interceptor.
"""

from __future__ import annotations

from typing import Any

from grpc import aio

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as pb_grpc
from cograph_errors import InvalidArgument, parse_id, parse_ids
from cograph_grpc import next_page_token, page_request
from cograph_grpc.paging import TEXT, TIMESTAMP, UUID
from cograph_repodocs.application.code import Code
from cograph_repodocs.application.documents import Documents
from cograph_repodocs.application.repositories import Repositories
from cograph_repodocs.application.search import Search
from cograph_repodocs.application.syncs import Syncs
from cograph_repodocs.application.webhooks import Webhooks
from cograph_repodocs.mapping import (
    PROVIDER_FROM_PB,
    VERDICT_TO_PB,
    access_to_pb,
    change_from_pb,
    chunk_to_pb,
    code_hit_to_pb,
    content_match_to_pb,
    doc_hit_to_pb,
    document_to_pb,
    kinds_from_pb,
    page_to_pb,
    query_from_pb,
    registration_from_pb,
    related_to_pb,
    repository_to_pb,
    source_lines_to_pb,
    summary_to_pb,
    sync_to_pb,
    tree_to_pb,
)

Context = aio.ServicerContext[Any, Any]


class RepoDocsServicer(pb_grpc.RepoDocsServiceServicer):
    def __init__(
        self,
        repositories: Repositories,
        syncs: Syncs,
        documents: Documents,
        code: Code,
        search: Search,
        webhooks: Webhooks,
    ) -> None:
        self._repositories = repositories
        self._syncs = syncs
        self._webhooks = webhooks
        self._documents = documents
        self._code = code
        self._search = search

    # Repositories.

    async def RegisterRepository(
        self, request: pb.RegisterRepositoryRequest, context: Context
    ) -> pb.RegisterRepositoryResponse:
        repository = await self._repositories.register(registration_from_pb(request))
        return pb.RegisterRepositoryResponse(repository=repository_to_pb(repository))

    async def GetRepository(
        self, request: pb.GetRepositoryRequest, context: Context
    ) -> pb.GetRepositoryResponse:
        key = request.WhichOneof("key")
        if key == "repository_id":
            repository = await self._repositories.get(parse_id(request.repository_id, "repository"))
        elif key == "ref":
            ref = request.ref
            repository = await self._repositories.get_by_name(ref.host, ref.owner, ref.name)
        else:
            raise InvalidArgument("give a repository_id or a ref")
        return pb.GetRepositoryResponse(repository=repository_to_pb(repository))

    async def ListRepositories(
        self, request: pb.ListRepositoriesRequest, context: Context
    ) -> pb.ListRepositoriesResponse:
        ids = parse_ids(list(request.repository_ids), "repository")
        page = page_request(request.page.page_size, request.page.page_token, (TEXT, TEXT, TEXT, UUID))
        found = await self._repositories.find(ids, limit=page.limit, after=page.after)
        return pb.ListRepositoriesResponse(
            repositories=[repository_to_pb(repository) for repository in found[: page.size]],
            next_page_token=next_page_token(
                found, page, lambda each: (each.row.host, each.row.owner, each.row.name, each.row.id)
            ),
        )

    async def ListRepositoryAccess(
        self, request: pb.ListRepositoryAccessRequest, context: Context
    ) -> pb.ListRepositoryAccessResponse:
        rows = await self._repositories.access(parse_ids(list(request.repository_ids), "repository"))
        return pb.ListRepositoryAccessResponse(entries=[access_to_pb(row) for row in rows])

    async def GetRepositoryAccess(
        self, request: pb.GetRepositoryAccessRequest, context: Context
    ) -> pb.GetRepositoryAccessResponse:
        ref = request.ref
        row = await self._repositories.access_of(ref.host, ref.owner, ref.name)
        if row is None:
            return pb.GetRepositoryAccessResponse()
        return pb.GetRepositoryAccessResponse(access=access_to_pb(row))

    async def AddRepositoryGrant(
        self, request: pb.AddRepositoryGrantRequest, context: Context
    ) -> pb.AddRepositoryGrantResponse:
        repository_id = parse_id(request.repository_id, "repository")
        repository = await self._repositories.add_grant(repository_id, request.group)
        return pb.AddRepositoryGrantResponse(repository=repository_to_pb(repository))

    async def RemoveRepositoryGrant(
        self, request: pb.RemoveRepositoryGrantRequest, context: Context
    ) -> pb.RemoveRepositoryGrantResponse:
        repository_id = parse_id(request.repository_id, "repository")
        repository = await self._repositories.remove_grant(repository_id, request.group)
        return pb.RemoveRepositoryGrantResponse(repository=repository_to_pb(repository))

    async def UpdateRepository(
        self, request: pb.UpdateRepositoryRequest, context: Context
    ) -> pb.UpdateRepositoryResponse:
        repository_id = parse_id(request.repository_id, "repository")
        repository = await self._repositories.update(repository_id, change_from_pb(request))
        return pb.UpdateRepositoryResponse(repository=repository_to_pb(repository))

    async def DeleteRepository(
        self, request: pb.DeleteRepositoryRequest, context: Context
    ) -> pb.DeleteRepositoryResponse:
        await self._repositories.delete(parse_id(request.repository_id, "repository"))
        return pb.DeleteRepositoryResponse()

    # Sync.

    async def SyncRepository(
        self, request: pb.SyncRepositoryRequest, context: Context
    ) -> pb.SyncRepositoryResponse:
        repository_id = parse_id(request.repository_id, "repository")
        row = await self._syncs.request(repository_id, force_relink=request.force_relink, wait=request.wait)
        return pb.SyncRepositoryResponse(sync=sync_to_pb(row))

    async def ListSyncs(self, request: pb.ListSyncsRequest, context: Context) -> pb.ListSyncsResponse:
        repository_id = parse_id(request.repository_id, "repository")
        page = page_request(request.page.page_size, request.page.page_token, (TIMESTAMP, UUID))
        rows = await self._syncs.history(repository_id, limit=page.limit, after=page.after)
        return pb.ListSyncsResponse(
            syncs=[sync_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.started_at, row.id)),
        )

    async def DeliverWebhook(
        self, request: pb.DeliverWebhookRequest, context: Context
    ) -> pb.DeliverWebhookResponse:
        provider = PROVIDER_FROM_PB.get(request.provider)
        if provider is None:
            raise InvalidArgument("provider must be github, gitlab or gitea")
        headers = {name.lower(): value for name, value in request.headers.items()}
        outcome = await self._webhooks.deliver(provider, headers, request.body)
        return pb.DeliverWebhookResponse(
            verdict=VERDICT_TO_PB[outcome.verdict], reason=outcome.reason, queued=outcome.queued
        )

    # Documents.

    async def ListDocuments(
        self, request: pb.ListDocumentsRequest, context: Context
    ) -> pb.ListDocumentsResponse:
        repository_id = parse_id(request.repository_id, "repository")
        kinds = kinds_from_pb(list(request.kinds))
        page = page_request(request.page.page_size, request.page.page_token, (TEXT,))
        rows = await self._documents.summaries(repository_id, kinds, limit=page.limit, after=page.after)
        return pb.ListDocumentsResponse(
            documents=[summary_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.path,)),
        )

    async def GetDocument(self, request: pb.GetDocumentRequest, context: Context) -> pb.GetDocumentResponse:
        repository_id = parse_id(request.repository_id, "repository")
        document_id = parse_id(request.document_id, "document")
        row = await self._documents.get(repository_id, document_id)
        return pb.GetDocumentResponse(document=document_to_pb(row))

    async def GetDocsTree(self, request: pb.GetDocsTreeRequest, context: Context) -> pb.GetDocsTreeResponse:
        roots = await self._documents.docs_tree(parse_id(request.repository_id, "repository"))
        return pb.GetDocsTreeResponse(roots=tree_to_pb(roots))

    async def GetDocsPage(self, request: pb.GetDocsPageRequest, context: Context) -> pb.GetDocsPageResponse:
        repository_id = parse_id(request.repository_id, "repository")
        return page_to_pb(await self._documents.docs_page(repository_id, request.slug))

    async def GetChunk(self, request: pb.GetChunkRequest, context: Context) -> pb.GetChunkResponse:
        repository_id = parse_id(request.repository_id, "repository")
        chunk_id = parse_id(request.chunk_id, "chunk")
        return pb.GetChunkResponse(chunk=chunk_to_pb(await self._documents.chunk(repository_id, chunk_id)))

    async def FindDocumentsByContent(
        self, request: pb.FindDocumentsByContentRequest, context: Context
    ) -> pb.FindDocumentsByContentResponse:
        scope = None if request.every_repository else parse_ids(list(request.repository_ids), "repository")
        matches = await self._documents.by_content(scope, list(request.content_hashes))
        return pb.FindDocumentsByContentResponse(matches=[content_match_to_pb(match) for match in matches])

    async def GetRelatedDocChunks(
        self, request: pb.GetRelatedDocChunksRequest, context: Context
    ) -> pb.GetRelatedDocChunksResponse:
        scope = parse_ids(list(request.repository_ids), "repository")
        node_ids = parse_ids(list(request.code_node_ids), "code node")
        related = await self._documents.related(node_ids, scope, request.limit)
        return pb.GetRelatedDocChunksResponse(related=related_to_pb(related))

    # Source.

    async def ReadFileRange(
        self, request: pb.ReadFileRangeRequest, context: Context
    ) -> pb.ReadFileRangeResponse:
        repository_id = parse_id(request.repository_id, "repository")
        source = await self._code.read_range(
            repository_id, request.path, request.start_line, request.end_line
        )
        return source_lines_to_pb(source)

    # Retrieval.

    async def SearchDocChunks(
        self, request: pb.SearchDocChunksRequest, context: Context
    ) -> pb.SearchDocChunksResponse:
        query = query_from_pb(request)
        hits = await self._search.docs(query, kinds_from_pb(list(request.kinds)))
        return pb.SearchDocChunksResponse(hits=[doc_hit_to_pb(hit) for hit in hits])

    async def SearchCode(self, request: pb.SearchCodeRequest, context: Context) -> pb.SearchCodeResponse:
        hits = await self._search.code(query_from_pb(request), request.symbol_weight)
        return pb.SearchCodeResponse(hits=[code_hit_to_pb(hit) for hit in hits])
