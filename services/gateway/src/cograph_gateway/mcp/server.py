"""The MCP server: the SDK's server with the tools registered, holding tool calls to REST's
strictness (unknown or mistyped arguments are refused, naming them) and counting them."""

from __future__ import annotations

import time
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.mcp.tools import INSTRUCTIONS, READ_ONLY, TOOL_DESCRIPTIONS, CographTools, Refusal
from cograph_gateway.metrics import MCP_TOOL_CALLS, MCP_TOOL_DURATION


class _Server(MCPServer[Any]):
    """Arguments that do not fit a tool's schema are refused like any other bad input: a tool
    error that names each argument and what is wrong with it, ending in (HTTP 400). As REST does,
    an argument the tool does not have is refused (a misspelt `limt` was ignored), and a count is
    an integer (`true` was taken for 1)."""

    _arguments: dict[str, frozenset[str]] | None = None

    async def _arguments_of(self, name: str) -> frozenset[str] | None:
        if self._arguments is None:
            tools = await self.list_tools()
            self._arguments = {
                tool.name: frozenset(tool.input_schema.get("properties", {})) for tool in tools
            }
        return self._arguments.get(name)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        """The call, counted by tool and by the HTTP status REST would answer (200 when it
        succeeds) and timed: /mcp is one route to the HTTP metrics, whatever the tool."""
        started = time.perf_counter()
        status = 500
        try:
            result = await self._checked_call(name, arguments, context)
            status = 200
            return result
        except ToolError as error:
            status = _status_of(error)
            raise
        finally:
            # Only tools are labels: the guard answers a call to any other name before it gets here.
            MCP_TOOL_CALLS.labels(name, str(status)).inc()
            MCP_TOOL_DURATION.labels(name).observe(time.perf_counter() - started)

    async def _checked_call(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> Any:
        known = await self._arguments_of(name)
        unknown = sorted(set(arguments) - known) if known is not None else []
        if unknown:
            wrong = "; ".join(f"{argument}: not an argument of this tool" for argument in unknown)
            given = ", ".join(sorted(known or ())) or "none"
            raise Refusal(f"invalid arguments for {name}: {wrong}; its arguments are {given}", 400)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if not isinstance(error.__cause__, ValidationError):
                raise
            problems = error.__cause__.errors(include_url=False)
            wrong = "; ".join(_argument_problem(problem) for problem in problems)
            raise Refusal(f"invalid arguments for {name}: {wrong}", 400) from None


def _status_of(error: ToolError) -> int:
    """The HTTP status of a failed call: the refusal's (the SDK wraps what a tool raises), else
    500 for a crash and 400 for what the SDK refuses itself."""
    for raised in (error, error.__cause__):
        if isinstance(raised, Refusal):
            return raised.status
    return 500 if isinstance(error, UnexpectedToolError) else 400


def _argument_problem(problem: ErrorDetails) -> str:
    """`where: what is wrong (given …)`, the value shown when it is a short scalar."""
    where = ".".join(map(str, problem["loc"])) or "arguments"
    given = problem.get("input")
    if problem["type"] == "missing" or not isinstance(given, str | int | float | bool):
        return f"{where}: {problem['msg']}"
    shown = repr(given)
    return f"{where}: {problem['msg']} (given {shown[:80]}{'…' if len(shown) > 80 else ''})"


def create_mcp_server(backends: Backends, access: Access) -> MCPServer[Any]:
    server = _Server(name="cograph", title="Cograph Document RAG", instructions=INSTRUCTIONS)
    for name, handler in CographTools(backends, access).handlers().items():
        server.add_tool(handler, name=name, description=TOOL_DESCRIPTIONS[name], annotations=READ_ONLY)
    return server
