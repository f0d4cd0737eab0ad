"""Server and client interceptors: error mapping, metrics, logging, deadlines."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import grpc
from grpc import aio

from cograph_errors import ServiceError
from cograph_grpc.errors import Outage, status_of
from cograph_telemetry.metrics import RPC_LATENCY, RPC_REQUESTS
from cograph_telemetry.tracing import current_trace_id

log = logging.getLogger(__name__)

# Trailing metadata of an UNAVAILABLE the service itself answered for an outage: its details are
# then words for a person (grpc's own UNAVAILABLE, for a peer it cannot reach, names addresses).
OUTAGE_KEY = "cograph-outage"

# The method label of calls to methods the server does not have: one value, whatever clients ask for.
UNKNOWN_METHOD = "unknown"

# grpc's classes are generic only in their type stubs.
if TYPE_CHECKING:
    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]
    _ServerInterceptor: TypeAlias = aio.ServerInterceptor[Any, Any]
    _ClientInterceptor: TypeAlias = aio.UnaryUnaryClientInterceptor[Any, Any]
else:
    Handler = grpc.RpcMethodHandler
    _ServerInterceptor = aio.ServerInterceptor
    _ClientInterceptor = aio.UnaryUnaryClientInterceptor
Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[Handler]]


class ServerInterceptor(_ServerInterceptor):
    """Maps ServiceError to its status, and an outage's errors to UNAVAILABLE; hides unexpected
    errors behind a trace id; records metrics."""

    def __init__(self, service: str, outages: Sequence[Outage] = ()) -> None:
        self._service = service
        self._outages = tuple(outages)

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler:
        handler = await continuation(handler_call_details)
        if handler is None:
            # grpc answers UNIMPLEMENTED itself; count it under one label, as callers choose the name.
            RPC_REQUESTS.labels(self._service, UNKNOWN_METHOD, grpc.StatusCode.UNIMPLEMENTED.name).inc()
            return handler
        # Streaming methods pass through untouched.
        if handler.unary_unary is None:
            return handler
        method = handler_call_details.method.rsplit("/", 1)[-1]
        inner = handler.unary_unary

        async def unary_unary(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
            started = time.perf_counter()
            code = grpc.StatusCode.OK
            try:
                return await inner(request, context)  # type: ignore[arg-type]
            except ServiceError as error:
                code = status_of(error)
                await context.abort(code, error.message)
            except aio.AbortError:
                code = context.code()
                raise
            except asyncio.CancelledError:
                # grpc cancels the handler when the call's deadline passes or the client gives up.
                remaining: float | None = context.time_remaining()  # None: no deadline
                expired = remaining is not None and remaining <= 0
                code = grpc.StatusCode.DEADLINE_EXCEEDED if expired else grpc.StatusCode.CANCELLED
                raise
            except NotImplementedError:
                # The generated base class's answer for an RPC a servicer does not implement.
                code = grpc.StatusCode.UNIMPLEMENTED
                await context.abort(code, f"{method} is not implemented by {self._service}")
            except Exception as error:
                outage = next((o for o in self._outages if o.matches(error)), None)
                if outage is not None:
                    # Expected while it lasts, and every call says so: one line each, no traceback.
                    code = grpc.StatusCode.UNAVAILABLE
                    log.warning(
                        "%s/%s: %s (%s: %s)",
                        self._service,
                        method,
                        outage.message,
                        type(error).__name__,
                        error,
                    )
                    await context.abort(code, outage.message, trailing_metadata=((OUTAGE_KEY, "1"),))
                code = grpc.StatusCode.INTERNAL
                trace_id = current_trace_id()
                log.exception("%s/%s failed", self._service, method)
                await context.abort(grpc.StatusCode.INTERNAL, f"internal error (trace {trace_id})")
            finally:
                RPC_REQUESTS.labels(self._service, method, code.name).inc()
                RPC_LATENCY.labels(self._service, method).observe(time.perf_counter() - started)

        return grpc.unary_unary_rpc_method_handler(
            unary_unary,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


class DeadlineInterceptor(_ClientInterceptor):
    """Gives every call a deadline, so no caller ever waits forever on a stuck peer."""

    def __init__(self, default_timeout: float) -> None:
        self._default_timeout = default_timeout

    async def intercept_unary_unary(
        self,
        continuation: Callable[[aio.ClientCallDetails, Any], Awaitable[Any]],
        client_call_details: aio.ClientCallDetails,
        request: Any,
    ) -> Any:
        if client_call_details.timeout is None:
            client_call_details = aio.ClientCallDetails(
                method=client_call_details.method,
                timeout=self._default_timeout,
                metadata=client_call_details.metadata,
                credentials=client_call_details.credentials,
                wait_for_ready=client_call_details.wait_for_ready,
            )
        return await continuation(client_call_details, request)
