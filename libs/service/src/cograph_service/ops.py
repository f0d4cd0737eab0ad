"""Ops HTTP endpoints: liveness, readiness with the status of each dependency, Prometheus metrics."""

from __future__ import annotations

from typing import Any

from litestar import Litestar, MediaType, Response, get
from litestar.handlers import HTTPRouteHandler
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from cograph_service.readiness import Readiness, Report


def ops_handlers(service: str, readiness: Readiness) -> list[HTTPRouteHandler]:
    @get("/healthz", media_type=MediaType.JSON, include_in_schema=False, sync_to_thread=False)
    def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok", "service": service}

    @get("/readyz", include_in_schema=False)
    async def readyz() -> Response[Report]:
        """Readiness: 200 when this process can serve (its own checks); the body also names the
        status of each dependency, which never makes it 503 (see cograph_service.readiness)."""
        report = await readiness.report()
        return Response(report, status_code=200 if report.ready else 503)

    @get("/metrics", include_in_schema=False, sync_to_thread=False)
    def metrics() -> Response[bytes]:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return [healthz, readyz, metrics]


def ops_app(service: str, readiness: Readiness, **kwargs: Any) -> Litestar:
    return Litestar(
        route_handlers=ops_handlers(service, readiness), openapi_config=None, logging_config=None, **kwargs
    )
