"""OpenTelemetry tracing, Prometheus metrics and trace-aware logging."""

from cograph_telemetry.logging import configure_logging
from cograph_telemetry.tracing import configure_tracing, current_trace_id

__all__ = ["configure_logging", "configure_tracing", "current_trace_id"]
