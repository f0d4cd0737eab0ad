"""What every service process shares: readiness, ops HTTP (healthz, readyz, metrics) and the host."""

from cograph_service.host import ServiceHost
from cograph_service.http import HttpServer
from cograph_service.ops import ops_app, ops_handlers
from cograph_service.outages import DATABASE_OUTAGE
from cograph_service.readiness import (
    Check,
    Readiness,
    Report,
    cached,
    database_check,
    grpc_health_check,
)
from cograph_service.starting import serving_while_starting

__all__ = [
    "DATABASE_OUTAGE",
    "Check",
    "HttpServer",
    "Readiness",
    "Report",
    "ServiceHost",
    "cached",
    "database_check",
    "grpc_health_check",
    "ops_app",
    "ops_handlers",
    "serving_while_starting",
]
