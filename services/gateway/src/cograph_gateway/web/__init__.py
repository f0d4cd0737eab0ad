"""The gateway's web pages (server-rendered, no build step): the third face over the operations.

`WebFace` bundles what the Litestar app needs to serve them: the pages, the stylesheet, the
templates, the session and CSRF middlewares, and the `web_ops` dependency that builds the
operations for the browser's principal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litestar import Request
from litestar.config.csrf import CSRFConfig
from litestar.di import NamedDependency, Provide
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig
from litestar.types import ControllerRouterHandler, Middleware

from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.identity import Authenticator
from cograph_gateway.operations import Operations
from cograph_gateway.web.pages import DocsPages
from cograph_gateway.web.reader import ReaderPages
from cograph_gateway.web.render import highlight
from cograph_gateway.web.session import VIEWER_KEY, Viewers, csrf_config, session_config
from cograph_settings import Settings

HERE = Path(__file__).resolve().parent


@dataclass
class WebFace:
    route_handlers: list[ControllerRouterHandler]
    dependencies: dict[str, Provide]
    middleware: list[Middleware]
    csrf: CSRFConfig
    templates: TemplateConfig[JinjaTemplateEngine] = field(
        default_factory=lambda: TemplateConfig(
            directory=HERE / "templates", engine=JinjaTemplateEngine, engine_callback=_filters
        )
    )


def _filters(engine: JinjaTemplateEngine) -> None:
    engine.engine.filters["highlight"] = highlight


def web_face(settings: Settings, authenticator: Authenticator, backends: Backends, access: Access) -> WebFace:
    viewers = Viewers(authenticator, anonymous_read=settings.auth.anonymous_read)

    async def web_ops(request: Request[Any, Any, Any], viewers: NamedDependency[Viewers]) -> Operations:
        """The operations for the browser's principal, which the templates also show."""
        principal = await viewers.of(request)
        request.scope[VIEWER_KEY] = principal  # type: ignore[literal-required]
        return Operations(backends, access, principal)

    return WebFace(
        route_handlers=[
            DocsPages,
            ReaderPages,
            create_static_files_router(
                path="/static", directories=[HERE / "static"], include_in_schema=False
            ),
        ],
        dependencies={
            "viewers": Provide(lambda: viewers, use_cache=True, sync_to_thread=False),
            "web_ops": Provide(web_ops),
        },
        middleware=[session_config(settings).middleware],
        csrf=csrf_config(settings),
    )
