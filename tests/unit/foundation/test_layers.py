"""The two store services keep one layout, and each layer imports only what its role allows.

    rpc.py        the servicer: protobuf to application calls and back (with mapping.py)
    application/  one module per aggregate: the pool, transactions, orchestration
    stores/       one store per aggregate, the only code that runs the service's SQL
    domain/       rules and values, no I/O
    app.py        wiring

Stores and domain raise cograph_errors, which the gRPC interceptor maps to status codes: none of
them knows about gRPC or the contracts, so the same code would serve any transport.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.imports import imported_modules

ROOT = Path(__file__).resolve().parents[3]
STORE_SERVICES = ["collections", "repodocs"]
TRANSPORT = ("grpc", "cograph_grpc", "cograph", "google.protobuf")


def package(service: str) -> Path:
    return ROOT / "services" / service / "src" / f"cograph_{service}"


def importing(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(f"{p}.") for p in prefixes))


@pytest.mark.parametrize("service", STORE_SERVICES)
def test_both_store_services_name_their_roles_alike(service: str) -> None:
    found = {p.name for p in package(service).iterdir() if not p.name.startswith(("_", "."))}
    roles = {"app.py", "rpc.py", "mapping.py", "application", "stores", "domain", "sql", "migrations"}
    assert roles <= found, f"cograph_{service} lacks {sorted(roles - found)}"
    assert "schema.sql" in found


@pytest.mark.parametrize("service", STORE_SERVICES)
def test_the_servicer_reaches_the_stores_only_through_the_application(service: str) -> None:
    imported = imported_modules(package(service) / "rpc.py")
    assert importing(imported, (f"cograph_{service}.stores", "asyncpg", "cograph_db")) == []
    source = (package(service) / "rpc.py").read_text()
    assert ".transaction(" not in source
    assert ".acquire(" not in source


@pytest.mark.parametrize("service", STORE_SERVICES)
@pytest.mark.parametrize("layer", ["domain", "stores", "application"])
def test_domain_stores_and_application_know_no_transport(service: str, layer: str) -> None:
    imported = imported_modules(package(service) / layer)
    assert importing(imported, TRANSPORT) == []
    outer = tuple(f"cograph_{service}.{m}" for m in ("rpc", "mapping", "app"))
    assert importing(imported, outer) == []


@pytest.mark.parametrize("service", STORE_SERVICES)
def test_the_domain_does_no_io(service: str) -> None:
    imported = imported_modules(package(service) / "domain")
    io = ("asyncpg", "cograph_db", f"cograph_{service}.stores", f"cograph_{service}.application")
    assert importing(imported, (*io, "asyncio", "subprocess", "socket")) == []


@pytest.mark.parametrize("service", STORE_SERVICES)
def test_each_sql_file_is_run_by_one_store_only(service: str) -> None:
    loads: dict[str, list[str]] = {}
    for source in sorted(package(service).rglob("*.py")):
        for sql_file in re.findall(r"Queries\.load\([^,]+,\s*\"([\w.]+)\"\)", source.read_text()):
            loads.setdefault(sql_file, []).append(str(source.relative_to(package(service))))
    written = sorted(p.name for p in (package(service) / "sql").glob("*.sql"))
    assert sorted(loads) == written, "every named-query file is loaded, and only those"
    for sql_file, modules in loads.items():
        assert len(modules) == 1, f"{sql_file} is run by {modules}"
        assert modules[0].startswith("stores/"), f"{sql_file} is run outside the stores: {modules[0]}"
