"""The search settings hold at both surfaces: REST and MCP refuse what the configured query length
and limit refuse, apply the configured default limit, and accept what a raised maximum allows."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
from e2e.gateway.helpers import create_collection, is_problem, wait_for_jobs
from e2e.gateway.test_collections_api import Auth
from e2e.gateway.test_mcp import _error, _ok, mcp_client
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from cograph_cli.runtime import System, start_system
from cograph_embeddings import EmbeddingProvider
from cograph_settings import Settings

# Six documents of one chunk each: more than the default limit of 3, fewer than the maximum of 7.
TOPICS = ["paging", "handover", "escalation", "postmortems", "rotations", "dashboards"]


@contextlib.asynccontextmanager
async def running(
    settings: Settings, database: str, embedder: EmbeddingProvider, **search: Any
) -> AsyncIterator[System]:
    """The whole system with these search settings."""
    replace = msgspec.structs.replace
    configured = replace(settings, search=replace(settings.search, **search))
    system: System = await start_system(configured, database, embedder)
    try:
        await asyncio.wait_for(system.hosts["gateway"].ready.wait(), 30)
        yield system
    finally:
        await system.stop()


def _keys(schema: Any) -> set[str]:
    """Every key of a JSON schema, nested ones too."""
    if isinstance(schema, dict):
        return set(schema).union(*(_keys(v) for v in schema.values()))
    if isinstance(schema, list):
        return set().union(*(_keys(v) for v in schema))
    return set()


async def _runbooks(gateway: httpx.AsyncClient, headers: dict[str, str]) -> str:
    collection = await create_collection(gateway, headers, "Runbooks")
    cid: str = collection["id"]
    response = await gateway.post(
        f"/api/md-collections/{cid}/documents/batch",
        json={
            "documents": [
                {
                    "source_key": f"{topic}.md",
                    "content": f"# {topic.title()}\n\nHow the team handles {topic}.\n",
                }
                for topic in TOPICS
            ]
        },
        headers=headers,
    )
    assert response.status_code in (200, 201), response.text
    jobs = await wait_for_jobs(gateway, cid, headers)
    assert all(job["status"] == "success" for job in jobs), jobs
    return cid


async def test_the_configured_query_length_and_limits_apply_over_rest_and_mcp(
    settings: Settings,
    database: str,
    embedder: EmbeddingProvider,
    span_exporter: InMemorySpanExporter,
    auth: Auth,
) -> None:
    alice = auth["alice"]
    async with (
        running(settings, database, embedder, max_query_chars=50, max_limit=7, default_limit=3) as system,
        httpx.AsyncClient(base_url=system.gateway_url, timeout=60) as gateway,
    ):
        cid = await _runbooks(gateway, alice)
        long_query = "how does the team handle paging and escalation now"[:50].ljust(60, "?")
        assert len(long_query) == 60
        search = f"/api/md-collections/{cid}/search"

        # REST: the configured bounds, with the search service's own words.
        for path in (search, "/api/search/route"):
            too_long = is_problem(await gateway.post(path, json={"query": long_query}, headers=alice), 400)
            assert "60 characters; at most 50" in too_long["detail"], too_long
            too_many = is_problem(
                await gateway.post(path, json={"query": "paging", "limit": 8}, headers=alice), 400
            )
            assert "between 1 and 7" in too_many["detail"], too_many
        hits = (await gateway.post(search, json={"query": "paging"}, headers=alice)).json()["hits"]
        assert len(hits) == 3  # the configured default, not the former hard-coded 10
        seven = await gateway.post(search, json={"query": "paging", "limit": 7}, headers=alice)
        assert len(seven.json()["hits"]) == 6
        routed = (await gateway.post("/api/search/route", json={"query": "paging"}, headers=alice)).json()
        assert len(routed["collections"]) == 3

        # The OpenAPI document states no bound of its own: the configured ones are the bounds.
        document = (await gateway.get("/api/schema/openapi.json")).json()
        request = document["components"]["schemas"]["SearchRequest"]
        assert not _keys(request) & {"maxLength", "maximum", "default"}, request
        assert "COGRAPH_SEARCH__MAX_LIMIT" in str(request)

        async with mcp_client(system.gateway_url, alice) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            properties = tools["cograph_collection_search"].input_schema["properties"]
            for bounded in (properties["query"], properties["limit"]):
                assert not _keys(bounded) & {"maxLength", "maximum"}, bounded
            # cograph_retrieve takes the same arguments; test_mcp calls it against real repository docs.
            searches: list[tuple[str, dict[str, Any]]] = [
                ("cograph_collection_search", {"collection_id": cid}),
                ("cograph_route", {}),
            ]
            for name, arguments in searches:
                too_long_message = _error(await client.call_tool(name, {**arguments, "query": long_query}))
                assert "60 characters; at most 50" in too_long_message
                assert "HTTP 400" in too_long_message
                too_many_message = _error(
                    await client.call_tool(name, {**arguments, "query": "x", "limit": 8})
                )
                assert "between 1 and 7" in too_many_message
                assert "HTTP 400" in too_many_message
            found = _ok(
                await client.call_tool("cograph_collection_search", {"collection_id": cid, "query": "paging"})
            )
            assert len(found["hits"]) == 3
            found = _ok(
                await client.call_tool(
                    "cograph_collection_search", {"collection_id": cid, "query": "paging", "limit": 7}
                )
            )
            assert len(found["hits"]) == 6
            assert len(_ok(await client.call_tool("cograph_route", {"query": "paging"}))["collections"]) == 3


async def test_a_raised_maximum_is_honoured_over_rest_and_mcp(
    settings: Settings,
    database: str,
    embedder: EmbeddingProvider,
    span_exporter: InMemorySpanExporter,
    auth: Auth,
) -> None:
    alice = auth["alice"]
    query = "paging " * 400  # 2800 characters: over the former hard-coded 2000
    async with (
        running(settings, database, embedder, max_query_chars=4000, max_limit=150) as system,
        httpx.AsyncClient(base_url=system.gateway_url, timeout=60) as gateway,
    ):
        cid = await _runbooks(gateway, alice)
        search = f"/api/md-collections/{cid}/search"
        response = await gateway.post(search, json={"query": query, "limit": 150}, headers=alice)
        assert response.status_code == 200, response.text
        assert len(response.json()["hits"]) == 6
        # A limit no int32 carries is still the search service's clear refusal, never a 500.
        refused = is_problem(
            await gateway.post(search, json={"query": "x", "limit": 2**40}, headers=alice), 400
        )
        assert "between 1 and 150" in refused["detail"]
        async with mcp_client(system.gateway_url, alice) as client:
            found = _ok(
                await client.call_tool(
                    "cograph_collection_search", {"collection_id": cid, "query": query, "limit": 150}
                )
            )
            assert len(found["hits"]) == 6
            message = _error(
                await client.call_tool(
                    "cograph_collection_search", {"collection_id": cid, "query": "x", "limit": 2**40}
                )
            )
            assert "between 1 and 150" in message
