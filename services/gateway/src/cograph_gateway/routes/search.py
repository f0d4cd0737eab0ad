"""/api/search: one question routed across code, repository docs and collections."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from grpc import aio
from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.status_codes import HTTP_200_OK

from cograph.search.v1 import search_service_pb2 as spb
from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.convert import limit_to_pb, route_from_pb
from cograph_gateway.errors import grpc_status, problem_responses
from cograph_gateway.identity import Principal
from cograph_gateway.policy import Operation
from cograph_gateway.schemas import RouteResult, SearchRequest, StoreFailure, StoreName


async def _scope(
    fetch: Awaitable[list[str]], stores: tuple[StoreName, ...], failures: list[StoreFailure]
) -> list[str]:
    """A store whose access list cannot be had is searched with an empty scope and reported
    failed, like a store that fails during the search: the other pools still answer."""
    try:
        return await fetch
    except aio.AioRpcError as error:
        _, detail = grpc_status(error)
        failures.extend(StoreFailure(store=store, message=detail) for store in stores)
        return []


async def route(
    backends: Backends, access: Access, principal: Principal, query: str, limit: int | None
) -> RouteResult:
    """Route within the caller's readable scope, resolved here before the search fans out."""
    access.require(principal, Operation.ROUTE)
    failures: list[StoreFailure] = []
    repository_ids, collection_ids = await asyncio.gather(
        _scope(access.readable_repositories(principal), ("code", "repo_docs"), failures),
        _scope(access.readable_collections(principal), ("collections",), failures),
    )
    scope = spb.Scope(repository_ids=repository_ids, collection_ids=collection_ids)
    request = spb.RouteRequest(query=query.strip(), scope=scope, limit=limit_to_pb(limit))
    result = route_from_pb(await backends.search.Route(request))
    # A store the gateway could not scope was searched with nothing; its own failure says why.
    unscoped = {f.store for f in failures}
    result.failures = failures + [f for f in result.failures if f.store not in unscoped]
    return result


class SearchController(Controller):
    path = "/api/search"
    tags = ("search",)

    @post(
        "/route",
        summary="Search code, repository docs and collections at once, each scored in its own pool",
        description="Collections are always returned up to `limit`, even at low confidence: a glossary "
        "often answers a question whose words it does not contain. `limit` applies per pool.",
        status_code=HTTP_200_OK,
        responses=problem_responses(),
    )
    async def route(
        self,
        data: JSONBody[SearchRequest],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> RouteResult:
        return await route(backends, access, principal, data.query, data.limit)
