"""OPTIONS names every method its path serves (RFC 9110 9.3.7), HEAD wherever GET is.

Litestar answers OPTIONS itself, but its answer lists the methods of the route as it stood when
the path's first handler was registered: a path whose handlers were added one by one (a list and
a create, a get, a patch and a delete) answered "OPTIONS, POST" or "DELETE, OPTIONS". The Allow
header is set here from the app's finished routes instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.types import Message, Scope


def allowed(methods: Iterable[str]) -> str:
    """An Allow header's value: the methods, with HEAD wherever GET is (head.py answers it)."""
    every = {getattr(method, "value", method) for method in methods}  # Litestar's are enums
    return ", ".join(sorted(every | ({"HEAD"} if "GET" in every else set())))


class AllowEveryMethod:
    """A before_send hook: the Allow header of an OPTIONS answer, from the route that matched."""

    def __init__(self) -> None:
        self._by_template: dict[str, str] | None = None

    def _allow(self, app: Litestar, template: str) -> str | None:
        if self._by_template is None:  # the routes are final once the app serves
            self._by_template = {
                route.path_format: allowed(route.methods)
                for route in app.routes
                if isinstance(route, HTTPRoute)
            }
        return self._by_template.get(template)

    async def __call__(self, message: Message, scope: Scope) -> None:
        if message["type"] != "http.response.start" or scope.get("method") != "OPTIONS":
            return
        allow = self._allow(scope["app"], scope.get("path_template", ""))
        if allow is None:
            return
        headers = [(name, value) for name, value in message.get("headers", []) if name.lower() != b"allow"]
        message["headers"] = [*headers, (b"allow", allow.encode())]
