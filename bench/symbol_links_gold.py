"""Build the gold set of bench/symbol_links.py from a Python repository whose docs carry mkdocstrings
cross-references: each `[visible text][pkg.mod.Name]` is a human-written link from a mention to the
symbol it means.

    .venv/bin/python bench/symbol_links_gold.py CHECKOUT [PACKAGE] > bench/symbol_links_gold[_NAME].json

The target is resolved to the definition a reader lands on, with Python's `ast` (deliberately not
the service's tree-sitter code, so the gold shares no logic with what it measures): the longest
prefix that is a module, then each name through the module's imports (re-exports, `if TYPE_CHECKING`
imports, `.pyi` stubs) and, for a member a class does not define, through its bases. A reference
whose visible text is prose ("the container reference") is not a mention and is left out; a
target that does not resolve is reported on stderr and left out.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REFERENCE = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])+)\]\[([A-Za-z_][\w.]*)\]")
IDENTIFIER_TEXT = re.compile(r"`?([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(?:\(\))?`?")
FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Scope:
    """A module's or class's namespace: definitions (name -> (kind, line, node)), imports
    (name -> dotted target) and, for a class, its base expressions."""

    path: str
    qualified: str
    definitions: dict[str, tuple[str, int, ast.AST | None]] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)
    bases: list[str] = field(default_factory=list)
    module: str = ""


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a block and of the if/try/with blocks in it (declarations at this level)."""
    for statement in body:
        if isinstance(statement, ast.If | ast.With):
            yield from statements(statement.body)
            yield from statements(getattr(statement, "orelse", []))
        elif isinstance(statement, ast.Try):
            yield from statements(statement.body)
            for handler in statement.handlers:
                yield from statements(handler.body)
            yield from statements(statement.orelse)
            yield from statements(statement.finalbody)
        else:
            yield statement


def start_line(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min([d.lineno for d in node.decorator_list] + [node.lineno])


def fill(scope: Scope, body: list[ast.stmt], package: str) -> None:
    for statement in statements(body):
        if isinstance(statement, ast.ClassDef):
            scope.definitions.setdefault(statement.name, ("class", start_line(statement), statement))
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            scope.definitions.setdefault(statement.name, ("function", start_line(statement), statement))
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    scope.definitions.setdefault(target.id, ("variable", statement.lineno, None))
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            scope.definitions.setdefault(statement.target.id, ("variable", statement.lineno, None))
        elif isinstance(statement, ast.ImportFrom):
            base = statement.module or ""
            if statement.level:
                parts = package.split(".")
                parts = parts[: len(parts) - statement.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in statement.names:
                scope.imports[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    scope.imports[alias.asname] = alias.name


class Repository:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: dict[str, Path] = {}
        for path in sorted(root.rglob("*.py*")):
            if path.suffix not in (".py", ".pyi") or "docs" in path.relative_to(root).parts:
                continue
            relative = path.relative_to(root)
            parts = list(relative.with_suffix("").parts)
            # A source layout (`src/pkg`, `packages/lib/src/pkg`) names modules from below `src`.
            if "src" in parts[:-1]:
                parts = parts[len(parts) - parts[::-1].index("src") :]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join(parts)
            # A stub describes the module's API; the .py defines it. Both are read, .py first.
            self.modules.setdefault(name, path) if path.suffix == ".py" else None
            if path.suffix == ".pyi":
                self.modules.setdefault(name + "#stub", path)
        self._scopes: dict[str, Scope] = {}

    def module_scope(self, name: str) -> Scope | None:
        if name in self._scopes:
            return self._scopes[name]
        path = self.modules.get(name) or self.modules.get(name + "#stub")
        if path is None:
            return None
        relative = path.relative_to(self.root).as_posix()
        scope = Scope(relative, name, module=name)
        package = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
        fill(scope, ast.parse(path.read_text()).body, package)
        stub = self.modules.get(name + "#stub")
        if stub is not None and stub != path:
            extra = Scope(stub.relative_to(self.root).as_posix(), name, module=name)
            fill(extra, ast.parse(stub.read_text()).body, package)
            for key, value in extra.imports.items():
                scope.imports.setdefault(key, value)
        self._scopes[name] = scope
        return scope

    def class_scope(self, owner: Scope, name: str, node: ast.ClassDef) -> Scope:
        scope = Scope(owner.path, f"{owner.qualified}.{name}", module=owner.module)
        scope.imports = owner.imports  # names in bases resolve in the module
        fill(scope, node.body, owner.module)
        # Attributes `__init__` sets on the instance are documented members too.
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef) and statement.name == "__init__":
                for inner in ast.walk(statement):
                    targets: list[ast.expr] = []
                    if isinstance(inner, ast.Assign):
                        targets = inner.targets
                    elif isinstance(inner, ast.AnnAssign):
                        targets = [inner.target]
                    for target in targets:
                        if (
                            isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == "self"
                        ):
                            line = target.lineno
                            scope.definitions.setdefault(target.attr, ("variable", line, None))
        scope.bases = [ast.unparse(base) for base in node.bases]
        return scope

    def resolve(self, dotted: str, depth: int = 0) -> dict[str, object] | None:
        """{path, qualified, name, kind, line} of the definition `dotted` reaches, or None."""
        if depth > 20:
            return None
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            scope = self.module_scope(module)
            if scope is None:
                continue
            rest = parts[cut:]
            if not rest:
                return {
                    "path": scope.path,
                    "qualified": module,
                    "name": parts[-1],
                    "kind": "module",
                    "line": 1,
                }
            return self._walk(scope, rest, depth)
        return None

    def _walk(self, scope: Scope, rest: list[str], depth: int) -> dict[str, object] | None:
        name, tail = rest[0], rest[1:]
        if name in scope.definitions:
            kind, line, node = scope.definitions[name]
            if not tail:
                return {
                    "path": scope.path,
                    "qualified": f"{scope.qualified}.{name}",
                    "name": name,
                    "kind": kind,
                    "line": line,
                }
            if isinstance(node, ast.ClassDef):
                return self._member(self.class_scope(scope, name, node), tail, depth)
            return None
        if name in scope.imports:
            return self.resolve(".".join([scope.imports[name], *tail]), depth + 1)
        return None

    def _member(self, scope: Scope, rest: list[str], depth: int) -> dict[str, object] | None:
        found = self._walk(scope, rest, depth)
        if found is not None:
            return found
        for base in scope.bases:
            head, _, more = base.partition(".")
            if head in scope.imports:
                target = ".".join(x for x in (scope.imports[head], more) if x)
            else:
                target = f"{scope.module}.{base}"
            found = self.resolve(".".join([target, *rest]), depth + 1)
            if found is not None:
                return found
        return None


def references(root: Path) -> Iterator[tuple[str, int, str, str]]:
    """(document path, line, visible text, target) of every cross-reference outside code fences."""
    for path in sorted((root / "docs").rglob("*.md")):
        in_fence = False
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for match in REFERENCE.finditer(line):
                yield path.relative_to(root).as_posix(), number, match.group(1), match.group(2)


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    repository = Repository(root)
    package = root.name if len(sys.argv) < 3 else sys.argv[2]
    gold: list[dict[str, object]] = []
    left_out = {"prose": 0, "unresolved": 0, "other package": 0}
    for document, line, text, target in references(root):
        if target.split(".")[0] != package:
            left_out["other package"] += 1
            continue
        visible = IDENTIFIER_TEXT.fullmatch(text)
        if visible is None:
            left_out["prose"] += 1
            continue
        definition = repository.resolve(target)
        if definition is None:
            left_out["unresolved"] += 1
            print(f"unresolved: {document}:{line} {text} -> {target}", file=sys.stderr)
            continue
        gold.append(
            {
                "document": document,
                "line": line,
                "text": text,
                "identifier": visible.group(1),
                "target": target,
                "definition": definition,
            }
        )
    print(f"{len(gold)} gold mentions; left out {left_out}", file=sys.stderr)
    json.dump({"repository": package, "mentions": gold}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
