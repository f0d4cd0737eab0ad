"""What authorizing one request costs as the deployment grows: the p50 of a document GET, an
upload and a repository GET through the gateway, with 10 and with 10,000 collections and
repositories in the store, in one run on one system.

    .venv/bin/python bench/access_scaling.py [--requests N] [--large N]

The system is `cograph up`'s: the four services on an embedded PostgreSQL, over real gRPC and
HTTP. The caller owns one collection (one document in it) and one repository; the others
belong to other tenants, each with two group grants, inserted by SQL (registering 10,000
repositories through the API would start 10,000 syncs; the schedule is off for the same reason).
Requests of the three kinds are interleaved, so background load hits each alike, and the small
store is measured before and after the large one. Beside them, the p50 of listing every
collection's access facts (ListCollectionAccess), measured apart, shows what each request paid
when it was authorized against the full listing.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
import httpx
import msgspec

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.collections.v1 import collections_service_pb2_grpc as cpb_grpc
from cograph_cli.runtime import start_system
from cograph_db import EmbeddedPostgres
from cograph_embeddings import LocalProvider
from cograph_grpc import open_channel
from cograph_settings import ApiToken, Settings

TOKEN = "bench-owner-token"
REPOSITORY = "example.com/bench/target"


def settings_for(data_dir: Path) -> Settings:
    defaults = Settings()
    replace = msgspec.structs.replace
    return replace(
        defaults,
        auth=replace(defaults.auth, api_tokens=[ApiToken(token=TOKEN, sub="bench", groups=["bench"])]),
        collections=replace(defaults.collections, grpc_port=0, http_port=0),
        repodocs=replace(
            defaults.repodocs,
            grpc_port=0,
            http_port=0,
            sync_interval_seconds=0,
            checkout_dir=str(data_dir / "checkouts"),
        ),
        search=replace(defaults.search, grpc_port=0, http_port=0),
        gateway=replace(defaults.gateway, port=0, grpc_port=0),
    )


async def fill(connection: asyncpg.Connection, count: int, start: int) -> None:
    """Other tenants' collections and repositories, numbered from `start`, two grants each."""
    numbers = range(start, start + count)
    collection_ids = [uuid.uuid4() for _ in numbers]
    repository_ids = [uuid.uuid4() for _ in numbers]
    await connection.copy_records_to_table(
        "md_collections",
        schema_name="collections",
        columns=["id", "name", "visibility", "owner"],
        records=[
            (i, f"tenant {n}", "private", f"tenant-{n}") for i, n in zip(collection_ids, numbers, strict=True)
        ],
    )
    await connection.copy_records_to_table(
        "md_collection_grants",
        schema_name="collections",
        records=[(i, group) for i in collection_ids for group in ("readers", "writers")],
    )
    await connection.copy_records_to_table(
        "repositories",
        schema_name="repodocs",
        columns=["id", "host", "owner", "name", "clone_url", "visibility", "owner_subject"],
        records=[
            (
                i,
                "example.com",
                f"tenant-{n}",
                "repo",
                f"https://example.com/tenant-{n}/repo.git",
                "private",
                "x",
            )
            for i, n in zip(repository_ids, numbers, strict=True)
        ],
    )
    await connection.copy_records_to_table(
        "repository_grants",
        schema_name="repodocs",
        records=[(i, group) for i in repository_ids for group in ("readers", "writers")],
    )
    await connection.execute("ANALYZE collections.md_collections, repodocs.repositories")


async def empty(connection: asyncpg.Connection, keep: int) -> None:
    """Remove the other tenants numbered from `keep` on (collections and repositories)."""
    numbered = r"tenant-(\d+)"
    await connection.execute(
        "DELETE FROM collections.md_collections WHERE substring(owner FROM $1)::int >= $2", numbered, keep
    )
    await connection.execute(
        "DELETE FROM repodocs.repositories WHERE substring(owner FROM $1)::int >= $2", numbered, keep
    )
    await connection.execute("VACUUM ANALYZE collections.md_collections, repodocs.repositories")


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


async def measure(calls: dict[str, Callable[[], Awaitable[object]]], requests: int) -> dict[str, float]:
    """p50 in milliseconds of each call, interleaved; a few warm-up rounds first."""
    for _ in range(5):
        for call in calls.values():
            await call()
    seconds: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(requests):
        for name, call in calls.items():
            seconds[name].append(await timed(call))
    return {name: statistics.median(values) * 1000 for name, values in seconds.items()}


async def main(requests: int, large: int) -> None:
    logging.disable(logging.INFO)  # one access log line per request would drown the figures
    with tempfile.TemporaryDirectory(prefix="cograph-access-") as tmp:
        data_dir = Path(tmp)
        embedded = EmbeddedPostgres(data_dir / "postgres")
        dsn = embedded.start()
        embedder = LocalProvider("all-MiniLM-L6-v2", None, batch_size=256)
        system = await start_system(settings_for(data_dir), dsn, embedder)
        connection = await asyncpg.connect(dsn)
        channel = open_channel(system.settings.collections.target, system.settings.grpc)
        collections = cpb_grpc.CollectionsServiceStub(channel)
        headers = {"authorization": f"Bearer {TOKEN}"}
        try:
            async with httpx.AsyncClient(base_url=system.gateway_url, headers=headers) as client:
                created = await client.post("/api/md-collections", json={"name": "bench"})
                collection_id = created.raise_for_status().json()["id"]
                base = f"/api/md-collections/{collection_id}/documents"
                uploaded = await client.post(base, json={"source_key": "a.md", "content": "# A\n\nalpha"})
                document_id = uploaded.raise_for_status().json()["document_id"]
                host, owner, name = REPOSITORY.split("/")
                await connection.execute(
                    "INSERT INTO repodocs.repositories (host, owner, name, clone_url, visibility,"
                    " owner_subject) VALUES ($1, $2, $3, $4, 'private', 'bench')",
                    host,
                    owner,
                    name,
                    f"https://{REPOSITORY}.git",
                )
                versions = iter(range(10**9))

                def upload() -> Awaitable[httpx.Response]:
                    # A new version each time: replaced, re-chunked, an embed job queued.
                    content = f"# B\n\nbeta version {next(versions)}"
                    return client.post(base, json={"source_key": "b.md", "content": content})

                calls: dict[str, Callable[[], Awaitable[object]]] = {
                    "document GET": lambda: client.get(f"{base}/{document_id}"),
                    "upload": upload,
                    "repository GET": lambda: client.get(f"/api/repos/{REPOSITORY}"),
                }
                for call in calls.values():  # each answers, and answers 200
                    (await call()).raise_for_status()  # type: ignore[attr-defined]
                # Measured apart: its load would fall on the requests after it.
                listing: dict[str, Callable[[], Awaitable[object]]] = {
                    "(full access listing)": lambda: collections.ListCollectionAccess(
                        cpb.ListCollectionAccessRequest()
                    )
                }
                # 10, then `large`, then 10 again (the others removed): the first rounds of a fresh
                # system run slower, so the small store is measured on both sides of the large one.
                phases: list[dict[str, float]] = []
                await fill(connection, 9, 1)
                for others in (large - 10, -(large - 10), 0):
                    phases.append(await measure(calls, requests) | await measure(listing, requests // 10))
                    if others > 0:
                        await fill(connection, others, 10)
                    elif others < 0:
                        await empty(connection, keep=10)
        finally:
            await connection.close()
            await channel.close(None)
            await system.stop()
            await embedder.close()
            embedded.stop()
    print(f"p50 in ms: {requests} of each request interleaved, {requests // 10} listings;")
    print(f"stores of 10, then {large:,}, then 10 again; ratio: {large:,} against the mean of the 10s")
    print(f"{'request':<24}{'10':>9}{f'{large:,}':>9}{'10':>9}{'ratio':>8}")
    first, big, last = phases[0], phases[1], phases[2]
    for name in first:
        ratio = big[name] / ((first[name] + last[name]) / 2)
        print(f"{name:<24}{first[name]:>9.2f}{big[name]:>9.2f}{last[name]:>9.2f}{ratio:>8.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--large", type=int, default=10_000)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.requests, arguments.large))
