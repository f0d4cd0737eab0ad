"""/api/search: one question routed across code, repository docs and collections."""

from __future__ import annotations

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.status_codes import HTTP_200_OK

from cograph_gateway import schemas as s
from cograph_gateway.errors import problem_responses
from cograph_gateway.operations import Operations


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
        data: JSONBody[s.SearchRequest],
        ops: NamedDependency[Operations],
    ) -> s.RouteResult:
        return (await ops.search.route(data.query, data.limit)).result
