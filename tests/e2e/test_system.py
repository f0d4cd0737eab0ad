"""The four services running together, reached through the gateway over real HTTP and gRPC."""

from __future__ import annotations

import httpx
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from cograph_cli.runtime import System
from cograph_grpc import check_health, open_channel


async def test_gateway_reports_every_service_ready(gateway: httpx.AsyncClient) -> None:
    response = await gateway.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "service": "gateway",
        "status": "ready",
        "checks": {},
        "dependencies": {"collections": "ok", "repodocs": "ok", "search": "ok"},
    }
    assert (await gateway.get("/healthz")).json() == {"status": "ok", "service": "gateway"}


async def grpc_health(system: System, name: str) -> str:
    """The standard gRPC health status of one service, as a cluster's probe asks it."""
    channel = open_channel(f"127.0.0.1:{system.hosts[name].grpc.port}", system.settings.grpc)
    try:
        return await check_health(channel)
    finally:
        await channel.close(None)


async def test_each_service_answers_the_grpc_health_protocol(system: System) -> None:
    for name in ("collections", "repodocs", "search", "gateway"):
        assert await grpc_health(system, name) == "SERVING", name


async def test_store_readiness_checks_its_database(system: System) -> None:
    for name in ("collections", "repodocs"):
        port = system.hosts[name].http.port
        async with httpx.AsyncClient() as client:
            report = (await client.get(f"http://127.0.0.1:{port}/readyz")).json()
        assert report == {
            "service": name,
            "status": "ready",
            "checks": {"database": "ok"},
            "dependencies": {},
        }


async def test_search_is_ready_once_its_own_model_is_and_reports_the_stores(system: System) -> None:
    async with httpx.AsyncClient() as client:
        report = (await client.get(f"http://127.0.0.1:{system.hosts['search'].http.port}/readyz")).json()
    assert report == {
        "service": "search",
        "status": "ready",
        "checks": {"embedding": "ok"},  # the in-process model: loaded
        "dependencies": {"collections": "ok", "repodocs": "ok"},
    }


async def test_a_stopped_store_is_named_but_makes_no_other_service_unready(
    system: System, gateway: httpx.AsyncClient, auth: dict[str, dict[str, str]]
) -> None:
    """repodocs restarting (one replica, Recreate) must not take the gateway or search out of
    their Services: the probe stays ready, the body names what is down, collections still answer."""
    await system.hosts.pop("repodocs").stop()
    response = await gateway.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    assert body["dependencies"]["collections"] == "ok"
    assert body["dependencies"]["search"] == "ok"
    assert body["dependencies"]["repodocs"] != "ok"
    # search calls repodocs too: it says so, and stays ready (it answers from the other store).
    async with httpx.AsyncClient() as client:
        search = await client.get(f"http://127.0.0.1:{system.hosts['search'].http.port}/readyz")
    assert search.status_code == 200
    assert search.json()["dependencies"]["repodocs"] != "ok"
    for name in ("gateway", "search"):
        assert await grpc_health(system, name) == "SERVING", name
    created = await gateway.post("/api/md-collections", json={"name": "Still up"}, headers=auth["alice"])
    assert created.status_code == 201
    listed = await gateway.get("/api/md-collections", headers=auth["alice"])
    assert listed.status_code == 200
    assert [c["name"] for c in listed.json()["items"]] == ["Still up"]


async def test_one_request_is_one_trace_from_gateway_through_grpc_into_sql(
    gateway: httpx.AsyncClient,
    auth: dict[str, dict[str, str]],
    span_exporter: InMemorySpanExporter,
    tracer_provider: TracerProvider,
) -> None:
    tracer_provider.force_flush()  # spans of earlier tests still queued are not this request's
    span_exporter.clear()
    response = await gateway.get("/api/md-collections", headers=auth["alice"])
    assert response.status_code == 200
    tracer_provider.force_flush()
    spans = span_exporter.get_finished_spans()
    http_spans = [s for s in spans if s.kind == SpanKind.SERVER and "md-collections" in s.name]
    assert len(http_spans) == 1
    trace_id = http_spans[0].context.trace_id
    in_trace = [s for s in spans if s.context.trace_id == trace_id]
    grpc_clients = [s for s in in_trace if s.kind == SpanKind.CLIENT and "CollectionsService" in s.name]
    grpc_servers = [s for s in in_trace if s.kind == SpanKind.SERVER and "CollectionsService" in s.name]
    sql = [s for s in in_trace if s.attributes and s.attributes.get("db.system") == "postgresql"]
    assert grpc_clients, "the gateway's gRPC call is in the trace"
    assert grpc_servers, "the collections service's handling is in the trace"
    assert sql, "the SQL the collections service ran is in the trace"
    # The SQL ran inside the gRPC server span, which ran inside the gateway's client span.
    server_ids = {s.context.span_id for s in grpc_servers}
    assert any(s.parent is not None and s.parent.span_id in server_ids for s in sql)
    client_ids = {s.context.span_id for s in grpc_clients}
    assert any(s.parent is not None and s.parent.span_id in client_ids for s in grpc_servers)


async def test_requests_without_credentials_are_refused(gateway: httpx.AsyncClient) -> None:
    response = await gateway.get("/api/md-collections")
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["detail"] == "sign in: send 'Authorization: Bearer <token>'"
    bad = await gateway.get("/api/md-collections", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401
    assert bad.json()["detail"] == "the token is not valid"


async def test_collections_round_trip_through_the_gateway(
    gateway: httpx.AsyncClient, auth: dict[str, dict[str, str]]
) -> None:
    created = await gateway.post(
        "/api/md-collections",
        json={"name": "Runbooks", "description": "On-call procedures", "visibility": "private"},
        headers=auth["alice"],
    )
    assert created.status_code == 201
    collection = created.json()
    assert collection["owner"] == "alice"
    assert collection["visibility"] == "private"
    fetched = await gateway.get(f"/api/md-collections/{collection['id']}", headers=auth["alice"])
    assert fetched.json() == collection
    # bob is neither the owner nor in a granted group: 403, while a missing collection is 404.
    assert (
        await gateway.get(f"/api/md-collections/{collection['id']}", headers=auth["bob"])
    ).status_code == 403
    missing = await gateway.get(
        "/api/md-collections/00000000-0000-0000-0000-000000000000", headers=auth["bob"]
    )
    assert missing.status_code == 404
    listed = await gateway.get("/api/md-collections", params={"q": "on-call"}, headers=auth["alice"])
    assert [c["id"] for c in listed.json()["items"]] == [collection["id"]]
    assert (await gateway.get("/api/md-collections", headers=auth["bob"])).json()["items"] == []


async def test_invalid_bodies_are_clear_problems(
    gateway: httpx.AsyncClient, auth: dict[str, dict[str, str]]
) -> None:
    response = await gateway.post("/api/md-collections", json={"name": ""}, headers=auth["alice"])
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/problem+json")
    assert "name" in response.text
    wrong = await gateway.post(
        "/api/md-collections", json={"name": "x", "visibility": "secret"}, headers=auth["alice"]
    )
    assert wrong.status_code == 400
    assert "visibility" in wrong.text


async def test_metrics_show_requests_per_route_and_rpc(
    gateway: httpx.AsyncClient, auth: dict[str, dict[str, str]]
) -> None:
    collection = (
        await gateway.post("/api/md-collections", json={"name": "Metrics"}, headers=auth["alice"])
    ).json()
    await gateway.get(f"/api/md-collections/{collection['id']}", headers=auth["alice"])
    text = (await gateway.get("/metrics")).text
    # Route templates, not raw ids, label the HTTP metrics.
    assert 'path="/api/md-collections/{collection_id}"' in text
    assert collection["id"] not in text
    assert "cograph_http_requests_total" in text
    assert 'cograph_rpc_requests_total{code="OK",method="CreateCollection",service="collections"}' in text
    assert "cograph_rpc_duration_seconds_bucket" in text


async def test_metrics_count_requests_no_route_serves(
    gateway: httpx.AsyncClient, auth: dict[str, dict[str, str]]
) -> None:
    def unmatched(text: str, method: str, status: int) -> float:
        line = f'cograph_http_unmatched_requests_total{{method="{method}",status_code="{status}"}} '
        return sum(float(row[len(line) :]) for row in text.splitlines() if row.startswith(line))

    before = (await gateway.get("/metrics")).text
    assert (await gateway.get("/api/md-colections", headers=auth["alice"])).status_code == 404
    assert (await gateway.get("/api/md-colections/some/where", headers=auth["alice"])).status_code == 404
    assert (await gateway.put("/api/md-collections", headers=auth["alice"])).status_code == 405
    assert (await gateway.request("BREW", "/api/md-collections", headers=auth["alice"])).status_code == 405
    # A request a route serves, even refused, is the route's (cograph_http_requests_total).
    assert (await gateway.get("/api/md-collections")).status_code == 401
    after = (await gateway.get("/metrics")).text

    assert unmatched(after, "GET", 404) - unmatched(before, "GET", 404) == 2
    assert unmatched(after, "PUT", 405) - unmatched(before, "PUT", 405) == 1
    assert unmatched(after, "other", 405) - unmatched(before, "other", 405) == 1
    assert unmatched(after, "GET", 401) == 0
    # The path a client chose is never a label.
    assert "md-colections" not in after
