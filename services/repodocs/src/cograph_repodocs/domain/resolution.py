"""Which code node a mention means, decided the way a reader decides, and why.

In order: a stated target (`[text][pkg.mod.Name]`, a Sphinx role's full name); a name the document's
own code imports (`from pkg.widgets import Table` makes `Table.add_row` that one); the class the
section's heading or the text just before names (for a mention marked as a symbol, a plural heading
too: "### Functions"); then the public definition (reachable by a path without a private segment,
outside legacy copies, tests, examples and scripts) when it is the only one, or the one the package
exports at its top level (`pkg.load` before `pkg.Loader.load`). Builtin and standard-library names
(`dict`, `json.dumps`) and bare dunders (`__init__`) never link to a member that shares the name,
and a bare common word (`value`, `main`) links only with context.
"""

from __future__ import annotations

import bisect
import builtins
import keyword
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from enum import StrEnum
from itertools import takewhile
from pathlib import PurePosixPath

import msgspec

from cograph_repodocs.domain.symbols import Alias

# A name shared by more nodes than this, with nothing to tell them apart, links nothing.
MAX_CANDIDATES = 3
# How many alias hops a name may take (`pkg.X` -> `pkg.sub.X` -> `pkg.sub._impl.X`).
MAX_ALIAS_HOPS = 8
# Directories whose code is not the project's API: readers mean the library, not these.
_AUXILIARY_DIRECTORIES = frozenset(
    {
        *("test", "tests", "testing", "example", "examples", "script", "scripts", "docs", "doc"),
        *("benchmarks", "bench", "tools", "fixtures", "samples"),
    }
)
# A copy of an older API kept beside the current one.
_LEGACY = re.compile(r"^(?:v\d+|legacy|deprecated|compat|_compat|old)$")
_COMMON_WORD = re.compile(r"[a-z]+")
_DUNDER = re.compile(r"__\w+__")
_STDLIB = frozenset(sys.stdlib_module_names)
_BUILTINS = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_CLASS_KINDS = frozenset({"class", "interface", "type"})
# What a mention written as a call (`parse()`) can name.
_CALLABLE_KINDS = frozenset({"function", "method", "class"})


class Reason(StrEnum):
    """Why a mention links to its node; stored with the link."""

    EXPLICIT_TARGET = "explicit_target"
    """The text states the target: `[text][pkg.mod.Name]`, :class:`pkg.mod.Name`."""
    DOCUMENT_IMPORT = "document_import"
    """The document's code imports the name (`from pkg import Name`)."""
    HEADING_CONTEXT = "heading_context"
    """A member of the class the section's heading (or its plural, or the page's title or file)
    names."""
    TEXT_CONTEXT = "text_context"
    """A member of the class the text mentioned just before."""
    QUALIFIED_NAME = "qualified_name"
    """The mention is the node's full import path (or one of its public re-exports)."""
    UNIQUE_PUBLIC = "unique_public"
    """The only public definition of that name (or dotted suffix), or the only one the package
    exports at its top level."""
    SAME_FILE = "same_file"
    """A source file mentioning a name it defines itself."""
    NEAREST_DEFINITION = "nearest_definition"
    """Of a few definitions of the name, the one in the document's own part of the tree
    (`services/repodocs/README.md` names repodocs' `max_chars`, not the gateway's)."""
    NAME_MATCH = "name_match"
    """One of a few equally good definitions of the name, each linked."""


class Node(msgspec.Struct, frozen=True):
    id: str
    name: str
    qualified_name: str
    path: str
    kind: str


class Choice(msgspec.Struct, frozen=True):
    node_ids: list[str]
    reason: Reason


class Context:
    """What a reader of one document knows at a point in it."""

    def __init__(self, document_path: str, imports: dict[str, str], title_classes: Sequence[str]) -> None:
        self.document_path = document_path
        self.imports = imports
        """Local name -> dotted import path, from the document's code blocks."""
        self.title_classes = list(title_classes)
        """Class names the page's title or file name gives (`data_table.md` -> `DataTable`)."""
        self.heading_classes: list[str] = []
        """Class names in the headings above the current chunk, innermost last."""
        self.heading_plurals: list[str] = []
        """The singulars of plural words in those headings, innermost last: weaker evidence
        ("## Colors" may be about CSS), used only for a mention its author marked as a symbol."""
        self.recent_classes: list[str] = []
        """Node ids of classes linked earlier in the document, most recent last."""
        self.auxiliary = _auxiliary_part(document_path)
        """The document itself is in tests/, examples/, ...: their code is its subject."""


_IMPORT_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+\(?([\w\s,]+?)\)?\s*$", re.MULTILINE)
_IMPORT = re.compile(r"^\s*import\s+([\w.]+)(?:\s+as\s+(\w+))?\s*$", re.MULTILINE)
_FENCE = re.compile(r"^\s*(```|~~~)[^\n]*\n(.*?)^\s*\1", re.MULTILINE | re.DOTALL)


def document_imports(text: str) -> dict[str, str]:
    """Local name -> import path of the imports in a document's fenced code blocks."""
    imports: dict[str, str] = {}
    for fence in _FENCE.finditer(text):
        block = fence.group(2)
        for match in _IMPORT_FROM.finditer(block):
            for item in match.group(2).split(","):
                parts = item.split()
                if len(parts) == 1:
                    imports[parts[0]] = f"{match.group(1)}.{parts[0]}"
                elif len(parts) == 3 and parts[1] == "as":
                    imports[parts[2]] = f"{match.group(1)}.{parts[0]}"
        for match in _IMPORT.finditer(block):
            imports[match.group(2) or match.group(1).split(".")[0]] = (
                match.group(1) if match.group(2) else match.group(1).split(".")[0]
            )
    return imports


def title_classes(document_path: str, title: str = "") -> list[str]:
    """Class names a page's file name or title names: `widgets/data_table.md` -> `DataTable`."""
    stem = PurePosixPath(document_path).stem
    names = ["".join(part.capitalize() for part in re.split(r"[_\-\s]+", stem) if part)]
    names += re.findall(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b|\b[A-Z][a-z0-9]{2,}\b", title)
    return [n for n in dict.fromkeys(names) if n]


def heading_classes(heading_path: Sequence[str]) -> list[str]:
    """CamelCase names in a chunk's headings, outermost first (`DataTable` in "## DataTable rows")."""
    found: list[str] = []
    for heading in heading_path:
        found += re.findall(r"`?\b([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)\b`?", heading)
    return found


def heading_plurals(heading_path: Sequence[str]) -> list[str]:
    """The class names plural headings may stand for, outermost first: a "### Functions" section
    lists fields of `Function`, "### Type aliases" those of `TypeAlias`."""
    found: list[str] = []
    for heading in heading_path:
        words = re.findall(r"[A-Za-z][A-Za-z0-9]*", heading)
        joined = "".join(word[0].upper() + word[1:] for word in words) if len(words) > 1 else ""
        found += [s for name in (*heading_classes([heading]), joined) if (s := singular(name))]
    return found


def singular(word: str) -> str | None:
    """The singular of an English plural (Classes -> Class, Entries -> Entry), or None."""
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "ses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return None


def _private(qualified_name: str) -> bool:
    """A segment of the name is `_private` (a dunder such as `__init__` is not)."""
    return any(s.startswith("_") and not s.startswith("__") for s in qualified_name.split("."))


def _go_unexported(node: Node) -> bool:
    """Go's visibility: a lower-case identifier is the package's own, and an `internal/` package
    is importable only from its parent's tree."""
    if not node.path.endswith(".go"):
        return False
    return node.name[:1].islower() or "internal" in PurePosixPath(node.path).parts[:-1]


def _auxiliary_part(path: str) -> str | None:
    parts = PurePosixPath(path).parts[:-1]
    return next((p for p in parts if p.lower() in _AUXILIARY_DIRECTORIES), None)


class Resolver:
    """The code nodes of one repository with their re-exports, looked up as a reader would."""

    def __init__(self, nodes: Iterable[Node], aliases: Iterable[Alias]) -> None:
        self.nodes: dict[str, Node] = {}
        self._by_qualified: dict[str, list[str]] = defaultdict(list)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        self._by_suffix: dict[str, list[str]] = defaultdict(list)
        for node in nodes:
            self.nodes[node.id] = node
            self._by_qualified[node.qualified_name].append(node.id)
            self._by_name[node.name].append(node.id)
        self._aliases: dict[str, Alias] = {}
        for alias in aliases:
            self._aliases.setdefault(alias.name, alias)
        self._top_modules = {q.split(".")[0] for q in self._by_qualified}
        self._sorted = sorted(self._by_qualified)
        # Public paths: the node's own name when no segment is private, and every public
        # re-export of it or of its class (`pkg.Table.add_row` for `pkg._table.Table.add_row`).
        self._public: set[str] = {
            node_id
            for node_id, node in self.nodes.items()
            if not _private(node.qualified_name) and not _go_unexported(node)
        }
        for alias in self._aliases.values():
            if not alias.public or any(s.startswith("_") for s in alias.name.split(".")):
                continue
            target = self._follow(alias.target)
            if target is None:
                continue
            for qualified in self._under(target):
                public_name = alias.name + qualified[len(target) :]
                # A re-exported class's `_private` members stay private.
                public = not _private(public_name)
                for node_id in self._by_qualified[qualified]:
                    if public:
                        self._public.add(node_id)
                    self._by_qualified.setdefault(public_name, [])
                    if node_id not in self._by_qualified[public_name]:
                        self._by_qualified[public_name].append(node_id)
        # What a package exports at its top level (`pkg.load`), by its own name or a re-export.
        self._top_level = {
            node_id
            for qualified, node_ids in self._by_qualified.items()
            if qualified.count(".") == 1
            for node_id in node_ids
            if self.nodes[node_id].kind != "module" and node_id in self._public
        }
        for qualified, node_ids in list(self._by_qualified.items()):
            segments = qualified.split(".")
            for cut in range(1, len(segments) - 1):
                suffix = ".".join(segments[cut:])
                for node_id in node_ids:
                    if node_id not in self._by_suffix[suffix]:
                        self._by_suffix[suffix].append(node_id)

    def _under(self, qualified: str) -> list[str]:
        """`qualified` and every stored qualified name below it (its members)."""
        start = bisect.bisect_left(self._sorted, qualified)
        found: list[str] = []
        for name in self._sorted[start:]:
            if name != qualified and not name.startswith(qualified + "."):
                break
            found.append(name)
        return found

    def _follow(self, dotted: str) -> str | None:
        """The stored qualified name `dotted` reaches through re-exports, or None."""
        for _ in range(MAX_ALIAS_HOPS):
            if self._by_qualified.get(dotted):
                return dotted
            parts = dotted.split(".")
            for cut in range(len(parts), 0, -1):
                alias = self._aliases.get(".".join(parts[:cut]))
                if alias is not None:
                    dotted = ".".join([alias.target, *parts[cut:]])
                    break
            else:
                return None
        return None

    def tier(self, node_id: str, context: Context | None) -> int:
        """0 the public API; 1 private; 2 a legacy copy; 3 tests, examples and scripts."""
        node = self.nodes[node_id]
        directories = [p.lower() for p in PurePosixPath(node.path).parts[:-1]]
        auxiliary = next((p for p in directories if p in _AUXILIARY_DIRECTORIES), None)
        if node.path.endswith("_test.go"):  # Go's tests live beside the code they test
            auxiliary = auxiliary or "tests"
        if auxiliary is not None and not (context is not None and context.auxiliary == auxiliary):
            return 3
        if any(_LEGACY.match(p) for p in directories) or any(
            _LEGACY.match(s) for s in node.qualified_name.split(".")[:-1]
        ):
            return 2
        return 0 if node_id in self._public else 1

    def exact(self, dotted: str) -> list[str]:
        """Nodes whose full (or publicly re-exported) name is `dotted`."""
        found = self._by_qualified.get(dotted)
        if found:
            return list(found)
        target = self._follow(dotted)
        return list(self._by_qualified[target]) if target is not None else []

    def resolve(
        self, identifier: str, *, target: str | None, marked: bool, context: Context, called: bool = False
    ) -> Choice | None:
        """The node(s) a mention names and why, or None when it names nothing here. A mention
        written as a call (`parse()`) is code by its author's hand and names something callable."""
        if target:
            found = self.exact(target) or self._by_suffix.get(target, [])
            if found:
                return Choice(self._best(found, context)[:1], Reason.EXPLICIT_TARGET)
        head, _, rest = identifier.partition(".")
        if head in context.imports:
            found = self.exact(".".join(filter(None, [context.imports[head], rest])))
            if found:
                return Choice(self._best(found, context)[:1], Reason.DOCUMENT_IMPORT)
        if self._foreign(identifier, called=called):
            return None
        found = self.exact(identifier)
        if found and "." in identifier:
            return Choice(self._best(found, context)[:1], Reason.QUALIFIED_NAME)
        dotted = "." in identifier
        candidates = list(self._by_suffix.get(identifier, [])) if dotted else []
        candidates = candidates or found or list(self._by_name.get(identifier, []))
        if not candidates and marked and (one := singular(identifier)):  # [Docstrings][]
            candidates = list(self._by_name.get(one, []))
        if called:  # among what goes by that name (`f()` of a module f and its function f)
            named = (*candidates, *self._by_name.get(identifier, []))
            callables = list(dict.fromkeys(n for n in named if self.nodes[n].kind in _CALLABLE_KINDS))
            candidates = callables or candidates
            called = bool(callables)  # `hsl()` of CSS is no call of a same-named property
        if not candidates:
            return None
        members = self._in_context(candidates, context, marked=marked)
        if members is not None:
            return members
        common = not dotted and bool(_COMMON_WORD.fullmatch(identifier))
        if common and not (marked or called):
            return None  # a bare word: only with context
        best = self._best(candidates, context)
        local = [n for n in best if self.nodes[n].path == context.document_path]
        if local:
            return Choice(local, Reason.SAME_FILE)
        nearest = self._nearest(best, context.document_path)
        # With no class in context, a name means the package's export, not a method of the same
        # name; unless the document's part of the tree has its own.
        exported = [n for n in nearest if n in self._top_level]
        if exported:
            best = nearest = exported
        if len(best) == 1 and self.tier(best[0], context) == 0:
            return Choice(best, Reason.UNIQUE_PUBLIC)
        if common or len(best) > MAX_CANDIDATES:
            return None
        if len(nearest) < len(best):
            return Choice(nearest, Reason.NEAREST_DEFINITION)
        return Choice(best, Reason.NAME_MATCH)

    def _nearest(self, candidates: Sequence[str], document_path: str) -> list[str]:
        """The candidates whose files share the most leading directories with the document, when
        that is at least one: a README in a package's directory speaks of that package's names."""
        directories = PurePosixPath(document_path).parts[:-1]

        def shared(node_id: str) -> int:
            parts = PurePosixPath(self.nodes[node_id].path).parts[:-1]
            pairs = zip(parts, directories, strict=False)  # as far as the shorter goes
            return sum(1 for _ in takewhile(lambda pair: pair[0] == pair[1], pairs))

        depth = {n: shared(n) for n in candidates}
        most = max(depth.values())
        return [n for n in candidates if depth[n] == most] if most > 0 else list(candidates)

    def _foreign(self, identifier: str, *, called: bool) -> bool:
        """A builtin (`dict`, `print`) or a standard-library name (`json`, `typing.get_args`) that is
        not one of this repository's own top-level modules. A module is never called: `tokenize()`
        is not the standard library's tokenize."""
        head = identifier.split(".", maxsplit=1)[0]
        if head in self._top_modules:
            return False
        if "." not in identifier:
            # A bare `__init__` or `__all__` is Python's protocol, not one class's member.
            dunder = _DUNDER.fullmatch(identifier) is not None
            return dunder or identifier in _BUILTINS or (identifier in _STDLIB and not called)
        return head in _STDLIB

    def _best(self, candidates: Sequence[str], context: Context | None) -> list[str]:
        """The candidates of the best tier, in their order."""
        unique = list(dict.fromkeys(candidates))
        best = min(self.tier(n, context) for n in unique)
        return [n for n in unique if self.tier(n, context) == best]

    def _in_context(self, candidates: Sequence[str], context: Context, *, marked: bool) -> Choice | None:
        """A member of a class the heading, the page, or the text just before names."""
        owners = {n: self.nodes[n].qualified_name.rpartition(".")[0] for n in candidates}
        plurals = context.heading_plurals if marked else []
        for names, reason in (
            (reversed(context.heading_classes), Reason.HEADING_CONTEXT),
            (reversed(plurals), Reason.HEADING_CONTEXT),
            (
                (self.nodes[c].qualified_name for c in reversed(context.recent_classes)),
                Reason.TEXT_CONTEXT,
            ),
            (iter(context.title_classes), Reason.HEADING_CONTEXT),
        ):
            for name in names:
                matching = [n for n, owner in owners.items() if owner == name or owner.endswith("." + name)]
                if matching:
                    return Choice(self._best(matching, context)[:1], reason)
        return None

    def is_class(self, node_id: str) -> bool:
        return self.nodes[node_id].kind in _CLASS_KINDS
