"""One tracer provider per process; spans cross every gRPC hop and reach SQL."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from cograph_settings import TelemetrySettings


def configure_tracing(
    service_name: str,
    settings: TelemetrySettings,
    exporter: SpanExporter | None = None,
) -> TracerProvider:
    """Install the process's tracer provider (once); with an exporter, instrument asyncpg.

    `exporter` overrides the OTLP exporter the settings would choose; tests pass
    an in-memory one. With neither, the gRPC and HTTP spans are still created, so
    trace ids reach the logs, but nothing is exported and SQL statements get no
    spans: a span per statement costs a search about 2 ms (bench/search_latency.py,
    eight statements) and would only be thrown away.
    """
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        provider = current
    else:
        resource = Resource.create(
            {"service.name": service_name, "service.namespace": settings.service_namespace}
        )
        provider = TracerProvider(resource=resource)
        trace.set_tracer_provider(provider)
    if exporter is None and settings.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=settings.otlp_endpoint)
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter))
        _instrument_asyncpg()
    return provider


def _instrument_asyncpg() -> None:
    from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor

    instrumentor = AsyncPGInstrumentor()  # type: ignore[no-untyped-call]
    if not instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.instrument()


def current_trace_id() -> str:
    """The current trace id as 32 hex digits, or "-" outside a span."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else "-"
