"""PATCH and DELETE /api/repos/{host}/{owner}/{name} end to end: through the gateway's policy, real
gRPC to repodocs and real PostgreSQL; bad input is problem+json, unreadable is missing, and a
deleted repository is gone from the database, the disk and every search, also one racing it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
from e2e.gateway.helpers import is_problem
from e2e.gateway.test_collections_api import Auth
from integration.repodocs.helpers import GitRepo
from integration.repodocs.test_lifecycle import project, rows_of

from cograph_settings import Settings

REPO = "/api/repos/example.com/acme/tools"


def _origin(root: Path) -> GitRepo:
    origin = GitRepo(root)
    origin.commit("main", project("Tools"))
    origin.git("checkout", "--quiet", "-b", "release")
    origin.commit("release", {"docs/release.md": "# Release notes\n\nOnly on the release branch.\n"})
    origin.git("checkout", "--quiet", "main")
    return origin


async def _register(gateway: httpx.AsyncClient, auth: Auth, origin: GitRepo) -> dict[str, Any]:
    """By the administrator (a file:// clone URL reads the server's disk), granted to research."""
    body = {"host": "example.com", "owner": "acme", "name": "tools", "clone_url": f"file://{origin.root}"}
    registered = await gateway.post("/api/repos", json=body, headers=auth["admin"])
    assert registered.status_code == 201, registered.text
    granted = await gateway.post(f"{REPO}/grants", json={"group": "research"}, headers=auth["admin"])
    assert granted.status_code == 201, granted.text
    synced = await gateway.post(f"{REPO}/sync", params={"wait": "true"}, headers=auth["admin"])
    assert synced.json()["status"] == "success", synced.text
    # REST shows how the sync went, phase by phase (tests/integration/repodocs/test_sync_progress.py
    # watches the counts grow while one runs).
    done = (await gateway.get(f"{REPO}/syncs", headers=auth["admin"])).json()["items"][0]
    assert done["phase"] == "link"
    assert set(done["progress"]["phase_seconds"]) == {"fetch", "discover", "chunk", "embed", "link"}
    assert done["progress"]["files_read"] == done["progress"]["files_total"] == 4  # 2 docs, 2 sources
    return dict(registered.json())


async def _syncs(gateway: httpx.AsyncClient, auth: Auth, count: int) -> list[dict[str, Any]]:
    """The syncs once `count` have ended and none runs (within a minute)."""
    deadline = time.monotonic() + 60
    while True:
        syncs: list[dict[str, Any]] = (await gateway.get(f"{REPO}/syncs", headers=auth["admin"])).json()[
            "items"
        ]
        if len(syncs) >= count and all(s["status"] in ("success", "error") for s in syncs):
            return syncs
        assert time.monotonic() < deadline, syncs
        await asyncio.sleep(0.1)


async def test_patch_changes_what_it_names_for_the_owner_only(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    change = {"visibility": "public"}
    before = {
        "PATCH": await gateway.patch(REPO, json=change, headers=auth["bob"]),
        "DELETE": await gateway.delete(REPO, headers=auth["bob"]),
    }
    await _register(gateway, auth, _origin(tmp_path / "origin"))
    admin = auth["admin"]

    # Who may: the owner (here the administrator who registered it) or an administrator; a reader
    # by grant is refused as such, a caller who cannot read it gets the missing repository's 404.
    is_problem(await gateway.patch(REPO, json=change), 401)
    is_problem(await gateway.delete(REPO), 401)
    refused = is_problem(await gateway.patch(REPO, json=change, headers=auth["alice"]), 403)
    assert "only the owner or an administrator" in refused["detail"]
    is_problem(await gateway.delete(REPO, headers=auth["alice"]), 403)
    hidden = {
        "PATCH": await gateway.patch(REPO, json=change, headers=auth["bob"]),
        "DELETE": await gateway.delete(REPO, headers=auth["bob"]),
    }
    for method, answer in hidden.items():
        is_problem(answer, 404)
        assert answer.content == before[method].content, method

    # Each field alone, and back.
    public = await gateway.patch(REPO, json=change, headers=admin)
    assert public.status_code == 200, public.text
    assert public.json()["visibility"] == "public"
    assert (await gateway.get(REPO, headers=auth["bob"])).status_code == 200  # public now
    for given, shown in ((120, 120), (0, 0), ("default", None)):
        answer = await gateway.patch(REPO, json={"sync_interval_seconds": given}, headers=admin)
        assert answer.status_code == 200, answer.text
        assert answer.json()["sync_interval_seconds"] == shown
    assert len(await _syncs(gateway, auth, 1)) == 1  # none of that syncs

    # A new branch: checked on the remote, then synced.
    moved = await gateway.patch(REPO, json={"default_branch": "release"}, headers=admin)
    assert moved.status_code == 200, moved.text
    assert moved.json()["default_branch"] == "release"
    syncs = await _syncs(gateway, auth, 2)
    assert (syncs[0]["trigger"], syncs[0]["status"]) == ("manual", "success")
    paths = {d["path"] for d in (await gateway.get(f"{REPO}/documents", headers=admin)).json()["items"]}
    assert "docs/release.md" in paths


async def test_bad_changes_are_problems_and_change_nothing(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    await _register(gateway, auth, _origin(tmp_path / "origin"))
    admin = auth["admin"]
    before = (await gateway.get(REPO, headers=admin)).json()
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "nothing to change"),
        ({"visibility": None}, "nothing to change"),
        ({"visibility": "admin_only"}, "visibility"),
        ({"sync_interval_seconds": 30}, "must be 0 (no scheduled sync) or 60 to 31622400"),
        ({"sync_interval_seconds": -1}, "sync_interval_seconds"),
        ({"sync_interval_seconds": "hourly"}, "sync_interval_seconds"),
        ({"default_branch": "a..b"}, "is not a valid branch name"),
        ({"default_branch": "nope"}, "has no branch 'nope'"),
        ({"name": "renamed"}, "name"),
        # Refused as a whole: the valid visibility is not kept either.
        ({"visibility": "public", "sync_interval_seconds": 59}, "must be 0 (no scheduled sync)"),
    ]
    for body, fragment in cases:
        refused = is_problem(await gateway.patch(REPO, json=body, headers=admin), 400)
        assert fragment in refused["detail"], (body, refused)
    after = (await gateway.get(REPO, headers=admin)).json()
    assert {k: v for k, v in after.items() if k != "last_sync"} == {
        k: v for k, v in before.items() if k != "last_sync"
    }
    assert len(await _syncs(gateway, auth, 1)) == 1


async def test_delete_leaves_nothing_and_searches_racing_it_find_none_of_it(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path, settings: Settings, database: str
) -> None:
    repository = await _register(gateway, auth, _origin(tmp_path / "origin"))
    admin = auth["admin"]
    checkout = Path(settings.repodocs.checkout_dir) / repository["id"]
    assert checkout.is_dir()
    query = {"query": "how do I build a Field with make_field"}

    def of_it(answer: httpx.Response) -> int:
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["failures"] == [], body["failures"]
        ids = [hit["chunk"]["repository_id"] for hit in body["repo_docs"]]
        ids += [hit["node"]["repository_id"] for hit in body["code"]]
        ids += [r["chunk"]["repository_id"] for hit in body["code"] for r in hit["related_repo_doc_chunks"]]
        return ids.count(repository["id"])

    assert of_it(await gateway.post("/api/search/route", json=query, headers=admin)) > 0

    deleted_at: list[float] = []
    seen: list[tuple[float, int]] = []  # (when the search started, hits of the repository)

    async def search_until_deleted() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            started = time.monotonic()
            seen.append((started, of_it(await gateway.post("/api/search/route", json=query, headers=admin))))
            if deleted_at and started > deleted_at[0] and len([s for s in seen if s[0] > deleted_at[0]]) >= 3:
                return

    searching = [asyncio.create_task(search_until_deleted()) for _ in range(3)]
    await asyncio.sleep(0.3)  # searches under way
    answer = await gateway.delete(REPO, headers=admin)
    deleted_at.append(time.monotonic())
    assert answer.status_code == 204, answer.text
    await asyncio.wait_for(asyncio.gather(*searching), 90)

    after = [hits for started, hits in seen if started > deleted_at[0]]
    assert len(after) >= 3, seen
    assert not any(after), seen
    assert any(hits for started, hits in seen if started < deleted_at[0])  # they did race it
    assert set((await rows_of(database, repository["id"])).values()) == {0}
    assert not checkout.exists()
    for path in (REPO, f"{REPO}/syncs", f"{REPO}/documents"):
        is_problem(await gateway.get(path, headers=admin), 404)
    is_problem(await gateway.delete(REPO, headers=admin), 404)
    assert (await gateway.get("/api/repos", headers=admin)).json()["items"] == []
