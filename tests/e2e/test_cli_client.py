"""`cograph collection|search|repo` as a person runs them, against the real gateway and services."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import re
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import msgspec
import pytest
from e2e.gateway.helpers import wait_for_jobs
from integration.repodocs.helpers import GitRepo

from cograph_cli.main import main
from cograph_cli.runtime import System, start_system
from cograph_embeddings import EmbeddingProvider
from cograph_settings import Settings

ALICE = "test-alice-token"
ADMIN = "test-admin-token"


async def cograph(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run `cograph argv` (in a thread: the services answer on this loop); answers (status, out, err)."""
    capsys.readouterr()
    try:
        await asyncio.to_thread(main, list(argv))
        status = 0
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
        if isinstance(exit_.code, str):
            print(exit_.code, file=sys.stderr)
    out, err = capsys.readouterr()
    return status, out, err


def _runbooks(root: Path) -> Path:
    docs = root / "runbooks"
    (docs / "db").mkdir(parents=True)
    (docs / "paging.md").write_text(
        "# Paging\n\n## Handover\n\nWrite the handover in the incident channel.\n"
    )
    (docs / "db" / "failover.md").write_text(
        "# Database failover\n\n## Promote the replica\n\nRun `pg_ctl promote` on the standby "
        "when the primary is lost.\n"
    )
    (docs / "glossary.mdx").write_text("# Glossary\n\nSLO: service level objective.\n")
    (docs / "broken.md").write_bytes(b"# Broken\n\n\xff\xfe not UTF-8 \xc3\x28\n")
    (docs / "notes.txt").write_text("not markdown: never uploaded\n")
    return docs


async def test_create_upload_and_search_a_collection(
    system: System, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = system.gateway_url
    auth = ["--url", url, "--token", ALICE]
    status, out, _ = await cograph(capsys, "collection", "create", "Runbooks", "--description", "ops", *auth)
    assert status == 0
    collection_id = out.strip()
    assert len(collection_id) == 36, out

    status, out, _ = await cograph(
        capsys, "collection", "upload", collection_id, str(_runbooks(tmp_path)), *auth
    )
    # One document failed: the command says which, why, and exits 1 after the counts.
    assert status == 1, out
    assert "failed   broken.md:" in out, out
    assert "(not_utf8)" in out, out
    assert "4 document(s): 3 created, 0 replaced, 0 unchanged, 1 failed" in out, out
    assert "notes.txt" not in out
    assert "embedding in the background" in out, out

    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        headers = {"Authorization": f"Bearer {ALICE}"}
        await wait_for_jobs(client, collection_id, headers)
        listed = await client.get(f"/api/md-collections/{collection_id}/documents", headers=headers)
    # Keys are relative to the directory given.
    assert sorted(d["source_key"] for d in listed.json()["items"]) == [
        "db/failover.md",
        "glossary.mdx",
        "paging.md",
    ]

    # The same files again are unchanged.
    status, out, _ = await cograph(
        capsys, "collection", "upload", collection_id, str(tmp_path / "runbooks" / "paging.md"), *auth
    )
    assert status == 0
    assert "1 document(s): 0 created, 0 replaced, 1 unchanged, 0 failed" in out, out
    # Nothing new to embed: the command does not say it is embedding.
    assert "embedding in the background" not in out, out

    status, out, _ = await cograph(
        capsys, "search", "promote the standby replica", "--collection", collection_id, *auth
    )
    assert status == 0
    first = out.splitlines()[1]
    assert "db/failover.md › Database failover" in first, out
    assert "pg_ctl promote" in out

    # Routed (the default): the collection is among what alice can read.
    status, out, _ = await cograph(capsys, "search", "promote the standby replica", "--limit", "2", *auth)
    assert status == 0
    assert out.startswith("collections"), out
    assert "db/failover.md" in out

    status, out, _ = await cograph(
        capsys, "search", "handover", "--collection", collection_id, "--json", *auth
    )
    assert status == 0
    answer = json.loads(out)
    assert answer["hits"][0]["chunk"]["source_key"] == "paging.md"


async def test_gateway_problems_are_one_line(system: System, capsys: pytest.CaptureFixture[str]) -> None:
    url = system.gateway_url
    unknown = "00000000-0000-4000-8000-000000000000"
    status, out, err = await cograph(
        capsys, "search", "x", "--collection", unknown, "--url", url, "--token", ALICE
    )
    assert status == 1
    assert out == ""
    assert err.startswith("cograph: "), err
    assert len(err.strip().splitlines()) == 1, err
    assert unknown in err or "not found" in err.lower(), err
    assert "Traceback" not in err

    status, _, err = await cograph(capsys, "collection", "create", "Nope", "--url", url)
    assert status == 1
    assert "COGRAPH_TOKEN" in err, err


def test_a_gateway_that_is_not_running_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cograph_bin = Path(sys.executable).parent / "cograph"
    url = f"http://127.0.0.1:{port}"
    done = subprocess.run(
        [str(cograph_bin), "search", "anything", "--url", url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"cograph: no Cograph gateway answers at {url} "), lines


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [("--url", "http://[::1", "is not a gateway URL"), ("--token", "tökén", "cannot be sent in a header")],
)
def test_a_malformed_url_or_token_is_one_line(option: str, value: str, says: str) -> None:
    arguments = {"--url": "http://127.0.0.1:9", "--token": "t", option: value}
    cograph_bin = Path(sys.executable).parent / "cograph"
    done = subprocess.run(
        [str(cograph_bin), "search", "anything", *[part for pair in arguments.items() for part in pair]],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("cograph: "), lines
    assert says in lines[0], lines


async def test_a_document_too_large_for_any_request_fails_alone(
    system: System, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """One file over the gateway's request limit turned the batch into a 413 that ended the whole
    command; the batch now goes document by document, and only that one fails."""
    url = system.gateway_url
    status, out, _ = await cograph(capsys, "collection", "create", "Big", "--url", url, "--token", ALICE)
    assert status == 0, out
    collection_id = out.strip()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nSmall.\n")
    (docs / "huge.md").write_bytes(b"# Huge\n\n" + b"word " * (14 * 2**20))  # 70 MiB
    status, out, err = await cograph(
        capsys, "collection", "upload", collection_id, str(docs), "--url", url, "--token", ALICE
    )
    assert status == 1, err
    assert "failed   huge.md:" in out, out
    assert "(too_large)" in out, out
    assert "2 document(s): 1 created, 0 replaced, 0 unchanged, 1 failed" in out, out


async def test_symbolic_links_are_followed_only_inside_the_directory(
    system: System, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A link to a file outside the directory given (passwd.md -> a secret) was uploaded, and a
    linked directory was skipped without a word. Links are now followed while their target stays
    inside the directory; the others are skipped with one warning each, and a loop ends."""
    url = system.gateway_url
    auth = ["--url", url, "--token", ALICE]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nroot:x:0:0\n")
    docs = tmp_path / "docs"
    (docs / "db").mkdir(parents=True)
    (docs / "paging.md").write_text("# Paging\n\nPage the on-call.\n")
    (docs / "db" / "failover.md").write_text("# Failover\n\nPromote the replica.\n")
    (docs / "alias.md").symlink_to("paging.md")
    (docs / "shortcut").symlink_to("db", target_is_directory=True)
    (docs / "passwd.md").symlink_to(outside / "secret.md")
    (docs / "external").symlink_to(outside, target_is_directory=True)
    (docs / "db" / "loop").symlink_to("..", target_is_directory=True)
    (docs / "gone.md").symlink_to("missing.md")

    status, out, _ = await cograph(capsys, "collection", "create", "Linked", *auth)
    assert status == 0, out
    collection_id = out.strip()
    status, out, err = await cograph(capsys, "collection", "upload", collection_id, str(docs), *auth)
    assert status == 0, out + err
    assert "4 document(s): 4 created, 0 replaced, 0 unchanged, 0 failed" in out, out
    warnings = err.strip().splitlines()
    assert all(line.startswith("cograph: warning: skipped ") for line in warnings), err
    assert f"skipped {docs / 'passwd.md'}: a symbolic link to {outside / 'secret.md'}, outside {docs}" in err
    assert f"skipped {docs / 'external'}: a symbolic link to {outside}, outside {docs}" in err
    assert f"skipped {docs / 'db' / 'loop'}: a symbolic link to {docs}, a directory it is in (a loop)" in err
    assert f"skipped {docs / 'gone.md'}: a symbolic link to missing.md, which leads to no file" in err
    assert len(warnings) == 5, err  # the loop again under shortcut/

    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        listed = await client.get(
            f"/api/md-collections/{collection_id}/documents", headers={"Authorization": f"Bearer {ALICE}"}
        )
    assert sorted(d["source_key"] for d in listed.json()["items"]) == [
        "alias.md",
        "db/failover.md",
        "paging.md",
        "shortcut/failover.md",
    ]


async def test_a_gateway_taking_smaller_batches_gets_all_the_documents(
    settings: Settings,
    database: str,
    embedder: EmbeddingProvider,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """With COGRAPH_COLLECTIONS__MAX_BATCH_DOCUMENTS below the 100 the command sends a batch, the
    gateway refused the first batch and the command exited 1 with nothing uploaded; it now sends
    batches the size the refusal names."""
    replace = msgspec.structs.replace
    smaller = replace(settings, collections=replace(settings.collections, max_batch_documents=30))
    running = await start_system(smaller, database, embedder)
    try:
        await asyncio.wait_for(running.hosts["gateway"].ready.wait(), 30)
        auth = ["--url", running.gateway_url, "--token", ALICE]
        status, out, _ = await cograph(capsys, "collection", "create", "Many", *auth)
        assert status == 0, out
        collection_id = out.strip()
        docs = tmp_path / "many"
        docs.mkdir()
        for n in range(120):
            (docs / f"d{n:03}.md").write_text(f"# Page {n}\n\nText {n}.\n")
        status, out, err = await cograph(capsys, "collection", "upload", collection_id, str(docs), *auth)
        assert status == 0, out + err
        assert "120 document(s): 120 created, 0 replaced, 0 unchanged, 0 failed" in out, out
        assert err == "", err
        async with httpx.AsyncClient(base_url=running.gateway_url, timeout=30) as client:
            found = await client.get(
                f"/api/md-collections/{collection_id}", headers={"Authorization": f"Bearer {ALICE}"}
            )
        assert found.json()["document_count"] == 120, found.text
    finally:
        await running.stop()


def _checkout(root: Path) -> Path:
    repository = GitRepo(root / "tools")
    repository.commit(
        "init",
        {
            "README.md": "# Tools\n\n## Configuration\n\nCall `parse_config` to read settings.\n",
            "docs/deploy.md": "# Deploying\n\n## Rollback\n\nRoll back with `tools undo`.\n",
            "tools.py": 'def parse_config(path):\n    """Read the settings."""\n    return {}\n',
        },
    )
    return repository.root


async def test_register_sync_and_search_a_repository(
    system: System, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    auth = ["--url", system.gateway_url, "--token", ADMIN]
    slug = "example.com/acme/tools"
    checkout = _checkout(tmp_path)
    status, out, err = await cograph(capsys, "repo", "add", slug, "--checkout", str(checkout), *auth)
    assert status == 0, err
    assert out.startswith(f"registered {slug} ("), out

    status, out, err = await cograph(capsys, "repo", "sync", slug, "--wait", *auth)
    assert status == 0, out + err
    assert out.startswith("sync success:"), out
    assert "2 indexed documents" in out, out

    status, out, err = await cograph(
        capsys, "search", "roll back", "--mode", "wiki", "--repository", slug, *auth
    )
    assert status == 0, err
    assert "docs/deploy.md › Deploying › Rollback" in out, out

    status, out, err = await cograph(capsys, "search", "parse_config", "--repository", slug, *auth)
    assert status == 0, err
    assert "tools.py:1-3  " in out, out
    assert "parse_config" in out, out

    status, _, err = await cograph(capsys, "repo", "sync", "example.com/acme/missing", *auth)
    assert status == 1
    assert err.startswith("cograph: "), err


async def test_change_and_delete_a_repository(
    system: System, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    auth = ["--url", system.gateway_url, "--token", ADMIN]
    slug = "example.com/acme/tools"
    origin = GitRepo(tmp_path / "origin")
    origin.commit("main", {"README.md": "# Tools\n"})
    origin.git("checkout", "--quiet", "-b", "release")
    origin.commit("release", {"docs/release.md": "# Release\n"})
    origin.git("checkout", "--quiet", "main")
    status, _, err = await cograph(capsys, "repo", "add", slug, "--clone-url", f"file://{origin.root}", *auth)
    assert status == 0, err

    status, out, err = await cograph(
        capsys, "repo", "update", slug, "--visibility", "public", "--sync-interval", "600", *auth
    )
    assert status == 0, err
    assert out == f"{slug}: public, branch (the default), scheduled every 600 s\n", out
    status, out, err = await cograph(capsys, "repo", "update", slug, "--sync-interval", "default", *auth)
    assert "scheduled the default interval" in out, out + err
    status, out, err = await cograph(capsys, "repo", "update", slug, "--branch", "release", *auth)
    assert status == 0, err
    assert out.startswith(f"{slug}: public, branch release,"), out
    # Refusals are one line: the client's own, and the gateway's problem detail.
    status, _, err = await cograph(capsys, "repo", "update", slug, *auth)
    assert (status, err) == (
        1,
        "cograph: nothing to change: give --visibility, --branch or --sync-interval\n",
    )
    status, _, err = await cograph(capsys, "repo", "update", slug, "--sync-interval", "30", *auth)
    assert status == 1
    assert err.startswith("cograph: sync_interval_seconds must be 0 (no scheduled sync) or 60"), err

    # Deleting asks first; without a terminal to ask on, only --yes deletes.
    status, _, err = await cograph(capsys, "repo", "delete", slug, *auth)
    assert (status, err) == (1, f"cograph: deleting {slug} cannot be undone: give --yes to confirm\n")
    status, out, err = await cograph(capsys, "repo", "delete", slug, "--yes", *auth)
    assert (status, out) == (0, f"deleted {slug}\n"), err
    status, _, err = await cograph(capsys, "repo", "sync", slug, *auth)
    assert status == 1
    assert "does not exist" in err, err


def _read_terminal(master: int) -> bytes:
    """Everything written to a pseudo-terminal until its other end closes."""
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the writer is gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


async def test_sync_wait_draws_the_phases_and_counts_on_a_terminal(system: System, tmp_path: Path) -> None:
    """`repo sync --wait` in a terminal: a bar per phase with its counts as they grow, then the
    counters on stdout."""
    slug = "example.com/acme/generated"
    checkout = tmp_path / "generated"
    checkout.mkdir()
    headers = {"Authorization": f"Bearer {ADMIN}"}
    async with httpx.AsyncClient(base_url=system.gateway_url, timeout=30) as client:
        body = {"host": "example.com", "owner": "acme", "name": "generated", "checkout_path": str(checkout)}
        assert (await client.post("/api/repos", json=body, headers=headers)).status_code == 201
        for _ in range(200):  # the registration's sync of the empty directory, within 20 s
            syncs = (await client.get(f"/api/repos/{slug}/syncs", headers=headers)).json()["items"]
            if syncs and syncs[0]["status"] == "success":
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(syncs)
    # Embedded in four batches of the provider's 256, each text long enough (about 60 tokens) for
    # a batch to outlast the client's half-second poll even on a fast machine.
    for i in range(800):
        about = " ".join(f"step {i}.{n} reads a record, checks its owner, writes it back." for n in range(3))
        (checkout / f"topic{i}.md").write_text(f"# Topic {i}\n\nWhat topic {i} is about: {about}\n")

    master, slave = pty.openpty()
    process = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "cograph"),
        *("repo", "sync", slug, "--wait", "--url", system.gateway_url, "--token", ADMIN),
        stdout=asyncio.subprocess.PIPE,
        stderr=slave,
        env={**os.environ, "COLUMNS": "160"},
    )
    os.close(slave)
    drawn = asyncio.create_task(asyncio.to_thread(_read_terminal, master))
    try:
        out, _ = await asyncio.wait_for(process.communicate(), 120)
        terminal = (await asyncio.wait_for(drawn, 10)).decode(errors="replace")
    finally:
        os.close(master)
    assert process.returncode == 0, terminal
    assert out.decode().startswith("sync success: 800 discovered files, 800 indexed documents"), out
    assert f"{slug}: embed (vectors embedded)" in terminal, terminal
    shown = {int(done) for done in re.findall(r"(\d+)/800\b", terminal)}
    assert {0, 800} < shown, terminal  # seen growing: from nothing, through a batch, to all of them
