"""Which code node a mention means, and why: the resolver's rules, one row each."""

from __future__ import annotations

import pytest

from cograph_repodocs.domain.resolution import (
    Context,
    Node,
    Reason,
    Resolver,
    heading_classes,
    heading_plurals,
)
from cograph_repodocs.domain.symbols import Alias

NODES = [
    Node("lang", "lang", "pkg.lang", "pkg/lang.py", "module"),
    Node("parse", "parse", "pkg.lang.parse", "pkg/lang.py", "function"),
    Node("tokenize", "tokenize", "pkg.lang.tokenize", "pkg/lang.py", "function"),
    Node("table", "Table", "pkg._table.Table", "pkg/_table.py", "class"),
    Node("add_row", "add_row", "pkg._table.Table.add_row", "pkg/_table.py", "method"),
    Node("value", "value", "pkg._table.Table.value", "pkg/_table.py", "property"),
    Node("old_table", "Table", "pkg.v1.table.Table", "pkg/v1/table.py", "class"),
    Node("test_table", "Table", "tests.helpers.Table", "tests/helpers.py", "class"),
    Node("dumps", "dumps", "pkg.io.dumps", "pkg/io.py", "function"),
    Node("f_module", "f", "f", "f.py", "module"),
    Node("f_function", "f", "f.f", "f.py", "function"),
    Node(
        "chunker_limit",
        "max_chars",
        "a.chunking.Chunker.max_chars",
        "services/a/src/a/chunking.py",
        "attribute",
    ),
    Node(
        "schema_limit", "max_chars", "b.schemas.Limits.max_chars", "services/b/src/b/schemas.py", "attribute"
    ),
    Node("init", "__init__", "pkg._table.Table.__init__", "pkg/_table.py", "method"),
    Node("table_render", "_render", "pkg._table.Table._render", "pkg/_table.py", "method"),
    Node("helper_render", "_render", "tests.test_table._render", "tests/test_table.py", "function"),
    Node("loader", "_loader", "pkg._loader", "pkg/_loader.py", "module"),
    Node("load", "load", "pkg._loader.load", "pkg/_loader.py", "function"),
    Node("loader_class", "Loader", "pkg._loader.Loader", "pkg/_loader.py", "class"),
    Node("loader_load", "load", "pkg._loader.Loader.load", "pkg/_loader.py", "method"),
    Node("type_alias", "TypeAlias", "pkg._models.TypeAlias", "pkg/_models.py", "class"),
    Node("alias_value", "value", "pkg._models.TypeAlias.value", "pkg/_models.py", "attribute"),
    Node("docstring", "Docstring", "pkg._models.Docstring", "pkg/_models.py", "class"),
    # Go: exported names are capitalised, `internal/` is private, `_test.go` files are tests.
    Node("go_open", "Open", "store.Open", "store/store.go", "function"),
    Node("go_internal_open", "Open", "internal.db.Open", "internal/db/db.go", "function"),
    Node("go_test_open", "Open", "store.Open", "store/store_test.go", "function"),
    Node("go_close", "close", "store.close", "store/store.go", "function"),
    Node("go_db_close", "close", "db.close", "db/db.go", "function"),
    # TypeScript: an index module re-exports the package's API.
    Node("ts_grid", "DataGrid", "ui.grid.DataGrid", "web/src/ui/grid.ts", "class"),
]
ALIASES = [
    Alias(name="pkg.Table", target="pkg._table.Table", public=True),
    Alias(name="pkg.load", target="pkg._loader.load", public=True),
    Alias(name="pkg.Loader", target="pkg._loader.Loader", public=True),
    Alias(name="pkg.TypeAlias", target="pkg._models.TypeAlias", public=True),
    Alias(name="pkg.Docstring", target="pkg._models.Docstring", public=True),
    Alias(name="ui.DataGrid", target="ui.grid.DataGrid", public=True),
]
RESOLVER = Resolver(NODES, ALIASES)


def resolve(
    mention: str,
    *,
    target: str | None = None,
    marked: bool = False,
    called: bool = False,
    document: str = "docs/guide.md",
    imports: dict[str, str] | None = None,
    headings: tuple[str, ...] = (),
) -> tuple[list[str], Reason] | None:
    context = Context(document, imports or {}, [])
    context.heading_classes = heading_classes(headings)
    context.heading_plurals = heading_plurals(headings)
    choice = RESOLVER.resolve(mention, target=target, marked=marked, context=context, called=called)
    return None if choice is None else (choice.node_ids, choice.reason)


@pytest.mark.parametrize(
    ("mention", "options", "expected"),
    [
        # A stated target wins, through a public re-export.
        ("Table", {"target": "pkg.Table", "marked": True}, (["table"], Reason.EXPLICIT_TARGET)),
        # The document's own code imports the name.
        ("T.add_row", {"imports": {"T": "pkg.Table"}}, (["add_row"], Reason.DOCUMENT_IMPORT)),
        # The full import path, or a public re-export of it.
        ("pkg.lang.parse", {}, (["parse"], Reason.QUALIFIED_NAME)),
        ("pkg.Table.add_row", {}, (["add_row"], Reason.QUALIFIED_NAME)),
        # The public definition ahead of a legacy copy and a test helper.
        ("Table", {}, (["table"], Reason.UNIQUE_PUBLIC)),
        # ...unless the document is about tests: then the tests' own, nearest the document.
        ("Table", {"document": "tests/README.md"}, (["test_table"], Reason.NEAREST_DEFINITION)),
        # Of a few definitions, the one in the document's part of the tree; from elsewhere, each.
        ("max_chars", {"document": "services/a/README.md"}, (["chunker_limit"], Reason.NEAREST_DEFINITION)),
        (
            "max_chars",
            {"document": "services/README.md"},
            (["chunker_limit", "schema_limit"], Reason.NAME_MATCH),
        ),
        ("max_chars", {}, (["chunker_limit", "schema_limit"], Reason.NAME_MATCH)),
        # A member of the class the heading names.
        ("value", {"headings": ("Table",)}, (["value"], Reason.HEADING_CONTEXT)),
        # A plural heading ("### Type aliases") names its class for a mention marked as a symbol;
        # unmarked, "## Tables" may be about anything.
        ("value", {"headings": ("Type aliases",), "marked": True}, (["alias_value"], Reason.HEADING_CONTEXT)),
        ("value", {"headings": ("Tables",), "marked": True}, (["value"], Reason.HEADING_CONTEXT)),
        ("value", {"headings": ("Tables",)}, None),
        # A marked plural of a class names the class: `[Docstrings][]`.
        ("Docstrings", {"marked": True}, (["docstring"], Reason.UNIQUE_PUBLIC)),
        ("Docstrings", {}, None),
        # With no class in context, a name is the package's top-level export, not a method of it.
        ("load", {"marked": True}, (["load"], Reason.UNIQUE_PUBLIC)),
        ("load", {"marked": True, "headings": ("Loader",)}, (["loader_load"], Reason.HEADING_CONTEXT)),
        # A public class's `_private` method is no public definition: a test calling its own
        # helper of that name means the helper.
        (
            "_render",
            {"called": True, "document": "tests/test_table.py"},
            (["helper_render"], Reason.SAME_FILE),
        ),
        # A bare dunder is Python's protocol, not one class's method; qualified, it is that one.
        ("__init__", {}, None),
        ("__init__", {"marked": True}, None),
        ("Table.__init__", {}, (["init"], Reason.UNIQUE_PUBLIC)),
        # Go's exported definition ahead of an internal package's and a test file's.
        ("Open", {}, (["go_open"], Reason.UNIQUE_PUBLIC)),
        ("store.Open", {}, (["go_open"], Reason.QUALIFIED_NAME)),
        # ...and unexported names are private alike: none is the public one.
        ("close", {"called": True}, None),
        # The name a TypeScript package's index exports.
        ("ui.DataGrid", {}, (["ts_grid"], Reason.QUALIFIED_NAME)),
        # A bare common word links only with context, or written as a call.
        ("value", {}, None),
        ("parse", {}, None),
        ("parse", {"called": True}, (["parse"], Reason.UNIQUE_PUBLIC)),
        # A call names a callable: `f()` is the function f, not the module f.
        ("f", {"called": True}, (["f_function"], Reason.UNIQUE_PUBLIC)),
        ("f", {}, None),
        # Standard-library names are not the repository's, unless called (a module never is).
        ("tokenize", {"marked": True}, None),
        ("tokenize", {"called": True}, (["tokenize"], Reason.UNIQUE_PUBLIC)),
        ("json.dumps", {}, None),
        ("dict", {"called": True}, None),
    ],
)
def test_a_mention_resolves_as_a_reader_would(
    mention: str, options: dict[str, object], expected: tuple[list[str], Reason] | None
) -> None:
    assert resolve(mention, **options) == expected  # type: ignore[arg-type]
