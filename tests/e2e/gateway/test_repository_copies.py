"""A document indexed both in a collection and as a repository doc is reported, both ways, to
those who can read both copies."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import msgspec
from e2e.gateway.helpers import create_collection
from integration.repodocs.helpers import GitRepo

from cograph_cli.runtime import System, start_system
from cograph_embeddings import EmbeddingProvider
from cograph_settings import Settings

Auth = dict[str, dict[str, str]]

RUNBOOK = "# Runbook\n\n## Restart\n\nDrain the node, then restart the service.\n"


async def sync_handbook(gateway: httpx.AsyncClient, admin: dict[str, str], checkout: Path) -> None:
    """example.com/acme/handbook, a private repository holding docs/runbook.md, synced."""
    repository = GitRepo(checkout)
    repository.commit("init", {"docs/runbook.md": RUNBOOK})
    registered = await gateway.post(
        "/api/repos",
        json={
            "host": "example.com",
            "owner": "acme",
            "name": "handbook",
            "checkout_path": str(repository.root),
            "visibility": "private",
        },
        headers=admin,
    )
    assert registered.status_code == 201, registered.text
    synced = await gateway.post(
        "/api/repos/example.com/acme/handbook/sync", params={"wait": "true"}, headers=admin
    )
    assert synced.status_code == 200, synced.text


async def test_an_upload_with_a_repository_copy_says_so_to_those_who_can_read_it(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    admin = auth["admin"]
    await sync_handbook(gateway, admin, tmp_path / "handbook")
    collection = await create_collection(gateway, admin, "Ops wiki")
    base = f"/api/md-collections/{collection['id']}/documents"
    batch = await gateway.post(
        f"{base}/batch",
        json={
            "documents": [
                {"source_key": "runbook.md", "content": RUNBOOK},
                {"source_key": "other.md", "content": "# Other\n\nNot in any repository.\n"},
                {"source_key": "", "content": RUNBOOK},  # refused: no warning either
            ]
        },
        headers=admin,
    )
    assert batch.status_code == 201, batch.text
    copied, other, refused = batch.json()["results"]
    (warning,) = copied["warnings"]
    assert "also indexed as a repository doc (example.com/acme/handbook:docs/runbook.md)" in warning
    assert other["warnings"] == []
    assert refused["error"]["reason"] == "invalid_source_key"
    assert refused["warnings"] == []
    single = await gateway.post(f"{base}", json={"source_key": "again.md", "content": RUNBOOK}, headers=admin)
    assert single.status_code == 201, single.text
    assert "example.com/acme/handbook:docs/runbook.md" in single.json()["warnings"][0]

    # Alice cannot read the private repository: her upload of the same bytes names nothing.
    alice = auth["alice"]
    hers = await create_collection(gateway, alice, "Alice's notes")
    upload = await gateway.post(
        f"/api/md-collections/{hers['id']}/documents",
        json={"source_key": "runbook.md", "content": RUNBOOK},
        headers=alice,
    )
    assert upload.status_code == 201, upload.text
    assert upload.json()["warnings"] == []

    # The other way: reading the repository's documents names the collections holding the same
    # bytes, among those the reader can read.
    listing = "/api/repos/example.com/acme/handbook/documents"
    repository_doc = (await gateway.get(listing, headers=admin)).json()["items"][0]
    (warning,) = repository_doc["warnings"]
    assert "also uploaded to a collection" in warning
    assert f"runbook.md in collection 'Ops wiki' ({collection['id']})" in warning
    assert f"again.md in collection 'Ops wiki' ({collection['id']})" in warning
    assert "Alice's notes" not in warning  # private: her own and her groups' (the spec's visibility table)
    detail = await gateway.get(f"{listing}/{repository_doc['id']}", headers=admin)
    assert detail.json()["warnings"] == [warning]

    bob = auth["bob"]  # group support: reads the repository once granted, neither collection yet
    granted = await gateway.post(
        "/api/repos/example.com/acme/handbook/grants", json={"group": "support"}, headers=admin
    )
    assert granted.status_code in (200, 201, 204), granted.text
    assert (await gateway.get(listing, headers=bob)).json()["items"][0]["warnings"] == []
    shared = await gateway.post(
        f"/api/md-collections/{collection['id']}/grants", json={"group": "support"}, headers=admin
    )
    assert shared.status_code in (200, 201, 204), shared.text
    (bobs,) = (await gateway.get(listing, headers=bob)).json()["items"][0]["warnings"]
    assert f"runbook.md in collection 'Ops wiki' ({collection['id']})" in bobs
    shared = await gateway.post(
        f"/api/md-collections/{hers['id']}/grants", json={"group": "support"}, headers=alice
    )
    assert shared.status_code in (200, 201, 204), shared.text
    (bobs,) = (await gateway.get(listing, headers=bob)).json()["items"][0]["warnings"]
    assert f'runbook.md in collection "Alice\'s notes" ({hers["id"]})' in bobs


async def test_a_store_that_is_down_costs_only_the_warning(
    system: System, gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    admin = auth["admin"]
    await sync_handbook(gateway, admin, tmp_path / "handbook")
    collection = await create_collection(gateway, admin, "Ops wiki")
    uploaded = await gateway.post(
        f"/api/md-collections/{collection['id']}/documents",
        json={"source_key": "runbook.md", "content": RUNBOOK},
        headers=admin,
    )
    assert uploaded.status_code == 201, uploaded.text
    listing = "/api/repos/example.com/acme/handbook/documents"
    assert len((await gateway.get(listing, headers=admin)).json()["items"][0]["warnings"]) == 1

    await system.hosts["collections"].stop()
    began = time.monotonic()
    listed = await gateway.get(listing, headers=admin)
    assert listed.status_code == 200, listed.text
    assert [(d["path"], d["warnings"]) for d in listed.json()["items"]] == [("docs/runbook.md", [])]
    assert time.monotonic() - began < 10


async def test_a_batch_over_a_thousand_documents_is_looked_up_in_slices(
    settings: Settings, database: str, embedder: EmbeddingProvider, auth: Auth, tmp_path: Path
) -> None:
    """A deployment may take batches of more than 1,000 documents; a store looks up at most
    1,000 hashes a call. The gateway asks in slices: one call for all failed the request with a
    400 after the documents were stored."""
    replace = msgspec.structs.replace
    larger = replace(settings, collections=replace(settings.collections, max_batch_documents=1500))
    running = await start_system(larger, database, embedder)
    try:
        await asyncio.wait_for(running.hosts["gateway"].ready.wait(), 30)
        async with httpx.AsyncClient(base_url=running.gateway_url, timeout=120) as gateway:
            admin = auth["admin"]
            await sync_handbook(gateway, admin, tmp_path / "handbook")
            collection = await create_collection(gateway, admin, "Big wiki")
            documents = [{"source_key": f"{n:04}.md", "content": f"# Page {n}\n"} for n in range(1200)]
            documents[-1] = {"source_key": "runbook.md", "content": RUNBOOK}  # in the last slice
            batch = await gateway.post(
                f"/api/md-collections/{collection['id']}/documents/batch",
                json={"documents": documents},
                headers=admin,
            )
            assert batch.status_code == 201, batch.text
            results = batch.json()["results"]
            assert [result["state"] for result in results] == ["created"] * 1200
            assert "example.com/acme/handbook:docs/runbook.md" in results[-1]["warnings"][0]
            assert all(result["warnings"] == [] for result in results[:-1])
    finally:
        await running.stop()
