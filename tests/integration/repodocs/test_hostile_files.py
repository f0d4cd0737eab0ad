"""Files a repository may hold that must neither break a sync nor leak: minified JSON and JS,
symlinks into .git or excluded directories, a FIFO, and a path too long for the file system."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import uuid
from pathlib import Path

import grpc
import pytest
from grpc import aio
from integration.repodocs.helpers import GitRepo, Running

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph_db import connect

# Longer than a sync of these small repositories takes, far shorter than the helpers' deadline.
QUICK_SYNC_SECONDS = 60.0


async def test_a_minified_json_file_is_indexed_and_later_syncs_still_succeed(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    # One 0.9 MB "word": as a single chunk, its tsvector would pass PostgreSQL's 1 MiB limit.
    ids = random.Random(7)
    users = json.dumps(
        [{"id": str(uuid.UUID(int=ids.getrandbits(128))), "name": f"user-{i}"} for i in range(14_000)],
        separators=(",", ":"),
    )
    # The same line as a markdown heading: every chunk of its section repeats it in its heading path.
    origin.commit(
        "examples", {"README.md": "# Root\n", "examples/users.json": users, "docs/users.md": f"# {users}\n"}
    )
    repository = await service.register("minjson", clone_url=str(origin.root))

    first = await service.sync(repository.id)
    assert first.status == pb.SYNC_STATUS_SUCCESS, first.error
    documents = await service.documents(repository.id)
    assert sorted(documents) == ["README.md", "docs/users.md", "examples/users.json"]
    assert documents["examples/users.json"].chunk_count > 100
    assert documents["docs/users.md"].chunk_count > 100

    origin.commit("a page", {"docs/new.md": "# New page\n"})
    second = await service.sync(repository.id)
    assert second.status == pb.SYNC_STATUS_SUCCESS, second.error
    assert sorted(await service.documents(repository.id)) == [
        "README.md",
        "docs/new.md",
        "docs/users.md",
        "examples/users.json",
    ]


async def test_each_function_of_a_minified_bundle_has_its_own_short_signature(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    bundle = "".join(f"function fn{i}(a,b){{return a+b+{i}}}" for i in range(300))
    origin.commit("bundle", {"README.md": "# Root\n", "public/js/app.min.js": bundle + "\n"})
    repository = await service.register("minjs", clone_url=str(origin.root))

    sync = await service.sync(repository.id)

    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error
    assert sync.code_nodes == 300
    found = await service.stub.SearchCode(
        pb.SearchCodeRequest(
            repository_ids=[repository.id], query="fn7", limit=5, dense_weight=0, text_weight=1
        )
    )
    best = found.hits[0].node
    assert (best.qualified_name, best.signature) == ("public.js.app.min.fn7", "function fn7(a,b)")
    # Only its own declaration: the other 299 names are not in its signature.
    assert len(found.hits) == 1


async def test_symlinks_into_git_or_excluded_directories_are_neither_indexed_nor_readable(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.write({"node_modules/pkg/README.md": "# vendored readme\n"})
    # Committed links: in the clone, .git/config holds the origin URL (and any credentials in it).
    os.symlink(".git/config", origin.root / "notes.md")
    os.symlink(".git/config", origin.root / "settings.py")
    os.symlink("node_modules/pkg/README.md", origin.root / "vendored.md")
    origin.commit("links", {"README.md": "# Root\n"})
    repository = await service.register("links", clone_url=str(origin.root))

    sync = await service.sync(repository.id)

    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error
    assert sorted(await service.documents(repository.id)) == ["README.md"]
    assert [(s.path, s.reason) for s in sync.skipped] == [
        ("notes.md", "symlink points into .git, which is not indexed"),
        ("settings.py", "not parsed for symbols: a symlink"),
        ("vendored.md", "symlink points into node_modules, which is not indexed"),
    ]
    with pytest.raises(aio.AioRpcError) as error:
        await service.stub.ReadFileRange(
            pb.ReadFileRangeRequest(repository_id=repository.id, path="settings.py")
        )
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "is a symlink into .git, which cannot be read" in (error.value.details() or "")


async def test_a_path_too_long_for_the_file_system_is_a_clear_error(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("code", {"pkg/app.py": "def run():\n    pass\n"})
    managed = await service.register("long", clone_url=str(origin.root))
    assert (await service.sync(managed.id)).status == pb.SYNC_STATUS_SUCCESS
    on_disk = await service.register("long-on-disk", checkout_path=str(origin.root))
    assert (await service.sync(on_disk.id)).status == pb.SYNC_STATUS_SUCCESS
    too_long = "pkg/" + "x" * 5000 + ".py"

    # A managed checkout is read from the indexed commit's tree, which has no such file.
    with pytest.raises(aio.AioRpcError) as error:
        await service.stub.ReadFileRange(pb.ReadFileRangeRequest(repository_id=managed.id, path=too_long))
    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    assert "does not exist at the indexed commit" in (error.value.details() or "")
    # A checkout path is read on disk, where the name cannot even be looked up.
    with pytest.raises(aio.AioRpcError) as error:
        await service.stub.ReadFileRange(pb.ReadFileRangeRequest(repository_id=on_disk.id, path=too_long))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "too long for the file system" in (error.value.details() or "")


async def test_a_fifo_among_the_source_files_is_skipped_not_waited_on(
    service: Running, tmp_path: Path
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "README.md").write_text("# Root\n")
    (root / "app.py").write_text("def run():\n    pass\n")
    os.mkfifo(root / "pipe.py")  # opening it for reading blocks until a writer comes
    repository = await service.register("fifo", checkout_path=str(root))

    try:
        sync = await asyncio.wait_for(service.sync(repository.id), QUICK_SYNC_SECONDS)
    finally:
        # Should a reader be stuck on the FIFO, let it go, so the test process can end.
        with contextlib.suppress(OSError):
            os.close(os.open(root / "pipe.py", os.O_WRONLY | os.O_NONBLOCK))

    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error
    assert sync.code_nodes == 2  # the module app and its run
    assert [(s.path, s.reason) for s in sync.skipped] == [
        ("pipe.py", "not parsed for symbols: not a regular file")
    ]


async def test_a_path_or_symbol_name_too_long_for_an_index_is_skipped_and_syncs_go_on(
    service: Running, tmp_path: Path
) -> None:
    """A legal path of 2,700+ bytes or a 3,000-letter function name would not fit PostgreSQL's
    btree rows: the file or the symbol is skipped with a reason, everything else is indexed, and
    the next sync succeeds too."""
    root = tmp_path / "work"
    # Each name fits the file system; the whole path does not fit an index row.
    deep = root / "docs" / "/".join(["d" * 200] * 13)
    deep.mkdir(parents=True)
    (deep / "page.md").write_text("# Deep\n")
    (deep / "deep.py").write_text("def deep():\n    pass\n")
    (root / "README.md").write_text("# Root\n\nCall `ok` here.\n")
    (root / "app.py").write_text(f"def ok():\n    pass\n\ndef {'f' * 3000}():\n    pass\n")
    repository = await service.register("long", checkout_path=str(root))

    first = await asyncio.wait_for(service.sync(repository.id), QUICK_SYNC_SECONDS)
    assert first.status == pb.SYNC_STATUS_SUCCESS, first.error
    assert first.code_nodes == 2  # the module app and its ok
    too_long = {
        "page.md": "path longer than 1024 bytes",
        "deep.py": "not parsed for symbols: path longer than 1024 bytes",
    }
    assert {s.path.rsplit("/", 1)[-1]: s.reason for s in first.skipped} == {
        **too_long,
        "app.py": "1 symbol(s) with a name over 1024 bytes not indexed",
    }
    # app.py is unchanged now, so it is not parsed again; the long paths are skipped again.
    second = await asyncio.wait_for(service.sync(repository.id), QUICK_SYNC_SECONDS)
    assert second.status == pb.SYNC_STATUS_SUCCESS, second.error
    assert {s.path.rsplit("/", 1)[-1]: s.reason for s in second.skipped} == too_long
    assert sorted(await service.documents(repository.id)) == ["README.md"]


async def test_a_page_lists_its_code_in_the_order_it_mentions_it(service: Running, tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "README.md").write_text(
        "# Root\n\nFirst `zeta_fn`, then `$el`, then `alpha_fn`, then `mid_fn`.\n"
    )
    (root / "dom.js").write_text("export function $el(selector) {\n  return selector\n}\n")
    (root / "app.py").write_text(
        "def alpha_fn():\n    pass\n\ndef mid_fn():\n    pass\n\ndef zeta_fn():\n    pass\n"
    )
    repository = await service.register("order", checkout_path=str(root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
    page = await service.stub.GetDocsPage(pb.GetDocsPageRequest(repository_id=repository.id, slug="readme"))
    assert [node.name for node in page.related_code] == ["zeta_fn", "$el", "alpha_fn", "mid_fn"]


LANG = "def tokenize(text):\n    return []\n\n\ndef parse(tokens):\n    return None\n"
PIPELINE = "# Pipeline\n\nTo parse input, first call `tokenize()` and then `parse()`.\n"


async def test_related_code_follows_the_mentions_not_the_first_word_that_is_a_name(
    service: Running, database: str, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"pkg/lang.py": LANG, "README.md": PIPELINE})
    repository = await service.register("pipeline", clone_url=str(origin.root))
    assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS

    async def related() -> list[str]:
        request = pb.GetDocsPageRequest(repository_id=repository.id, slug="readme")
        return [node.name for node in (await service.stub.GetDocsPage(request)).related_code]

    # "parse" in "To parse input" is prose; the page mentions `tokenize()` first.
    assert await related() == ["tokenize", "parse"]
    # Links stored before migration 0013 have no offset: still listed, and a re-link gives it.
    connection = await connect(database)
    try:
        await connection.execute("UPDATE repodocs.repo_document_chunk_mentions SET mention_start = NULL")
    finally:
        await connection.close()
    assert sorted(await related()) == ["parse", "tokenize"]
    assert (await service.sync(repository.id, force_relink=True)).status == pb.SYNC_STATUS_SUCCESS
    assert await related() == ["tokenize", "parse"]


async def test_pathological_titles_neither_stall_a_sync_nor_the_page_reader(
    service: Running, tmp_path: Path
) -> None:
    """An rst title of a backtick and a long run of spaces made a heading regex backtrack for
    minutes, holding the interpreter; a long run of '![' made the markdown inline pass quadratic,
    on the event loop that serves every request. Both now take a moment."""
    root = tmp_path / "work"
    root.mkdir()
    (root / "README.md").write_text("# Root\n\n## Usage\n\n" + "![" * 200_000 + "\n")
    (root / "guide.rst").write_text(
        "Guide\n=====\n\n`" + " " * 200_000 + "x\n" + "-" * 200_002 + "\n\nText.\n"
    )
    repository = await service.register("stall", checkout_path=str(root))
    sync = await asyncio.wait_for(service.sync(repository.id), QUICK_SYNC_SECONDS)
    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error
    pages = {}
    for slug in ("readme", "guide"):
        pages[slug] = await asyncio.wait_for(
            service.stub.GetDocsPage(pb.GetDocsPageRequest(repository_id=repository.id, slug=slug)),
            QUICK_SYNC_SECONDS,
        )
    assert [entry.text for entry in pages["readme"].toc] == ["Usage"]
    assert [entry.text.split() for entry in pages["guide"].toc] == [["`", "x"]]
