"""Client channels to the other services, traced and with a deadline on every call."""

from __future__ import annotations

from grpc import aio
from opentelemetry.instrumentation.grpc import aio_client_interceptors

from cograph_grpc.interceptors import DeadlineInterceptor
from cograph_settings import GrpcSettings


def open_channel(target: str, settings: GrpcSettings) -> aio.Channel:
    options = [
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.keepalive_time_ms", 30_000),
        # Spread calls over every replica a (headless) service name resolves to.
        ("grpc.lb_policy_name", "round_robin"),
    ]
    return aio.insecure_channel(
        target,
        options=options,
        interceptors=[
            DeadlineInterceptor(settings.deadline_seconds),  # type: ignore[list-item]
            *aio_client_interceptors(),  # type: ignore[no-untyped-call]
        ],
    )
