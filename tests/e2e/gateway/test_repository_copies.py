"""A document uploaded to a collection that a readable repository already indexes is reported."""

from __future__ import annotations

from pathlib import Path

import httpx
from e2e.gateway.helpers import create_collection
from integration.repodocs.helpers import GitRepo

Auth = dict[str, dict[str, str]]

RUNBOOK = "# Runbook\n\n## Restart\n\nDrain the node, then restart the service.\n"


async def test_an_upload_with_a_repository_copy_says_so_to_those_who_can_read_it(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    checkout = GitRepo(tmp_path / "handbook")
    checkout.commit("init", {"docs/runbook.md": RUNBOOK})
    registered = await gateway.post(
        "/api/repos",
        json={
            "host": "example.com",
            "owner": "acme",
            "name": "handbook",
            "checkout_path": str(checkout.root),
            "visibility": "private",
        },
        headers=auth["admin"],
    )
    assert registered.status_code == 201, registered.text
    synced = await gateway.post(
        "/api/repos/example.com/acme/handbook/sync", params={"wait": "true"}, headers=auth["admin"]
    )
    assert synced.status_code == 200, synced.text

    admin = auth["admin"]
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
