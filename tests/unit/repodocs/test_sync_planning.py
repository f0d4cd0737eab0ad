"""What a sync decides before it writes: document fates and counters, code files to parse, node ids kept."""

from __future__ import annotations

import uuid
from pathlib import Path

from cograph_embeddings import ModelInfo
from cograph_repodocs.application.code_index import ParsedFile, plan_nodes, scan_code
from cograph_repodocs.application.doc_index import plan_documents
from cograph_repodocs.application.linking import ChunkText, Symbols, link_chunks
from cograph_repodocs.domain.chunking import WordWindowChunker
from cograph_repodocs.domain.discovery import DocumentKind
from cograph_repodocs.domain.symbols import extract_symbols
from cograph_repodocs.stores.code import StoredNode
from cograph_repodocs.stores.documents import DocumentState
from cograph_repodocs.stores.syncs import Counters

LIMIT = 1 << 20
MODEL = ModelInfo("m", 384)


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)


def states(root: Path) -> list[DocumentState]:
    """The documents a first sync of `root` would store."""
    plan = plan_documents(root, [], LIMIT, WordWindowChunker())
    return [
        DocumentState(
            id=p.id,
            path=p.file.path,
            content_hash=p.file.content_hash,
            kind=p.file.kind,
            slug=plan.slugs[p.id],
            stale=False,
        )
        for p in plan.prepared
    ]


def test_counters_for_new_unchanged_changed_renamed_deleted_and_skipped(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"README.md": "# A\n", "docs/keep.md": "# Keep\n", "docs/old.md": "# Old\n", "gone.md": "# Gone\n"},
    )
    stored = states(tmp_path)
    ids = {s.path: s.id for s in stored}
    write(tmp_path, {"README.md": "# A, changed\n", "docs/new.md": "# New\n", "docs/bin.md": b"\x00"})
    (tmp_path / "docs/old.md").rename(tmp_path / "docs/renamed.md")
    (tmp_path / "gone.md").unlink()

    plan = plan_documents(tmp_path, stored, LIMIT, WordWindowChunker())

    assert plan.counters == Counters(
        discovered_files=5,  # README, keep, new, renamed, and bin.md (matched, then skipped)
        indexed_documents=3,  # README (changed), new, renamed (a new document)
        indexed_chunks=3,
        unchanged_documents=1,
        deleted_documents=2,  # old.md (renamed away) and gone.md
        replaced_files=1,
    )
    prepared = {p.file.path: p for p in plan.prepared}
    assert prepared["README.md"].id == ids["README.md"]  # a changed document keeps its id
    assert not prepared["README.md"].is_new
    assert prepared["docs/renamed.md"].is_new
    assert {d.path for d in plan.deleted} == {"docs/old.md", "gone.md"}
    assert [(s.path, s.reason) for s in plan.skipped] == [
        ("docs/bin.md", "binary file (contains a NUL byte)")
    ]
    assert set(plan.slugs.values()) == {"readme", "keep", "new", "renamed"}


def test_documents_of_another_model_or_kind_are_indexed_again_but_not_replaced(tmp_path: Path) -> None:
    write(tmp_path, {"a.md": "# A\n", "b.md": "# B\n"})
    stored = states(tmp_path)
    stale = [
        DocumentState(
            id=s.id,
            path=s.path,
            content_hash=s.content_hash,
            kind=s.kind,
            slug=s.slug,
            stale=s.path == "a.md",
        )
        for s in stored
    ]
    plan = plan_documents(tmp_path, stale, LIMIT, WordWindowChunker())
    assert [p.file.path for p in plan.prepared] == ["a.md"]
    assert (
        plan.counters.indexed_documents,
        plan.counters.replaced_files,
        plan.counters.unchanged_documents,
    ) == (
        1,
        0,
        1,
    )
    rekinded = [
        DocumentState(
            id=s.id,
            path=s.path,
            content_hash=s.content_hash,
            kind=DocumentKind.CONFIG,
            slug=s.slug,
            stale=False,
        )
        for s in stored
    ]
    assert plan_documents(tmp_path, rekinded, LIMIT, WordWindowChunker()).counters.indexed_documents == 2


def test_slugs_do_not_depend_on_the_order_of_the_stored_documents(tmp_path: Path) -> None:
    write(tmp_path, {"docs/guide.md": "# G\n", "guide.md": "# G2\n"})
    stored = states(tmp_path)
    again = plan_documents(tmp_path, list(reversed(stored)), LIMIT, WordWindowChunker())
    assert again.slugs == {s.id: s.slug for s in stored}
    by_path = {s.path: s.slug for s in stored}
    assert by_path["docs/guide.md"] == "guide"  # first by path keeps the bare slug
    assert by_path["guide.md"].startswith("guide-")


def test_scan_parses_only_changed_code_and_reports_what_it_skips(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "a.py": "def a():\n    pass\n",
            "b.go": "package b\n\nfunc B() {}\n",
            "big.ts": "x" * 200,
            "nul.js": b"var a = 1\x00",
            "node_modules/dep/index.js": "export function dep() {}\n",
            ".venv/lib/x.py": "def x(): pass\n",
            "notes.txt": "not code",
        },
    )
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    first = scan_code(tmp_path, {}, 100)
    assert sorted(first.hashes) == ["a.py", "b.go"]
    assert [f.path for f in first.parsed] == ["a.py", "b.go"]
    assert [(s.path, s.reason) for s in first.skipped] == [
        ("big.ts", "not parsed for symbols: larger than the 100-byte limit"),
        ("link.py", "not parsed for symbols: a symlink"),
        ("nul.js", "not parsed for symbols: binary file (contains a NUL byte)"),
    ]
    (tmp_path / "b.go").unlink()
    write(tmp_path, {"c.js": "export function c() {}\n"})
    second = scan_code(tmp_path, first.hashes, 100)
    assert [f.path for f in second.parsed] == ["c.js"]  # a.py is unchanged: not parsed again
    assert second.deleted == ["b.go"]


def stored_nodes(path: str, source: str, model: ModelInfo | None = MODEL) -> list[StoredNode]:
    return [
        StoredNode(
            id=uuid.uuid4(),
            path=s.path,
            name=s.name,
            qualified_name=s.qualified_name,
            kind=s.kind,
            signature=s.signature,
            start_line=s.start_line,
            embedding_model=model.name if model is not None else None,
            embedding_dim=model.dimension if model is not None else None,
        )
        for s in extract_symbols(path, source)
    ]


def parsed(path: str, source: str) -> ParsedFile:
    return ParsedFile(path, "hash", extract_symbols(path, source))


def test_surviving_symbols_keep_their_ids_and_vectors() -> None:
    before = "def keep(a):\n    pass\n\n\ndef drop():\n    pass\n\n\ndef resign(a):\n    pass\n"
    after = "X = 1\n\n\ndef keep(a):\n    pass\n\n\ndef resign(a, b):\n    pass\n\n\ndef fresh():\n    pass\n"
    existing = stored_nodes("m.py", before)
    ids = {n.qualified_name: n.id for n in existing}
    plan = plan_nodes([parsed("m.py", after)], existing, MODEL)

    assert {n.symbol.qualified_name: n.id for n in plan.updates} == {
        "m.keep": ids["m.keep"],
        "m.resign": ids["m.resign"],
    }
    assert sorted(n.symbol.qualified_name for n in plan.inserts) == ["m.X", "m.fresh"]
    assert plan.deletes == [ids["m.drop"]]
    # Re-embedded: new nodes and a changed signature; `keep` keeps its vector.
    assert sorted(n.symbol.qualified_name for n in plan.to_embed) == ["m.X", "m.fresh", "m.resign"]


def test_variables_and_attributes_are_indexed_without_a_vector() -> None:
    source = (
        "handlers = []\n\n\nclass Job:\n    retries: int = 3\n\n"
        "    def __init__(self):\n        self.state = 'new'\n\n"
        "    @property\n    def done(self):\n        return True\n"
    )
    plan = plan_nodes([parsed("jobs.py", source)], [], MODEL)
    kinds = {n.symbol.qualified_name: n.symbol.kind.value for n in plan.inserts}
    assert kinds == {
        "jobs.handlers": "variable",
        "jobs.Job": "class",
        "jobs.Job.retries": "attribute",
        "jobs.Job.__init__": "method",
        "jobs.Job.state": "attribute",
        "jobs.Job.done": "property",
    }
    assert sorted(n.symbol.qualified_name for n in plan.to_embed) == [
        "jobs.Job",
        "jobs.Job.__init__",
        "jobs.Job.done",
    ]


def test_a_model_change_re_embeds_and_duplicates_match_in_order() -> None:
    source = "def f():\n    pass\n\n\ndef f():\n    return 1\n"
    existing = stored_nodes("d.py", source, model=ModelInfo("old", 384))
    plan = plan_nodes([parsed("d.py", source)], existing, MODEL)
    assert [n.id for n in plan.updates] == [n.id for n in existing]
    assert [n.symbol.start_line for n in plan.updates] == [1, 5]
    assert len(plan.to_embed) == 2
    assert not plan.inserts
    assert not plan.deletes


def test_a_vector_of_the_same_model_at_another_dimension_is_re_embedded() -> None:
    # COGRAPH_EMBEDDING__DIMENSIONS changed, the model name did not: the old vectors are not current.
    source = "def f():\n    pass\n\n\ndef g():\n    pass\n"
    existing = stored_nodes("d.py", source, model=ModelInfo("m", 256))
    plan = plan_nodes([parsed("d.py", source)], existing, MODEL)
    assert [n.id for n in plan.to_embed] == [n.id for n in existing]
    assert not plan.inserts
    # Unembedded nodes too; current ones keep their vector.
    assert (
        len(plan_nodes([parsed("d.py", source)], stored_nodes("d.py", source, model=None), MODEL).to_embed)
        == 2
    )
    assert not plan_nodes([parsed("d.py", source)], stored_nodes("d.py", source), MODEL).to_embed


def test_a_name_defined_in_the_documents_own_file_wins() -> None:
    symbols = Symbols(
        [
            (
                str(uuid.UUID(int=1)),
                "_env",
                "tests.deploy.test_k8s._env",
                "tests/deploy/test_k8s.py",
                "function",
            ),
            (
                str(uuid.UUID(int=2)),
                "_env",
                "tests.deploy.test_docker._env",
                "tests/deploy/test_docker.py",
                "function",
            ),
            (str(uuid.UUID(int=3)), "Store", "store.Store", "store.go", "class"),
        ]
    )
    chunk = uuid.uuid4()
    own = link_chunks([ChunkText(chunk, "tests/deploy/test_k8s.py", "env = _env(container)")], symbols)
    assert [(m.code_node_id.int, m.form.value, m.mention) for m in own] == [(1, "call", "_env")]
    elsewhere = link_chunks([ChunkText(chunk, "docs/deploy.md", "`_env()` and `Store`")], symbols)
    assert sorted(m.code_node_id.int for m in elsewhere) == [1, 2, 3]
