"""RepoDocsServicer: protobuf in, one domain or store call, protobuf out. Status codes come from
domain errors (cograph_grpc.errors), mapped by the server interceptor."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

import asyncpg
from grpc import aio

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as pb_grpc
from cograph_db import Connection
from cograph_errors import (
    InvalidArgument,
    NotFound,
    Unavailable,
    check_search,
    check_typed_text,
    parse_content_hashes,
    parse_id,
    parse_ids,
)
from cograph_grpc import next_page_token, page_request
from cograph_grpc.paging import TEXT, TIMESTAMP, UUID
from cograph_repodocs import reader
from cograph_repodocs.checkouts import Checkouts
from cograph_repodocs.domain import rules
from cograph_repodocs.files import read_committed_range, read_range
from cograph_repodocs.git import GitError
from cograph_repodocs.mapping import (
    access_to_pb,
    chunk_to_pb,
    document_to_pb,
    file_range_to_pb,
    kinds_from_pb,
    node_to_pb,
    page_to_pb,
    registration_from_pb,
    related_to_pb,
    repository_to_pb,
    summary_to_pb,
    sync_to_pb,
    tree_to_pb,
)
from cograph_repodocs.registry import Registry
from cograph_repodocs.retrieval import RepoSearch
from cograph_repodocs.runner import SyncRunner
from cograph_repodocs.stores.code import CodeStore
from cograph_repodocs.stores.documents import DocumentStore
from cograph_repodocs.stores.repositories import RepositoryRow, RepositoryStore
from cograph_repodocs.stores.syncs import SyncStore, SyncTrigger
from cograph_retrieval import DEFAULT_RRF_K, Query

log = logging.getLogger(__name__)

Context = aio.ServicerContext[Any, Any]


async def _require(connection: Connection, repository_id: uuid.UUID) -> RepositoryRow:
    row = await RepositoryStore(connection).get(repository_id)
    if row is None:
        raise NotFound(f"repository {repository_id} does not exist")
    return row


class RepoDocsServicer(pb_grpc.RepoDocsServiceServicer):
    def __init__(
        self,
        pool: asyncpg.Pool[Any],
        registry: Registry,
        runner: SyncRunner,
        checkouts: Checkouts,
        *,
        max_file_bytes: int,
    ) -> None:
        self._pool = pool
        self._registry = registry
        self._runner = runner
        self._checkouts = checkouts
        self._max_file_bytes = max_file_bytes
        self._search = RepoSearch(pool)

    async def _repository_pb(self, connection: Connection, row: RepositoryRow) -> pb.Repository:
        last = await SyncStore(connection).last([row.id])
        return repository_to_pb(row, last.get(row.id))

    # Repositories.

    async def RegisterRepository(
        self, request: pb.RegisterRepositoryRequest, context: Context
    ) -> pb.RegisterRepositoryResponse:
        row = await self._registry.register(registration_from_pb(request))
        async with self._pool.acquire() as connection:
            return pb.RegisterRepositoryResponse(repository=await self._repository_pb(connection, row))

    async def GetRepository(
        self, request: pb.GetRepositoryRequest, context: Context
    ) -> pb.GetRepositoryResponse:
        key = request.WhichOneof("key")
        async with self._pool.acquire() as connection:
            if key == "repository_id":
                repository_id = parse_id(request.repository_id, "repository")
            elif key == "ref":
                ref = rules.check_ref(request.ref.host, request.ref.owner, request.ref.name)
                found = await RepositoryStore(connection).id_of(ref)
                if found is None:
                    raise NotFound(f"repository {ref} is not registered")
                repository_id = found
            else:
                raise InvalidArgument("give a repository_id or a ref")
            row = await _require(connection, repository_id)
            return pb.GetRepositoryResponse(repository=await self._repository_pb(connection, row))

    async def ListRepositories(
        self, request: pb.ListRepositoriesRequest, context: Context
    ) -> pb.ListRepositoriesResponse:
        ids = parse_ids(list(request.repository_ids), "repository")
        page = page_request(request.page.page_size, request.page.page_token, (TEXT, TEXT, TEXT, UUID))
        async with self._pool.acquire() as connection:
            rows = await RepositoryStore(connection).find(ids, limit=page.limit, after=page.after)
            last = await SyncStore(connection).last([row.id for row in rows[: page.size]])
        return pb.ListRepositoriesResponse(
            repositories=[repository_to_pb(row, last.get(row.id)) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.host, row.owner, row.name, row.id)),
        )

    async def ListRepositoryAccess(
        self, request: pb.ListRepositoryAccessRequest, context: Context
    ) -> pb.ListRepositoryAccessResponse:
        async with self._pool.acquire() as connection:
            rows = await RepositoryStore(connection).access()
        return pb.ListRepositoryAccessResponse(entries=[access_to_pb(row) for row in rows])

    async def GetRepositoryAccess(
        self, request: pb.GetRepositoryAccessRequest, context: Context
    ) -> pb.GetRepositoryAccessResponse:
        # Checked as GetRepository checks a ref: a name no repository can have is the caller's mistake.
        ref = rules.check_ref(request.ref.host, request.ref.owner, request.ref.name)
        async with self._pool.acquire() as connection:
            row = await RepositoryStore(connection).access_of(ref)
        if row is None:
            return pb.GetRepositoryAccessResponse()
        return pb.GetRepositoryAccessResponse(access=access_to_pb(row))

    async def AddRepositoryGrant(
        self, request: pb.AddRepositoryGrantRequest, context: Context
    ) -> pb.AddRepositoryGrantResponse:
        repository_id = parse_id(request.repository_id, "repository")
        group = rules.check_group(request.group)
        async with self._pool.acquire() as connection, connection.transaction():
            await _require(connection, repository_id)
            await RepositoryStore(connection).add_grant(repository_id, group)
            row = await _require(connection, repository_id)
            return pb.AddRepositoryGrantResponse(repository=await self._repository_pb(connection, row))

    async def RemoveRepositoryGrant(
        self, request: pb.RemoveRepositoryGrantRequest, context: Context
    ) -> pb.RemoveRepositoryGrantResponse:
        repository_id = parse_id(request.repository_id, "repository")
        async with self._pool.acquire() as connection, connection.transaction():
            await _require(connection, repository_id)
            await RepositoryStore(connection).remove_grant(repository_id, rules.check_group(request.group))
            row = await _require(connection, repository_id)
            return pb.RemoveRepositoryGrantResponse(repository=await self._repository_pb(connection, row))

    # Sync.

    async def SyncRepository(
        self, request: pb.SyncRepositoryRequest, context: Context
    ) -> pb.SyncRepositoryResponse:
        repository_id = parse_id(request.repository_id, "repository")
        row = await self._runner.sync(
            repository_id, SyncTrigger.MANUAL, force_relink=request.force_relink, wait=request.wait
        )
        return pb.SyncRepositoryResponse(sync=sync_to_pb(row))

    async def ListSyncs(self, request: pb.ListSyncsRequest, context: Context) -> pb.ListSyncsResponse:
        repository_id = parse_id(request.repository_id, "repository")
        page = page_request(request.page.page_size, request.page.page_token, (TIMESTAMP, UUID))
        async with self._pool.acquire() as connection:
            await _require(connection, repository_id)
            rows = await SyncStore(connection).history(repository_id, limit=page.limit, after=page.after)
        return pb.ListSyncsResponse(
            syncs=[sync_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.started_at, row.id)),
        )

    # Documents.

    async def ListDocuments(
        self, request: pb.ListDocumentsRequest, context: Context
    ) -> pb.ListDocumentsResponse:
        repository_id = parse_id(request.repository_id, "repository")
        kinds = kinds_from_pb(list(request.kinds))
        page = page_request(request.page.page_size, request.page.page_token, (TEXT,))
        async with self._pool.acquire() as connection:
            await _require(connection, repository_id)
            rows = await DocumentStore(connection).summaries(
                repository_id, kinds, limit=page.limit, after=page.after
            )
        return pb.ListDocumentsResponse(
            documents=[summary_to_pb(row) for row in rows[: page.size]],
            next_page_token=next_page_token(rows, page, lambda row: (row.path,)),
        )

    async def GetDocument(self, request: pb.GetDocumentRequest, context: Context) -> pb.GetDocumentResponse:
        repository_id = parse_id(request.repository_id, "repository")
        document_id = parse_id(request.document_id, "document")
        async with self._pool.acquire() as connection:
            row = await DocumentStore(connection).get(repository_id, document_id)
        if row is None:
            raise NotFound(f"document {document_id} does not exist in this repository")
        return pb.GetDocumentResponse(document=document_to_pb(row))

    async def GetDocsTree(self, request: pb.GetDocsTreeRequest, context: Context) -> pb.GetDocsTreeResponse:
        repository_id = parse_id(request.repository_id, "repository")
        async with self._pool.acquire() as connection:
            await _require(connection, repository_id)
            roots = await reader.docs_tree(connection, repository_id)
        return pb.GetDocsTreeResponse(roots=tree_to_pb(roots))

    async def GetDocsPage(self, request: pb.GetDocsPageRequest, context: Context) -> pb.GetDocsPageResponse:
        repository_id = parse_id(request.repository_id, "repository")
        if not request.slug:
            raise InvalidArgument("give the slug of a docs page")
        check_typed_text(request.slug, "slug")
        async with self._pool.acquire() as connection:
            await _require(connection, repository_id)
            page = await reader.docs_page(connection, repository_id, request.slug)
        return page_to_pb(page)

    async def GetChunk(self, request: pb.GetChunkRequest, context: Context) -> pb.GetChunkResponse:
        repository_id = parse_id(request.repository_id, "repository")
        chunk_id = parse_id(request.chunk_id, "chunk")
        async with self._pool.acquire() as connection:
            row = await DocumentStore(connection).chunk(repository_id, chunk_id)
        if row is None:
            raise NotFound(f"chunk {chunk_id} does not exist in this repository")
        return pb.GetChunkResponse(chunk=chunk_to_pb(row))

    async def FindDocumentsByContent(
        self, request: pb.FindDocumentsByContentRequest, context: Context
    ) -> pb.FindDocumentsByContentResponse:
        scope = parse_ids(list(request.repository_ids), "repository")
        hashes = parse_content_hashes(list(request.content_hashes))
        if not scope or not hashes:
            return pb.FindDocumentsByContentResponse()
        async with self._pool.acquire() as connection:
            matches = await DocumentStore(connection).by_content(scope, hashes)
        return pb.FindDocumentsByContentResponse(
            matches=[
                pb.ContentMatch(
                    content_hash=match.content_hash,
                    repository_id=str(match.repository_id),
                    repository=match.repository,
                    document_id=str(match.document_id),
                    path=match.path,
                )
                for match in matches
            ]
        )

    # Retrieval.

    async def GetRelatedDocChunks(
        self, request: pb.GetRelatedDocChunksRequest, context: Context
    ) -> pb.GetRelatedDocChunksResponse:
        scope = parse_ids(list(request.repository_ids), "repository")
        node_ids = parse_ids(list(request.code_node_ids), "code node")
        if len(node_ids) > rules.MAX_RELATED_NODES:
            raise InvalidArgument(f"ask for at most {rules.MAX_RELATED_NODES} code nodes at once")
        limit = rules.related_limit(request.limit)
        async with self._pool.acquire() as connection:
            known = await CodeStore(connection).in_scope(node_ids, scope)
            rows = await DocumentStore(connection).related(node_ids, scope, limit)
        found = [node_id for node_id in node_ids if node_id in known]
        return pb.GetRelatedDocChunksResponse(related=related_to_pb(found, rows))

    # Source.

    async def ReadFileRange(
        self, request: pb.ReadFileRangeRequest, context: Context
    ) -> pb.ReadFileRangeResponse:
        repository_id = parse_id(request.repository_id, "repository")
        async with self._pool.acquire() as connection:
            repository = await _require(connection, repository_id)
            commit = await SyncStore(connection).synced_commit(repository_id)
        root: Path = self._checkouts.root(repository)
        if not await asyncio.to_thread(root.is_dir):
            raise NotFound(f"repository {repository.ref} has no checkout yet: sync it first")
        if repository.checkout_path is not None or not commit:  # a checkout path is read as it is
            found = await asyncio.to_thread(
                read_range, root, request.path, request.start_line, request.end_line, self._max_file_bytes
            )
            return file_range_to_pb(found, commit)
        try:
            found = await read_committed_range(
                self._checkouts.git,
                root,
                commit,
                request.path,
                request.start_line,
                request.end_line,
                self._max_file_bytes,
            )
        except GitError as error:
            log.warning("reading %s of %s at %s: %s", request.path, repository.ref, commit, error)
            raise Unavailable(
                f"the checkout of {repository.ref} cannot be read at the indexed commit now: try again"
            ) from None
        return file_range_to_pb(found, commit)

    # Retrieval.

    async def SearchDocChunks(
        self, request: pb.SearchDocChunksRequest, context: Context
    ) -> pb.SearchDocChunksResponse:
        query = _query(request)
        hits = await self._search.docs(query, kinds_from_pb(list(request.kinds)))
        return pb.SearchDocChunksResponse(
            hits=[
                pb.DocChunkHit(
                    chunk=chunk_to_pb(hit.chunk),
                    document_title=hit.chunk.document_title,
                    score=hit.score,
                    ranks=pb.StreamRanks(dense=hit.ranks.get("dense", 0), text=hit.ranks.get("text", 0)),
                )
                for hit in hits
            ]
        )

    async def SearchCode(self, request: pb.SearchCodeRequest, context: Context) -> pb.SearchCodeResponse:
        query = _query(request)
        hits = await self._search.code(query, request.symbol_weight)
        return pb.SearchCodeResponse(
            hits=[
                pb.CodeHit(
                    node=node_to_pb(hit.node),
                    score=hit.score,
                    ranks=pb.StreamRanks(
                        dense=hit.ranks.get("dense", 0),
                        text=hit.ranks.get("text", 0),
                        symbol=hit.ranks.get("symbol", 0),
                    ),
                )
                for hit in hits
            ]
        )


def _query(request: pb.SearchDocChunksRequest | pb.SearchCodeRequest) -> Query:
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
