"""Searches: one repository's code or docs (retrieve), and one question routed across every store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Literal, TypeVar

from grpc import aio

from cograph.search.v1 import search_service_pb2 as spb
from cograph_gateway.access import RepositoryName
from cograph_gateway.convert import (
    DOC_KIND_TO_PB,
    code_result_from_pb,
    doc_hit_from_pb,
    failure_from_pb,
    limit_to_pb,
    route_from_pb,
)
from cograph_gateway.errors import Problem, grpc_status
from cograph_gateway.operations.base import OperationGroup
from cograph_gateway.policy import Operation
from cograph_gateway.schemas import (
    CodeResult,
    DocChunkHit,
    RepoDocKind,
    RouteResult,
    StoreFailure,
    StoreName,
)

RetrieveMode = Literal["code", "wiki"]
_MODE = {"code": spb.RETRIEVE_MODE_CODE, "wiki": spb.RETRIEVE_MODE_WIKI}

T = TypeVar("T")


@dataclass
class Retrieval:
    """What a search of one repository found; `repositories` names it (id -> host/owner/name)."""

    code: list[CodeResult]
    docs: list[DocChunkHit]
    failures: list[StoreFailure]
    repositories: dict[str, str]


@dataclass
class Routing:
    """A routed search's result, with the readable repositories' names (id -> host/owner/name)
    for faces that cite code and doc hits by repository."""

    result: RouteResult
    repositories: dict[str, str]


async def _scoped(
    fetch: Awaitable[T], empty: T, stores: tuple[StoreName, ...], failures: list[StoreFailure]
) -> T:
    """A store whose access list cannot be had is searched with an empty scope and reported
    failed, like a store that fails during the search: the other pools still answer."""
    try:
        return await fetch
    except aio.AioRpcError as error:
        _, detail = grpc_status(error)
        failures.extend(StoreFailure(store=store, message=detail) for store in stores)
        return empty


class SearchOperations(OperationGroup):
    async def retrieve(
        self,
        repository: RepositoryName,
        query: str,
        *,
        mode: RetrieveMode,
        limit: int | None,
        operation: Operation,
        kinds: list[RepoDocKind] | None = None,
        related_limit: int | None = None,
    ) -> Retrieval:
        """Search one repository: its code (each hit with the doc chunks that discuss it) or its docs."""
        if kinds and mode != "wiki":
            raise Problem(400, 'kinds filters repository docs: use it with mode "wiki"')
        if related_limit and mode != "code":
            raise Problem(400, 'related_limit is for code hits: use it with mode "code"')
        found = await self._access.repository(self._principal, operation, repository)
        response = await self._backends.search.Retrieve(
            spb.RetrieveRequest(
                query=query.strip(),
                mode=_MODE[mode],
                scope=spb.Scope(repository_ids=[found.repository_id]),
                limit=limit_to_pb(limit),
                kinds=[DOC_KIND_TO_PB[k] for k in dict.fromkeys(kinds or ())],
                related_limit=related_limit or 0,
            )
        )
        return Retrieval(
            code=[code_result_from_pb(c) for c in response.code],
            docs=[doc_hit_from_pb(d) for d in response.docs],
            failures=[failure_from_pb(f) for f in response.failures],
            repositories={found.repository_id: found.slug},
        )

    async def route(self, query: str, limit: int | None, operation: Operation = Operation.ROUTE) -> Routing:
        """Route within the caller's readable scope, resolved here before the search fans out."""
        self._access.require(self._principal, operation)
        failures: list[StoreFailure] = []
        repositories, collection_ids = await asyncio.gather(
            _scoped(
                self._access.readable_repository_slugs(self._principal), {}, ("code", "repo_docs"), failures
            ),
            _scoped(self._access.readable_collections(self._principal), [], ("collections",), failures),
        )
        scope = spb.Scope(repository_ids=list(repositories), collection_ids=collection_ids)
        request = spb.RouteRequest(query=query.strip(), scope=scope, limit=limit_to_pb(limit))
        result = route_from_pb(await self._backends.search.Route(request))
        # A store the gateway could not scope was searched with nothing; its own failure says why.
        unscoped = {f.store for f in failures}
        result.failures = failures + [f for f in result.failures if f.store not in unscoped]
        return Routing(result, repositories)
