"""SearchServicer: embeds the query once, fans out to the stores in parallel with deadlines, and
answers what it has: a store that fails or is slow becomes a named failure, never a hang."""

from __future__ import annotations

import asyncio
import contextvars
import math
from dataclasses import dataclass, field
from typing import Any, TypeVar

from grpc import StatusCode, aio

from cograph.collections.v1 import collections_service_pb2 as collections_pb
from cograph.collections.v1 import collections_service_pb2_grpc as collections_grpc
from cograph.repodocs.v1 import repodocs_service_pb2 as repodocs_pb
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as repodocs_grpc
from cograph.search.v1 import search_service_pb2 as pb
from cograph.search.v1 import search_service_pb2_grpc as pb_grpc
from cograph_embeddings import EmbeddingError, EmbeddingProvider
from cograph_errors import (
    DEFAULT_RELATED_LIMIT,
    MAX_RELATED_LIMIT,
    InvalidArgument,
    check_typed_text,
    is_blank,
    parse_id,
    parse_ids,
)
from cograph_retrieval import skips_dense
from cograph_settings import SearchSettings

Context = aio.ServicerContext[Any, Any]
T = TypeVar("T")
DOCUMENT_KINDS = frozenset(repodocs_pb.DocumentKind.values()) - {repodocs_pb.DOCUMENT_KIND_UNSPECIFIED}
# Kept back from the caller's deadline to build and send the answer.
ANSWER_MARGIN_SECONDS = 0.2
# When the answer is due (event loop clock) for the request this task serves: its caller's
# deadline, so that a short one still gets the partial answer rather than DEADLINE_EXCEEDED.
_answer_due: contextvars.ContextVar[float] = contextvars.ContextVar("answer_due", default=math.inf)


def _take_callers_deadline(context: Context) -> None:
    remaining = context.time_remaining()
    if remaining is not None:
        _answer_due.set(asyncio.get_running_loop().time() + remaining - ANSWER_MARGIN_SECONDS)


class StoreFailed(Exception):
    def __init__(self, store: pb.Store, message: str) -> None:
        super().__init__(message)
        self.failure = pb.StoreFailure(store=store, message=message)


@dataclass
class CodeAnswer:
    """Code results, and what they lack: a related-docs call that failed leaves the hits standing."""

    results: list[pb.CodeResult]
    failures: list[pb.StoreFailure] = field(default_factory=list)


class SearchServicer(pb_grpc.SearchServiceServicer):
    def __init__(
        self,
        embedder: EmbeddingProvider,
        collections: collections_grpc.CollectionsServiceAsyncStub,
        repodocs: repodocs_grpc.RepoDocsServiceAsyncStub,
        settings: SearchSettings,
    ) -> None:
        self._embedder = embedder
        self._collections = collections
        self._repodocs = repodocs
        self._settings = settings

    def _checked(self, query: str, limit: int) -> tuple[str, int]:
        text = query.strip()
        if is_blank(text):
            raise InvalidArgument("the query is empty")
        check_typed_text(text)
        if len(text) > self._settings.max_query_chars:
            raise InvalidArgument(
                f"the query has {len(text)} characters; at most {self._settings.max_query_chars} are accepted"
            )
        if limit < 0 or limit > self._settings.max_limit:
            raise InvalidArgument(f"limit must be between 1 and {self._settings.max_limit}")
        return text, limit or self._settings.default_limit

    @staticmethod
    def _check_scope(scope: pb.Scope) -> None:
        """A malformed id is the caller's mistake, not a store that failed."""
        parse_ids(scope.repository_ids, "repository")
        parse_ids(scope.collection_ids, "collection")

    def _deadline(self) -> float:
        """When a store call started now must have answered, on the event loop's clock: the
        store deadline, or the caller's if that comes first."""
        now = asyncio.get_running_loop().time()
        return min(now + self._settings.store_deadline_seconds, _answer_due.get())

    async def _call(
        self,
        store: pb.Store,
        method: aio.UnaryUnaryMultiCallable[Any, T],
        request: Any,
        deadline: float | None = None,
    ) -> T:
        """A store call under the fan-out deadline (or what is left of one that calls before it
        used); its failure is named, not raised to the caller. The deadline travels with the
        call, so the store stops the work too: cancelling the waiting task alone does not end a
        call made through interceptors, which went on holding the store's connections."""
        due = deadline or self._deadline()
        timeout = max(due - asyncio.get_running_loop().time(), 0.0)
        call = method(request, timeout=timeout)
        try:
            # A little slack: gRPC's own deadline normally ends the call first.
            return await asyncio.wait_for(call, timeout + ANSWER_MARGIN_SECONDS / 2)
        except TimeoutError:
            pass
        except aio.AioRpcError as error:
            if error.code() != StatusCode.DEADLINE_EXCEEDED:
                raise StoreFailed(store, f"{error.code().name}: {error.details()}") from None
        call.cancel()
        if due >= _answer_due.get():
            raise StoreFailed(store, "no answer before the caller's deadline")
        raise StoreFailed(store, f"no answer within {self._settings.store_deadline_seconds:g} s")

    async def _embedding(
        self, text: str, *, searched: bool = True
    ) -> tuple[list[float], str, list[pb.StoreFailure]]:
        """The query's vector and model; when the model fails or is late, no vector (the stores
        then run full text only) and the failure that says so. When no store will be searched (an
        empty scope), nothing: the model is not waited for, nor reported, for an empty answer."""
        if not searched:
            return [], "", []
        # At most half of what the caller still gives: the stores need the rest.
        before_caller = (_answer_due.get() - asyncio.get_running_loop().time()) / 2
        deadline = max(min(self._settings.embedding_deadline_seconds, before_caller), 0.0)

        async def embed() -> tuple[list[float], str]:
            model = await self._embedder.info()
            return await self._embedder.embed_query(text), model.name

        try:
            vector, model = await asyncio.wait_for(embed(), deadline)
        except TimeoutError:
            reason = f"no answer within {deadline:g} s"
        except EmbeddingError as error:
            reason = str(error)
        else:
            return vector, model, []
        message = f"the query was not embedded ({reason}): full-text results only"
        return [], "", [pb.StoreFailure(store=pb.STORE_EMBEDDING, message=message)]

    # A store is not called for an empty scope: it would find nothing, and when it is stuck the
    # caller would wait out its deadline (and be told of its failure) for that nothing.

    async def _collections_search(
        self, text: str, vector: list[float], model: str, ids: list[str], limit: int, *, fill: bool = False
    ) -> collections_pb.SearchChunksResponse:
        if not ids:
            return collections_pb.SearchChunksResponse()
        s = self._settings
        return await self._call(
            pb.STORE_COLLECTIONS,
            self._collections.SearchChunks,
            collections_pb.SearchChunksRequest(
                collection_ids=ids,
                query=text,
                query_embedding=vector,
                embedding_model=model,
                limit=limit,
                dense_weight=s.dense_weight,
                text_weight=s.text_weight,
                rrf_k=s.rrf_k,
                fill_to_limit=fill,
            ),
        )

    async def _docs_search(
        self,
        text: str,
        vector: list[float],
        model: str,
        scope: pb.Scope,
        limit: int,
        kinds: list[repodocs_pb.DocumentKind],
    ) -> repodocs_pb.SearchDocChunksResponse:
        if not scope.repository_ids:
            return repodocs_pb.SearchDocChunksResponse()
        s = self._settings
        return await self._call(
            pb.STORE_REPO_DOCS,
            self._repodocs.SearchDocChunks,
            repodocs_pb.SearchDocChunksRequest(
                repository_ids=scope.repository_ids,
                query=text,
                query_embedding=vector,
                embedding_model=model,
                limit=limit,
                kinds=kinds,
                dense_weight=s.dense_weight,
                text_weight=s.text_weight,
                rrf_k=s.rrf_k,
            ),
        )

    async def _code_search(
        self, text: str, vector: list[float], model: str, scope: pb.Scope, limit: int, related: int
    ) -> CodeAnswer:
        """Code hits, then the doc chunks related to them, both within one store deadline. Hits
        found are kept when the related chunks fail or come too late: those are the failure."""
        if not scope.repository_ids:
            return CodeAnswer([])
        s = self._settings
        deadline = self._deadline()
        found = await self._call(
            pb.STORE_CODE,
            self._repodocs.SearchCode,
            repodocs_pb.SearchCodeRequest(
                repository_ids=scope.repository_ids,
                query=text,
                query_embedding=vector,
                embedding_model=model,
                limit=limit,
                dense_weight=s.dense_weight,
                text_weight=s.text_weight,
                symbol_weight=s.symbol_weight,
                rrf_k=s.rrf_k,
            ),
            deadline,
        )
        if not found.hits:
            return CodeAnswer([])
        try:
            related_chunks = await self._call(
                pb.STORE_REPO_DOCS,
                self._repodocs.GetRelatedDocChunks,
                repodocs_pb.GetRelatedDocChunksRequest(
                    repository_ids=scope.repository_ids,
                    code_node_ids=[hit.node.id for hit in found.hits],
                    limit=related,
                ),
                deadline,
            )
        except StoreFailed as failed:
            failed.failure.message = f"code hits without their related doc chunks: {failed.failure.message}"
            return CodeAnswer([pb.CodeResult(hit=hit) for hit in found.hits], [failed.failure])
        by_node = {entry.code_node_id: list(entry.chunks) for entry in related_chunks.related}
        return CodeAnswer(
            [pb.CodeResult(hit=h, related_repo_doc_chunks=by_node.get(h.node.id, [])) for h in found.hits]
        )

    async def SearchCollection(
        self, request: pb.SearchCollectionRequest, context: Context
    ) -> pb.SearchCollectionResponse:
        _take_callers_deadline(context)
        text, limit = self._checked(request.query, request.limit)
        if not request.collection_id:
            raise InvalidArgument("name the collection to search")
        parse_id(request.collection_id, "collection")
        vector, model, failures = await self._embedding(text)
        try:
            found = await self._collections_search(text, vector, model, [request.collection_id], limit)
        except StoreFailed as failed:
            return pb.SearchCollectionResponse(failures=[*failures, failed.failure])
        return pb.SearchCollectionResponse(hits=found.hits, failures=failures)

    async def Retrieve(self, request: pb.RetrieveRequest, context: Context) -> pb.RetrieveResponse:
        _take_callers_deadline(context)
        text, limit = self._checked(request.query, request.limit)
        if request.mode not in (pb.RETRIEVE_MODE_CODE, pb.RETRIEVE_MODE_WIKI):
            raise InvalidArgument("mode must be code or wiki")
        self._check_scope(request.scope)
        # The caller's mistakes, not failures of the store that would refuse them.
        if not 0 <= request.related_limit <= MAX_RELATED_LIMIT:
            raise InvalidArgument(f"related_limit must be between 1 and {MAX_RELATED_LIMIT} (0: three)")
        unknown = [kind for kind in request.kinds if kind not in DOCUMENT_KINDS]
        if unknown:
            raise InvalidArgument(f"document kind {unknown[0]} is not one of the five kinds")
        vector, model, failures = await self._embedding(text, searched=bool(request.scope.repository_ids))
        try:
            if request.mode == pb.RETRIEVE_MODE_CODE:
                related = request.related_limit or DEFAULT_RELATED_LIMIT
                code = await self._code_search(text, vector, model, request.scope, limit, related)
                return pb.RetrieveResponse(code=code.results, failures=[*failures, *code.failures])
            docs = await self._docs_search(text, vector, model, request.scope, limit, list(request.kinds))
            return pb.RetrieveResponse(docs=docs.hits, failures=failures)
        except StoreFailed as failed:
            return pb.RetrieveResponse(failures=[*failures, failed.failure])

    async def Route(self, request: pb.RouteRequest, context: Context) -> pb.RouteResponse:
        """Each pool scored on its own; collections always filled up to the limit, even at low
        confidence, because a glossary often answers a question whose words it does not share."""
        _take_callers_deadline(context)
        text, limit = self._checked(request.query, request.limit)
        self._check_scope(request.scope)
        scope = request.scope
        searched = bool(scope.repository_ids or scope.collection_ids)
        vector, model, failures = await self._embedding(text, searched=searched)
        code, docs, collections = await asyncio.gather(
            self._code_search(text, vector, model, scope, limit, DEFAULT_RELATED_LIMIT),
            self._docs_search(text, vector, model, scope, limit, []),
            self._collections_search(text, vector, model, list(scope.collection_ids), limit, fill=True),
            return_exceptions=True,
        )
        response = pb.RouteResponse(failures=failures)
        # Confidence is measured against the streams that ran. The doc and collection stores do
        # not run the dense stream for a lookup of names.
        text_weight = self._settings.text_weight
        best = (self._settings.dense_weight if vector else 0.0) + text_weight
        prose_best = text_weight if skips_dense(text, text_weight) else best
        for store, result in (
            (pb.STORE_CODE, code),
            (pb.STORE_REPO_DOCS, docs),
            (pb.STORE_COLLECTIONS, collections),
        ):
            if isinstance(result, StoreFailed):
                response.failures.append(result.failure)
                continue
            if isinstance(result, BaseException):
                raise result
            if store == pb.STORE_CODE:
                assert isinstance(result, CodeAnswer)
                response.code.extend(result.results)
                response.failures.extend(result.failures)
                scores = [r.hit.score for r in result.results]
                best_possible = best + self._settings.symbol_weight
            elif store == pb.STORE_REPO_DOCS:
                assert isinstance(result, repodocs_pb.SearchDocChunksResponse)
                response.repo_docs.extend(result.hits)
                scores = [h.score for h in result.hits]
                best_possible = prose_best
            else:
                assert isinstance(result, collections_pb.SearchChunksResponse)
                response.collections.extend(result.hits)
                scores = [h.score for h in result.hits]
                best_possible = prose_best
            # The best fused score over the best a hit could get (first in every stream): the sum
            # of the weights for prose, fused by scores; that over k + 1 for code's rank fusion.
            ceiling = best_possible / (self._settings.rrf_k + 1) if store == pb.STORE_CODE else best_possible
            confidence = max(scores, default=0.0) / ceiling if ceiling else 0.0
            response.pools.append(pb.RoutePool(store=store, confidence=min(confidence, 1.0)))
        response.pools.sort(key=lambda pool: -pool.confidence)
        return response
