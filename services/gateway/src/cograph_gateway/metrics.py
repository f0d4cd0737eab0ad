"""Counting the requests no route matched.

Litestar's Prometheus middleware wraps each route, so a request for a path no route serves (404)
or with a method its route lacks (405) never reaches it: a client calling a retired or misspelt
endpoint, or a scanner, left no trace in /metrics. They are counted here, by status and method
only (never the path, which is the client's to choose and would explode the label set).
"""

from __future__ import annotations

from litestar.types import Message, Scope
from prometheus_client import Counter

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
