"""The Prometheus metrics an operator needs, defined once for every service."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

RPC_REQUESTS = Counter(
    "cograph_rpc_requests",
    "gRPC calls served, by service, method and status code.",
    ["service", "method", "code"],
)
RPC_LATENCY = Histogram(
    "cograph_rpc_duration_seconds",
    "Time to serve one gRPC call.",
    ["service", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
EMBEDDING_CALLS = Counter(
    "cograph_embedding_calls",
    "Requests made to the embedding provider.",
    ["provider", "model", "outcome"],
)
EMBEDDING_BATCH_SIZE = Histogram(
    "cograph_embedding_batch_size",
    "Texts sent to the embedding provider per request.",
    ["provider", "model"],
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
)
