"""/api/repos end to end: registration rules, the indistinguishable 404, sync, docs, code and source.

Tests that need repodocs RPCs skip until the service implements them (see helpers.require_repodocs).
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import httpx
from e2e.gateway.helpers import create_collection, is_problem, mint, repodocs_implements, require_repodocs
from e2e.gateway.test_collections_api import Auth

REPO = "/api/repos/example.com/acme/tools"


def _checkout(root: Path) -> Path:
    checkout = root / "tools"
    checkout.mkdir()
    (checkout / "README.md").write_text(
        "# Tools\n\n## Configuration\n\nCall `parse_config` to read the settings file.\n"
    )
    (checkout / "docs").mkdir()
    (checkout / "docs" / "usage.md").write_text("# Usage\n\nRun `tools.parse_config()` first.\n")
    (checkout / "tools.py").write_text(
        'def parse_config(path):\n    """Read the settings."""\n    return {}\n'
    )
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"],
    ):
        subprocess.run(["git", *args], cwd=checkout, check=True, capture_output=True)
    return checkout


def _registration(checkout: Path, visibility: str = "private") -> dict[str, str]:
    return {
        "host": "example.com",
        "owner": "acme",
        "name": "tools",
        "checkout_path": str(checkout),
        "visibility": visibility,
    }


async def test_registration_is_validated_and_local_sources_are_for_admins(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    body = _registration(tmp_path)
    # A local checkout reads the server's disk: administrators only (a 403 that names the rule).
    assert (
        "administrator"
        in is_problem(await gateway.post("/api/repos", json=body, headers=auth["alice"]), 403)["detail"]
    )
    local_url = {**body, "checkout_path": None, "clone_url": f"file://{tmp_path}"}
    is_problem(await gateway.post("/api/repos", json=local_url, headers=auth["alice"]), 403)
    is_problem(await gateway.post("/api/repos", json=body), 401)
    both = {**body, "clone_url": "https://example.com/acme/tools.git"}
    assert (
        "exactly one"
        in is_problem(await gateway.post("/api/repos", json=both, headers=auth["admin"]), 400)["detail"]
    )
    neither = {k: v for k, v in body.items() if k != "checkout_path"}
    is_problem(await gateway.post("/api/repos", json=neither, headers=auth["admin"]), 400)
    is_problem(await gateway.post("/api/repos", json={**body, "owner": "a/b"}, headers=auth["admin"]), 400)
    is_problem(
        await gateway.post("/api/repos", json={**body, "visibility": "admin_only"}, headers=auth["admin"]),
        400,
    )
    # Input errors are judged before any repository is looked up.
    is_problem(await gateway.get(f"{REPO}/files/..%2F..%2Fetc%2Fpasswd", headers=auth["alice"]), 400)
    is_problem(
        await gateway.get(f"{REPO}/files/tools.py", params={"start": 9, "end": 2}, headers=auth["alice"]), 400
    )
    is_problem(await gateway.get(f"{REPO}/documents/not-an-id", headers=auth["alice"]), 400)


async def test_an_unreadable_repository_is_byte_for_byte_a_missing_one(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    require_repodocs("RegisterRepository", "ListRepositoryAccess", "GetRepository")
    paths = [REPO, f"{REPO}/docs", f"{REPO}/syncs", f"{REPO}/documents", f"{REPO}/files/tools.py"]
    missing = {path: await gateway.get(path, headers=auth["bob"]) for path in paths}
    registered = await gateway.post(
        "/api/repos", json=_registration(_checkout(tmp_path)), headers=auth["admin"]
    )
    assert registered.status_code == 201, registered.text
    assert (await gateway.get(REPO, headers=auth["admin"])).status_code == 200
    for path in paths:
        unreadable = await gateway.get(path, headers=auth["bob"])
        before = missing[path]
        is_problem(unreadable, 404)
        assert unreadable.content == before.content, path
        assert unreadable.headers["content-type"] == before.headers["content-type"]
        assert unreadable.headers["content-length"] == before.headers["content-length"]
    # Writes too: refused as missing, not as forbidden, when the caller cannot even read it.
    sync = await gateway.post(f"{REPO}/sync", headers=auth["bob"])
    assert sync.status_code == 404
    assert sync.json()["detail"] == missing[REPO].json()["detail"]


async def test_a_repository_is_one_whatever_the_letter_case(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    """Git hosts name repositories in any case: a second spelling is the same repository, and a
    request never lands on another one than it names."""
    checkout = _checkout(tmp_path)
    registered = await gateway.post("/api/repos", json=_registration(checkout), headers=auth["admin"])
    assert registered.status_code == 201, registered.text
    again = {**_registration(checkout, "public"), "owner": "Acme", "name": "TOOLS"}
    is_problem(await gateway.post("/api/repos", json=again, headers=auth["admin"]), 409)

    other_case = "/api/repos/EXAMPLE.com/Acme/TOOLS"
    found = await gateway.get(other_case, headers=auth["admin"])
    assert found.status_code == 200, found.text
    assert (found.json()["owner"], found.json()["name"], found.json()["visibility"]) == (
        "acme",
        "tools",
        "private",
    )
    is_problem(await gateway.get(other_case, headers=auth["bob"]), 404)  # private, as registered
    granted = await gateway.post(f"{other_case}/grants", json={"group": "support"}, headers=auth["admin"])
    assert granted.status_code in (200, 201), granted.text
    assert (await gateway.get(REPO, headers=auth["bob"])).status_code == 200


async def test_readers_see_neither_clone_credentials_nor_server_paths(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    checkout = _checkout(tmp_path)
    secret_url = f"file://deploy:s3cr3t@localhost{checkout}"
    with_token = {**_registration(checkout, "public"), "checkout_path": None, "clone_url": secret_url}
    registered = await gateway.post("/api/repos", json=with_token, headers=auth["admin"])
    assert registered.status_code == 201, registered.text
    local = {**_registration(checkout, "public"), "name": "local"}
    assert (await gateway.post("/api/repos", json=local, headers=auth["admin"])).status_code == 201

    for who in ("admin", "bob"):
        listed = (await gateway.get("/api/repos", headers=auth[who])).json()["items"]
        shown = {r["name"]: (r["clone_url"], r["checkout_path"]) for r in listed}
        # A directory on the server is the administrators' business, as a path or as a file URL.
        assert shown["tools"] == (f"file://localhost{checkout}" if who == "admin" else None, None), who
        assert shown["local"] == (None, str(checkout) if who == "admin" else None), who
    assert "s3cr3t" not in (await gateway.get(REPO, headers=auth["bob"])).text

    # Nor does git's error when a sync of it fails: it quotes the directory.
    assert (
        await gateway.post(f"{REPO}/sync", params={"wait": "true"}, headers=auth["admin"])
    ).status_code == 200
    shutil.rmtree(checkout)  # moved away on the server
    failed = (await gateway.post(f"{REPO}/sync", params={"wait": "true"}, headers=auth["admin"])).json()
    assert str(checkout) in failed["error"]  # administrators see why
    for answer in (
        await gateway.get(REPO, headers=auth["bob"]),
        await gateway.get(f"{REPO}/syncs", headers=auth["bob"]),
    ):
        assert answer.status_code == 200, answer.text
        assert str(checkout) not in answer.text
        assert "the sync failed; an administrator can see why" in answer.text

    # A remote URL carrying credentials is refused, without quoting them back: they go in the
    # credentials file (tests/integration/repodocs/test_credentials.py).
    inside = {**with_token, "name": "gone", "clone_url": "https://deploy:s3cr3t@127.0.0.1:1/gone.git"}
    refused = is_problem(await gateway.post("/api/repos", json=inside, headers=auth["alice"]), 400)
    assert "clone_url carries credentials" in refused["detail"]
    assert "COGRAPH_REPODOCS__CREDENTIALS_FILE" in refused["detail"]
    assert "s3cr3t" not in refused["detail"]


async def test_a_repository_synced_read_and_searched(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    require_repodocs(
        "RegisterRepository",
        "ListRepositoryAccess",
        "GetRepository",
        "ListRepositories",
        "AddRepositoryGrant",
        "RemoveRepositoryGrant",
        "SyncRepository",
        "ListSyncs",
        "ListDocuments",
        "GetDocument",
        "GetDocsTree",
        "GetDocsPage",
        "GetRelatedDocChunks",
        "ReadFileRange",
    )
    admin, alice, bob = auth["admin"], auth["alice"], auth["bob"]
    registered = await gateway.post("/api/repos", json=_registration(_checkout(tmp_path)), headers=admin)
    assert registered.status_code == 201, registered.text
    assert registered.json()["owner_subject"] == "admin"

    synced = await gateway.post(f"{REPO}/sync", params={"wait": "true"}, headers=admin)
    assert synced.status_code == 200, synced.text
    counters = synced.json()["counters"]
    assert set(counters) == {
        "discovered_files",
        "indexed_documents",
        "indexed_chunks",
        "unchanged_documents",
        "deleted_documents",
        "replaced_files",
    }
    assert counters["indexed_documents"] >= 2
    again = (await gateway.post(f"{REPO}/sync", params={"wait": "true"}, headers=admin)).json()["counters"]
    assert again["indexed_documents"] == 0
    assert again["unchanged_documents"] == counters["indexed_documents"]

    # A grant lets research (alice) read; bob still sees nothing; reading is not syncing.
    is_problem(await gateway.get(REPO, headers=alice), 404)
    granted = await gateway.post(f"{REPO}/grants", json={"group": "research"}, headers=admin)
    assert granted.status_code == 201, granted.text
    assert (await gateway.get(REPO, headers=alice)).status_code == 200
    assert [r["name"] for r in (await gateway.get("/api/repos", headers=alice)).json()["items"]] == ["tools"]
    assert (await gateway.get("/api/repos", headers=bob)).json()["items"] == []
    is_problem(await gateway.post(f"{REPO}/sync", headers=alice), 403)
    is_problem(await gateway.post(f"{REPO}/sync", headers=mint("carol")), 404)

    syncs = (await gateway.get(f"{REPO}/syncs", headers=alice)).json()["items"]
    assert len(syncs) >= 2
    documents = (await gateway.get(f"{REPO}/documents", headers=alice)).json()["items"]
    readme = next(d for d in documents if d["path"] == "README.md")
    only_docs = (await gateway.get(f"{REPO}/documents", params={"kind": "repo_doc"}, headers=alice)).json()
    assert {d["kind"] for d in only_docs["items"]} == {"repo_doc"}
    unknown = await gateway.get(f"{REPO}/documents", params={"kind": "unknown"}, headers=alice)
    is_problem(unknown, 400)  # not "no filter": a kind no document can have is a mistake
    full = (await gateway.get(f"{REPO}/documents/{readme['id']}", headers=alice)).json()
    assert "parse_config" in full["content"]
    tree = (await gateway.get(f"{REPO}/docs", headers=alice)).json()
    assert tree["roots"]
    page = (await gateway.get(f"{REPO}/docs/{readme['slug']}", headers=alice)).json()
    assert page["document"]["id"] == readme["id"]
    assert "configuration" in [t["anchor"] for t in page["toc"]]
    # What is missing inside a repository is named as the caller named it, not by internal ids.
    no_page = is_problem(await gateway.get(f"{REPO}/docs/nope", headers=alice), 404)
    assert no_page["detail"] == "no docs page 'nope' in this repository"
    no_document = is_problem(await gateway.get(f"{REPO}/documents/{uuid.UUID(int=1)}", headers=alice), 404)
    assert no_document["detail"] == f"document {uuid.UUID(int=1)} does not exist in this repository"

    found = await gateway.post(f"{REPO}/code/search", json={"query": "parse_config"}, headers=alice)
    assert found.status_code == 200, found.text
    if repodocs_implements("SearchCode"):
        hit = next(h for h in found.json()["hits"] if h["node"]["name"] == "parse_config")
        assert len(hit["related_repo_doc_chunks"]) == 2  # README.md and docs/usage.md name it
        assert hit["related_repo_doc_chunks"][0]["chunk"]["citation"]
        fewer = await gateway.post(
            f"{REPO}/code/search", json={"query": "parse_config", "related_limit": 1}, headers=alice
        )
        hit = next(h for h in fewer.json()["hits"] if h["node"]["name"] == "parse_config")
        assert len(hit["related_repo_doc_chunks"]) == 1
        docs = (await gateway.get(f"{REPO}/code/{hit['node']['id']}/docs", headers=alice)).json()
        assert docs["chunks"]
        no_such_node = await gateway.get(f"{REPO}/code/{uuid.uuid4()}/docs", headers=alice)
        is_problem(no_such_node, 404)
        assert "has no code node" in no_such_node.json()["detail"]
    else:  # the code store failing is reported, and the answer is still a 200
        assert [f["store"] for f in found.json()["failures"]] == ["code"]
    too_many = {"query": "parse_config", "related_limit": 51}
    assert (
        "related_limit"
        in is_problem(await gateway.post(f"{REPO}/code/search", json=too_many, headers=alice), 400)["detail"]
    )
    lines = (await gateway.get(f"{REPO}/files/tools.py", params={"start": 1, "end": 1}, headers=alice)).json()
    assert lines["content"].startswith("def parse_config")
    assert lines["total_lines"] == 3
    # Directories discovery skips are not readable either: a checkout's .cograph/ holds the
    # clones of other repositories, which a reader of this one has no grant to.
    other = tmp_path / "tools" / ".cograph" / "checkouts" / "other"
    other.mkdir(parents=True)
    (other / "settings.py").write_text('TOKEN = "not for alice"\n')
    hidden = await gateway.get(f"{REPO}/files/.cograph/checkouts/other/settings.py", headers=alice)
    assert "not for alice" not in hidden.text
    assert "inside .cograph, which is not indexed" in is_problem(hidden, 400)["detail"]

    assert (
        await gateway.post(f"{REPO}/grants", json={"group": "/eng/backend"}, headers=admin)
    ).status_code == 201
    assert (await gateway.delete(f"{REPO}/grants/%2Feng%2Fbackend", headers=admin)).status_code == 204
    assert (
        await gateway.post(f"{REPO}/grants", json={"group": "ops/grants/research"}, headers=admin)
    ).status_code == 201
    assert (await gateway.delete(f"{REPO}/grants/ops/grants/research", headers=admin)).status_code == 204
    assert (await gateway.get(REPO, headers=admin)).json()["group_grants"] == ["research"]
    assert (await gateway.delete(f"{REPO}/grants/research", headers=admin)).status_code == 204
    assert (await gateway.get(REPO, headers=admin)).json()["group_grants"] == []
    is_problem(await gateway.get(REPO, headers=alice), 404)


async def test_a_control_character_in_a_name_group_or_slug_is_a_clear_400(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    admin = auth["admin"]
    registered = await gateway.post("/api/repos", json=_registration(_checkout(tmp_path)), headers=admin)
    assert registered.status_code == 201, registered.text
    collection = await create_collection(gateway, admin, "Runbooks")
    base = f"/api/md-collections/{collection['id']}"
    requests = {
        "collection name": gateway.post("/api/md-collections", json={"name": "Run\x00books"}, headers=admin),
        "description": gateway.patch(base, json={"description": "on\x00call"}, headers=admin),
        "collection grant": gateway.post(f"{base}/grants", json={"group": "sup\x00port"}, headers=admin),
        "collection grant removal": gateway.delete(f"{base}/grants/sup%00port", headers=admin),
        "repository grant": gateway.post(f"{REPO}/grants", json={"group": "sup\x00port"}, headers=admin),
        "repository grant removal": gateway.delete(f"{REPO}/grants/sup%00port", headers=admin),
        "docs page slug": gateway.get(f"{REPO}/docs/gui%00de", headers=admin),
    }
    for what, request in requests.items():
        refused = is_problem(await request, 400)
        assert "control character (U+0000)" in refused["detail"], what
    # Nothing was stored by the refused writes.
    stored = (await gateway.get(base, headers=admin)).json()
    assert (stored["description"], stored["group_grants"]) == ("Runbooks for tests", [])
