"""MCP at /mcp through the SDK's own client over streamable HTTP: list the tools, call each one."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from e2e.gateway.helpers import create_collection, repodocs_implements, require_repodocs, wait_for_jobs
from e2e.gateway.test_collections_api import GUIDE, Auth
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

from cograph_cli.runtime import System

TOOLS = {
    "cograph_retrieve",
    "cograph_route",
    "cograph_collections",
    "cograph_collection_search",
    "cograph_collection_document",
    "cograph_read_chunk",
    "cograph_read_file_range",
}


@contextlib.asynccontextmanager
async def mcp_client(url: str, headers: dict[str, str], mode: Any = "auto") -> AsyncIterator[Client]:
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


def _ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def _error(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    text = result.content[0]
    assert text.type == "text"
    return str(text.text)


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern", "initialize-handshake"])
async def test_an_agent_lists_the_tools_and_calls_each(
    system: System, gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path, mode: str
) -> None:
    alice = auth["alice"]
    collection = await create_collection(gateway, alice, "On-call")
    cid = collection["id"]
    upload = await gateway.post(
        f"/api/md-collections/{cid}/documents",
        json={"source_key": "guide.md", "content": GUIDE.decode()},
        headers=alice,
    )
    document_id = upload.json()["document_id"]
    await wait_for_jobs(gateway, cid, alice)
    repository = await _register_repository(gateway, auth, tmp_path)

    async with mcp_client(system.gateway_url, alice, mode) as client:
        listed = await client.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert tool.description
            assert len(tool.description) > 60, tool.name
            assert tool.input_schema["type"] == "object"
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint
        assert tools["cograph_retrieve"].input_schema["properties"]["mode"]["enum"] == ["code", "wiki"]
        assert set(tools["cograph_collection_search"].input_schema["required"]) == {"collection_id", "query"}

        collections = _ok(await client.call_tool("cograph_collections", {}))
        assert [c["id"] for c in collections["collections"]] == [cid]
        assert collections["collections"][0]["citation"] == f"collection/{cid}"

        document = _ok(
            await client.call_tool(
                "cograph_collection_document", {"collection_id": cid, "document_id": document_id}
            )
        )
        assert document["content"] == GUIDE.decode()  # untruncated
        assert document["citation"] == f"collection/{cid}"
        assert document["metadata"]["frontmatter"]["owner"] == "platform"
        assert [h["anchor"] for h in document["metadata"]["heading_tree"]] == ["paging", "handover"]

        chunk_id = (
            await gateway.get(f"/api/md-collections/{cid}/documents/{document_id}/chunks", headers=alice)
        ).json()["items"][0]["id"]
        chunk = _ok(
            await client.call_tool("cograph_read_chunk", {"chunk_id": chunk_id, "collection_id": cid})
        )
        assert chunk["citation"].startswith(f"collection/{cid}#")
        assert chunk["source"] == f"collection/{cid}"
        assert "Acknowledge a page" in chunk["content"]

        search = await client.call_tool(
            "cograph_collection_search", {"collection_id": cid, "query": "acknowledge a page"}
        )
        if not search.is_error:
            hits = _ok(search)["hits"]
            assert hits
            assert hits[0]["citation"].startswith(f"collection/{cid}#")
            # Each stream's rank, as REST gives them: the words of the query are in the first hit.
            assert set(hits[0]["ranks"]) == {"dense", "text"}
            assert hits[0]["ranks"]["text"] >= 1
        else:
            assert "HTTP 501" in _error(search)

        routed = await client.call_tool(
            "cograph_route", {"query": "how fast must a page be acknowledged", "limit": 3}
        )
        if not routed.is_error:
            result = _ok(routed)
            assert [h["collection_id"] for h in result["collections"]] == [cid] * len(result["collections"])
            assert result["collections"], "collections are always returned up to the limit"
            assert all(set(h["ranks"]) == {"dense", "text"} for h in result["collections"])
        else:
            assert "HTTP 501" in _error(routed)

        if repository is None:
            # repodocs does not implement its RPCs yet: the tools say so (501, or 502 while the server
            # interceptor reports UNIMPLEMENTED as INTERNAL), they do not crash.
            for name, arguments in [
                ("cograph_retrieve", {"query": "parse config", "repository": "example.com/acme/tools"}),
                ("cograph_read_file_range", {"repository": "example.com/acme/tools", "path": "tools.py"}),
                ("cograph_read_chunk", {"chunk_id": chunk_id, "repository": "example.com/acme/tools"}),
            ]:
                message = _error(await client.call_tool(name, arguments))
                assert "HTTP 501" in message or "HTTP 502" in message, message
        else:
            await _call_repository_tools(client, repository)

        # Bad arguments are tool errors an agent can read.
        assert "not a chunk id" in _error(
            await client.call_tool("cograph_read_chunk", {"chunk_id": "x", "collection_id": cid})
        )
        assert "exactly one" in _error(await client.call_tool("cograph_read_chunk", {"chunk_id": chunk_id}))
        # Arguments outside a tool's schema are refused like any other bad input: named, and 400.
        wrong_mode = _error(
            await client.call_tool("cograph_retrieve", {"query": "x", "repository": "r", "mode": "graph"})
        )
        assert "mode" in wrong_mode
        assert wrong_mode.endswith("(HTTP 400)"), wrong_mode
        assert _error(
            await client.call_tool(
                "cograph_collection_search", {"collection_id": cid, "query": "x", "limit": 0}
            )
        ).endswith("(HTTP 400)")
        # As REST: a misspelt argument is refused, not ignored, and a count is an integer.
        misspelt = _error(
            await client.call_tool(
                "cograph_collection_search", {"collection_id": cid, "query": "x", "limt": 3}
            )
        )
        assert "limt: not an argument of this tool" in misspelt, misspelt
        assert "collection_id, limit, query" in misspelt
        assert misspelt.endswith("(HTTP 400)")
        for count in (True, 2.5, "many"):
            wrong_count = _error(
                await client.call_tool(
                    "cograph_collection_search", {"collection_id": cid, "query": "x", "limit": count}
                )
            )
            assert wrong_count.startswith("invalid arguments for cograph_collection_search: limit"), count
        counted = await client.call_tool(
            "cograph_collection_search", {"collection_id": cid, "query": "x", "limit": 2}
        )
        assert not counted.is_error

    # The same policy as REST: bob reads no private collection of alice's, and lists none.
    async with mcp_client(system.gateway_url, auth["bob"], mode) as client:
        assert _ok(await client.call_tool("cograph_collections", {}))["collections"] == []
        refused = _error(
            await client.call_tool(
                "cograph_collection_document", {"collection_id": cid, "document_id": document_id}
            )
        )
        assert "you may not read collection" in refused
        assert "HTTP 403" in refused


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


async def _register_repository(gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path) -> str | None:
    """A small checkout registered by the admin, synced; None while repodocs answers 501."""
    checkout = tmp_path / "tools"
    checkout.mkdir()
    (checkout / "README.md").write_text(
        "# Tools\n\n## Configuration\n\nCall `parse_config` to read the settings.\n"
    )
    (checkout / "docs").mkdir()
    (checkout / "docs" / "usage.md").write_text("# Usage\n\nRun `tools.parse_config()` first.\n")
    (checkout / "tools.py").write_text(
        'def parse_config(path):\n    """Read the settings."""\n    return {}\n'
    )
    _git(checkout, "init", "-q", "-b", "main")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    registered = await gateway.post(
        "/api/repos",
        json={
            "host": "example.com",
            "owner": "acme",
            "name": "tools",
            "checkout_path": str(checkout),
            "visibility": "private",
        },
        headers=auth["admin"],
    )
    if not repodocs_implements("RegisterRepository") or not repodocs_implements("SyncRepository"):
        return None
    assert registered.status_code == 201, registered.text
    synced = await gateway.post(
        "/api/repos/example.com/acme/tools/sync", params={"wait": "true"}, headers=auth["admin"]
    )
    assert synced.status_code == 200, synced.text
    await gateway.post(
        "/api/repos/example.com/acme/tools/grants", json={"group": "research"}, headers=auth["admin"]
    )
    return "example.com/acme/tools"


async def _call_repository_tools(client: Client, repository: str) -> None:
    code = _ok(
        await client.call_tool("cograph_retrieve", {"query": "parse_config", "repository": repository})
    )
    assert code["mode"] == "code"
    if repodocs_implements("SearchCode"):
        hit = next(hit for hit in code["code"] if hit["name"] == "parse_config")
        assert hit["citation"].startswith(f"{repository}:tools.py#L1")
        assert hit["ranks"]["symbol"] == 1  # the exact name
        assert set(hit["ranks"]) == {"dense", "text", "symbol"}
        assert len(hit["related_repo_doc_chunks"]) == 2  # README.md and docs/usage.md name it
        assert all(doc["ranks"] is None for doc in hit["related_repo_doc_chunks"])  # not search hits
        one = {"query": "parse_config", "repository": repository, "related_limit": 1}
        fewer = _ok(await client.call_tool("cograph_retrieve", one))
        hit = next(hit for hit in fewer["code"] if hit["name"] == "parse_config")
        assert len(hit["related_repo_doc_chunks"]) == 1
        wiki_related = await client.call_tool("cograph_retrieve", {**one, "mode": "wiki"})
        assert "related_limit is for code hits" in _error(wiki_related)
    else:  # the failing store is named, the call still answers
        assert code["failures"]
    wiki = _ok(
        await client.call_tool(
            "cograph_retrieve", {"query": "configuration settings", "repository": repository, "mode": "wiki"}
        )
    )
    if repodocs_implements("SearchDocChunks"):
        doc = wiki["docs"][0]
        assert doc["citation"].startswith(f"{repository}:{doc['slug']}")
        arguments = {"chunk_id": doc["chunk_id"], "repository": repository}
        read = _ok(await client.call_tool("cograph_read_chunk", arguments))
        assert read["citation"] == doc["citation"]  # the chunk is cited as the hit that led to it
        assert doc["heading"]
        assert set(doc["ranks"]) == {"dense", "text"}
        assert max(doc["ranks"].values()) >= 1
        chunk = _ok(
            await client.call_tool(
                "cograph_read_chunk", {"chunk_id": doc["chunk_id"], "repository": repository}
            )
        )
        assert chunk["source"] == repository
        assert chunk["content"]
    else:
        assert wiki["failures"]
    lines = _ok(
        await client.call_tool(
            "cograph_read_file_range",
            {"repository": repository, "path": "tools.py", "start_line": 1, "end_line": 1},
        )
    )
    assert lines["content"].startswith("def parse_config")
    assert lines["citation"].startswith(f"{repository}@")


async def test_retrieve_in_wiki_mode_narrows_to_document_kinds(
    system: System, gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    require_repodocs("RegisterRepository", "SyncRepository", "SearchDocChunks")
    checkout = tmp_path / "deployer"
    (checkout / ".github" / "workflows").mkdir(parents=True)
    (checkout / "README.md").write_text("# Deployer\n\n## Deploying\n\nThe deployer ships the service.\n")
    (checkout / ".github" / "workflows" / "deploy.yml").write_text(
        "name: deploy\non: push\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: make deploy\n"
    )
    (checkout / "Dockerfile").write_text('FROM python:3.11\nCOPY . /app\nCMD ["deploy"]\n')
    _git(checkout, "init", "-q", "-b", "main")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    registered = await gateway.post(
        "/api/repos",
        json={"host": "example.com", "owner": "acme", "name": "deployer", "checkout_path": str(checkout)},
        headers=auth["admin"],
    )
    assert registered.status_code == 201, registered.text
    synced = await gateway.post(
        "/api/repos/example.com/acme/deployer/sync", params={"wait": "true"}, headers=auth["admin"]
    )
    assert synced.status_code == 200, synced.text
    repository = "example.com/acme/deployer"

    async with mcp_client(system.gateway_url, auth["admin"]) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        kinds_schema = tools["cograph_retrieve"].input_schema["properties"]["kinds"]
        assert "workflow" in str(kinds_schema)

        async def kinds_found(**arguments: Any) -> list[str]:
            result = _ok(
                await client.call_tool(
                    "cograph_retrieve",
                    {"query": "how is the service deployed", "repository": repository, "mode": "wiki"}
                    | arguments,
                )
            )
            assert not result["failures"], result
            return [doc["kind"] for doc in result["docs"]]

        assert set(await kinds_found()) == {"repo_doc", "workflow", "config"}
        assert set(await kinds_found(kinds=["workflow"])) == {"workflow"}
        assert set(await kinds_found(kinds=["repo_doc", "config"])) == {"repo_doc", "config"}
        assert await kinds_found(kinds=["test"]) == []

        unknown = _error(
            await client.call_tool(
                "cograph_retrieve",
                {"query": "deploy", "repository": repository, "mode": "wiki", "kinds": ["readme"]},
            )
        )
        assert "readme" in unknown
        assert "'repo_doc', 'workflow', 'example', 'test' or 'config'" in unknown, unknown
        with_code = _error(
            await client.call_tool(
                "cograph_retrieve", {"query": "deploy", "repository": repository, "kinds": ["workflow"]}
            )
        )
        assert 'use it with mode "wiki"' in with_code
        assert "HTTP 400" in with_code


async def test_the_endpoint_takes_json_posts_only_and_refuses_in_problem_json(
    system: System, auth: Auth
) -> None:
    """Stateless: a GET (an event stream that would never end) or a DELETE of a session is a
    405 at once; an oversized body is a 413. Both are problem+json, like every REST refusal."""
    async with httpx.AsyncClient(base_url=system.gateway_url, timeout=10) as http:
        for method in ("GET", "DELETE"):
            refused = await http.request(
                method, "/mcp", headers={**auth["alice"], "accept": "text/event-stream, application/json"}
            )
            assert refused.status_code == 405, refused.text
            assert refused.headers["content-type"] == "application/problem+json"
            assert refused.headers["allow"] == "POST"
            assert "POST" in refused.json()["detail"]
        oversized = await http.post(
            "/mcp",
            content=b"{" + b" " * (1024 * 1024 + 1) + b"}",
            headers={**auth["alice"], "content-type": "application/json", "accept": "application/json"},
        )
        assert oversized.status_code == 413, oversized.text
        assert oversized.headers["content-type"] == "application/problem+json"
        assert "1024 KiB" in oversized.json()["detail"]


async def test_protocol_mistakes_are_json_rpc_errors_and_refusals_problem_json(
    system: System, auth: Auth
) -> None:
    """What is not one JSON-RPC request (params that are not an object included) is an Invalid
    Request that keeps the id it can (never taken for a notification, never a validation dump); an
    unknown or unnamed tool, arguments that are not an object, a prompt are Invalid Params; what
    the transport refuses (Content-Type, Accept, Host, Origin, a chunked body past the limit) is
    problem+json like every refusal, and comes first."""
    headers = {
        **auth["alice"],
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    async with httpx.AsyncClient(base_url=system.gateway_url, timeout=10) as http:

        async def error_of(message: object, status: int) -> dict[str, Any]:
            answer = await http.post("/mcp", content=json.dumps(message), headers=headers)
            assert answer.status_code == status, answer.text
            assert answer.headers["content-type"].startswith("application/json")
            body: dict[str, Any] = answer.json()
            assert "\n" not in body["error"]["message"], body  # one line, not a pydantic dump
            return body

        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        deep = await http.post("/mcp", content=b"[" * 100_000, headers=headers)  # the decoder recurses
        assert deep.status_code == 400, deep.text
        assert deep.json()["error"]["code"] == -32700
        for message in ([ping], {**ping, "jsonrpc": "1.0"}, None, 42, {"jsonrpc": "2.0", "id": 1}):
            assert (await error_of(message, 400))["error"]["code"] == -32600, message
        for request_id in ({"a": 1}, 1.5, None, True):
            refused = await error_of({**ping, "id": request_id}, 400)
            assert refused["error"]["code"] == -32600
            assert "string or an integer" in refused["error"]["message"]
        unknown = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "cograph_nope"}}
        no_tool = await error_of(unknown, 200)
        assert (no_tool["id"], no_tool["error"]["code"]) == (7, -32602)
        assert "cograph_nope" in no_tool["error"]["message"]
        assert "cograph_route" in no_tool["error"]["message"]

        def call(method: str, params: object) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}

        for not_object, kind in (("x", "a string"), ([1], "an array"), (3, "a number")):
            for method in ("tools/call", "ping"):
                mistaken = await error_of(call(method, not_object), 400)
                assert (mistaken["id"], mistaken["error"]["code"]) == (7, -32600), mistaken
                assert mistaken["error"]["message"] == f'"params" is a JSON object, not {kind}'
        for nameless in ({}, {"name": 3}, None):
            unnamed = await error_of(call("tools/call", nameless), 200)
            assert (unnamed["id"], unnamed["error"]["code"]) == (7, -32602), unnamed
            assert '"name"' in unnamed["error"]["message"]
            assert "cograph_route" in unnamed["error"]["message"]
        for arguments, kind in (("query=x", "a string"), (["x"], "an array"), (True, "true or false")):
            mistaken = await error_of(
                call("tools/call", {"name": "cograph_route", "arguments": arguments}), 200
            )
            assert (mistaken["id"], mistaken["error"]["code"]) == (7, -32602), mistaken
            assert "data" not in mistaken["error"]
            assert mistaken["error"]["message"] == (
                f'the "arguments" of cograph_route are a JSON object of names and values, not {kind}'
            )
        bare = await http.post(
            "/mcp", json=call("tools/call", {"name": "cograph_collections"}), headers=headers
        )
        assert bare.json()["result"]["isError"] is False  # arguments may be left out
        prompt = {"jsonrpc": "2.0", "id": "p", "method": "prompts/get", "params": {"name": "x"}}
        assert (await error_of(prompt, 200))["error"]["code"] == -32602
        assert (await http.post("/mcp", json=ping, headers=headers)).json()["result"] == {}

        plain = await http.post("/mcp", json=ping, headers={**headers, "content-type": "text/plain"})
        assert plain.status_code == 400
        assert plain.headers["content-type"] == "application/problem+json"
        assert "Content-Type" in plain.json()["detail"]
        elsewhere = await http.post("/mcp", json=ping, headers={**headers, "host": "evil.example"})
        assert elsewhere.status_code == 421
        assert elsewhere.headers["content-type"] == "application/problem+json"
        for loopback in ("localhost", "127.0.0.1", "[::1]"):  # a gateway on port 80 is named without one
            named = await http.post("/mcp", json=ping, headers={**headers, "host": loopback})
            assert named.status_code == 200, (loopback, named.text)
        # The transport's checks come before the body is judged: a DNS-rebinding page is refused,
        # not told the tool names in answer to an unknown one.
        for wrong, status in (
            ({"host": "evil.example"}, 421),
            ({"origin": "http://evil.example"}, 403),
            ({"content-type": "text/plain"}, 400),
            ({"accept": "text/html"}, 406),
        ):
            answer = await http.post("/mcp", content=json.dumps(unknown), headers={**headers, **wrong})
            assert answer.status_code == status, (wrong, answer.text)
            assert answer.headers["content-type"] == "application/problem+json"
            assert "cograph_route" not in answer.text

        async def chunks() -> AsyncIterator[bytes]:
            yield b"{"
            for _ in range(17):
                yield b" " * 65536
            yield b"}"

        chunked = await http.post("/mcp", content=chunks(), headers=headers)
        assert chunked.status_code == 413, chunked.text
        assert chunked.headers["content-type"] == "application/problem+json"


async def test_tool_calls_are_counted_by_tool_and_by_what_rest_would_answer(
    system: System, gateway: httpx.AsyncClient, auth: Auth
) -> None:
    """Every tool call is one POST to /mcp answered 200, refused or not: the HTTP metrics say
    nothing of which tools agents use or how often they are refused. /metrics counts each call
    by tool and by the status REST answers for the same request, and times it."""

    def calls(text: str, tool: str, status: int) -> float:
        line = f'cograph_mcp_tool_calls_total{{status_code="{status}",tool="{tool}"}} '
        return sum(float(row[len(line) :]) for row in text.splitlines() if row.startswith(line))

    def timed(text: str, tool: str) -> float:
        line = f'cograph_mcp_tool_duration_seconds_count{{tool="{tool}"}} '
        return sum(float(row[len(line) :]) for row in text.splitlines() if row.startswith(line))

    before = (await gateway.get("/metrics")).text
    missing = "00000000-0000-4000-8000-000000000000"
    async with mcp_client(system.gateway_url, auth["alice"]) as client:
        _ok(await client.call_tool("cograph_collections", {}))
        _ok(await client.call_tool("cograph_collections", {"query": "on-call"}))
        assert "HTTP 404" in _error(
            await client.call_tool("cograph_collection_search", {"collection_id": missing, "query": "x"})
        )
        assert "HTTP 400" in _error(
            await client.call_tool("cograph_collection_search", {"query": "x", "limt": 3})
        )
        with pytest.raises(MCPError, match="unknown tool"):  # a protocol error: no tool was called
            await client.call_tool("cograph_shell", {"command": "ls"})
    after = (await gateway.get("/metrics")).text

    assert calls(after, "cograph_collections", 200) - calls(before, "cograph_collections", 200) == 2
    assert (
        calls(after, "cograph_collection_search", 404) - calls(before, "cograph_collection_search", 404) == 1
    )
    assert (
        calls(after, "cograph_collection_search", 400) - calls(before, "cograph_collection_search", 400) == 1
    )
    assert "cograph_shell" not in after  # a name the client made up is never a label
    assert timed(after, "cograph_collections") - timed(before, "cograph_collections") == 2
