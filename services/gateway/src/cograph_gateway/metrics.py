"""The gateway's metrics beyond Litestar's per-route ones: requests no route matched, MCP tool calls.

Litestar's Prometheus middleware wraps each route, so a request for a path no route serves (404)
or with a method its route lacks (405) never reaches it: a client calling a retired or misspelt
endpoint, or a scanner, left no trace in /metrics. They are counted here, by status and method
only (never the path, which is the client's to choose and would explode the label set).

Every MCP tool call is one POST to /mcp, whatever the tool and however it ended (a refused call
is still a 200 carrying a tool error), so tools are counted and timed here by name and outcome.
"""

from __future__ import annotations

from litestar.types import Message, Scope
from prometheus_client import Counter, Histogram

MCP_TOOL_CALLS = Counter(
    "cograph_mcp_tool_calls_total",
    "MCP tool calls, by tool and by the HTTP status REST would answer (200 when the call succeeded).",
    ["tool", "status_code"],
)
MCP_TOOL_DURATION = Histogram(
    "cograph_mcp_tool_duration_seconds",
    "Time an MCP tool call took, by tool.",
    ["tool"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)

UNMATCHED_REQUESTS = Counter(
    "cograph_http_unmatched_requests_total",
    "HTTP requests no route served (no such path, or a method the path does not take).",
    ["method", "status_code"],
)
# Any other method a client sends is counted as "other": it is the client's to choose.
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


async def count_unmatched(message: Message, scope: Scope) -> None:
    """A before_send hook: Litestar names the route on the scope once routing matched one."""
    if message["type"] == "http.response.start" and "route_handler" not in scope:
        method = scope["method"] if scope["method"] in _METHODS else "other"
        UNMATCHED_REQUESTS.labels(method, str(message["status"])).inc()
