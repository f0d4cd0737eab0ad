"""The standard gRPC health protocol, client side."""

from __future__ import annotations

from grpc import aio
from grpc_health.v1 import health_pb2, health_pb2_grpc


async def check_health(channel: aio.Channel, service: str = "", timeout: float = 2.0) -> str:
    """SERVING, NOT_SERVING, UNKNOWN, or why it could not be asked (e.g. UNAVAILABLE)."""
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        response = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
    except aio.AioRpcError as error:
        return str(error.code().name)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))
