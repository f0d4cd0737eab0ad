"""Code symbols of Python, Go, TypeScript and JavaScript files, with tree-sitter.

The grammars are the compiled PyPI wheels: nothing is downloaded at run time.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from enum import StrEnum
from functools import cache
from pathlib import PurePosixPath

import msgspec
import tree_sitter_go
import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_typescript
from tree_sitter import Language as Grammar
from tree_sitter import Node, Parser


class Language(StrEnum):
    PYTHON = "python"
    GO = "go"
    TYPESCRIPT = "typescript"
    JAVASCRIPT = "javascript"


class SymbolKind(StrEnum):
    FUNCTION = "function"
    CLASS = "class"
    METHOD = "method"
    TYPE = "type"
    INTERFACE = "interface"
    CONSTANT = "constant"
    MODULE = "module"
    """A Python module or package, named by its import path; it spans the whole file."""
    VARIABLE = "variable"
    """A module-level assignment that is neither an UPPER_CASE constant nor a type alias."""
    ATTRIBUTE = "attribute"
    """A class attribute: an assignment or annotation in the class body (dataclass and TypedDict
    fields, class variables) or one `__init__` sets on `self`."""
    PROPERTY = "property"
    """A method decorated as a property."""


# The kinds the dense code search holds a vector of: definitions with a body or a value of their
# own. Modules, module variables and class attributes are indexed for docs to link to and are found
# by name; their one line (`self.bases = bases`) tells a vector nothing the name does not, and each
# vector costs an embedding and an HNSW insert (on textual, a third of all nodes).
EMBEDDED_KINDS = frozenset(
    {
        SymbolKind.FUNCTION,
        SymbolKind.CLASS,
        SymbolKind.METHOD,
        SymbolKind.PROPERTY,
        SymbolKind.TYPE,
        SymbolKind.INTERFACE,
        SymbolKind.CONSTANT,
    }
)


class Symbol(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    qualified_name: str
    kind: SymbolKind
    language: Language
    path: str
    start_line: int
    """1-based, first line of the declaration including decorators and `export`."""
    end_line: int
    """1-based, inclusive."""
    signature: str
    """The declaration's line that holds its name, trimmed; a line over `SIGNATURE_MAX_CHARS`
    (minified code) is cut to the declaration's head, marked with an ellipsis."""


_EXTENSIONS = {
    ".py": Language.PYTHON,
    ".pyi": Language.PYTHON,
    ".go": Language.GO,
    ".ts": Language.TYPESCRIPT,
    ".tsx": Language.TYPESCRIPT,
    ".js": Language.JAVASCRIPT,
    ".jsx": Language.JAVASCRIPT,
    ".mjs": Language.JAVASCRIPT,
    ".cjs": Language.JAVASCRIPT,
}
_GRAMMARS: dict[str, Callable[[], object]] = {
    ".py": tree_sitter_python.language,
    ".pyi": tree_sitter_python.language,
    ".go": tree_sitter_go.language,
    ".ts": tree_sitter_typescript.language_typescript,
    ".tsx": tree_sitter_typescript.language_tsx,
    # The JavaScript grammar parses JSX too.
    ".js": tree_sitter_javascript.language,
    ".jsx": tree_sitter_javascript.language,
    ".mjs": tree_sitter_javascript.language,
    ".cjs": tree_sitter_javascript.language,
}
# A minified bundle is one line: without a cap every symbol would store, and embed, the whole file.
SIGNATURE_MAX_CHARS = 200
# Where a cut signature may end: before a space or a punctuation mark, never inside a word.
_SIGNATURE_BOUNDARY = re.compile(r"[\s,;:(){}\[\]=]")
_UPPER_CASE = re.compile(r"_*[A-Z][A-Z0-9_]*")
_TYPE_PARAMETER = re.compile(r"^(?:typing\.|typing_extensions\.)?(?:TypeVar|ParamSpec|TypeVarTuple)\(")


class Alias(msgspec.Struct, frozen=True, kw_only=True):
    """A name a module makes importable without defining it: `from .fields import Field` in
    `pkg/__init__.py` is `pkg.Field` -> `pkg.fields.Field`."""

    name: str
    target: str
    public: bool
    """Listed in the module's `__all__`, or, without one, a name not starting with `_`."""


class Extracted(msgspec.Struct, frozen=True):
    symbols: list[Symbol]
    aliases: list[Alias]


def language_for_path(path: str) -> Language | None:
    return _EXTENSIONS.get(PurePosixPath(path).suffix.lower())


@cache
def _grammar(suffix: str) -> Grammar:
    return Grammar(_GRAMMARS[suffix]())


def extract_symbols(path: str, source: str | bytes, module: str | None = None) -> list[Symbol]:
    """The symbols declared in one file, in source order (not the module itself); [] for an
    unsupported language."""
    return [s for s in extract(path, source, module).symbols if s.kind is not SymbolKind.MODULE]


def extract(path: str, source: str | bytes, module: str | None = None) -> Extracted:
    """The symbols one file declares, in source order, and the names it re-exports.

    `module` is the file's import path where the caller knows it (from the package layout,
    see `python_modules`); by default it is derived from the path alone (`module_path`).
    A Python file is also a symbol of its own, of kind module.
    """
    suffix = PurePosixPath(path).suffix.lower()
    language = _EXTENSIONS.get(suffix)
    if language is None:
        return Extracted([], [])
    data = source.encode() if isinstance(source, str) else source
    root = Parser(_grammar(suffix)).parse(data).root_node
    # Bytes, as tree-sitter's columns count bytes.
    lines = data.split(b"\n")
    collect = _Collector(path=path, language=language, lines=lines)
    if language is Language.PYTHON:
        name = module if module is not None else module_path(path, language)
        if name:
            collect.module(name, len(lines))
        collect.python(root, name)
        collect.python_imports(root, name, package=name if _is_package(path) else name.rpartition(".")[0])
    elif language is Language.GO:
        collect.go(root, path)
    else:
        name = module if module is not None else module_path(path, language)
        collect.script(root, name)
        collect.script_reexports(root, name, path)
    return Extracted(collect.symbols, collect.aliases)


def _is_package(path: str) -> bool:
    return PurePosixPath(path).stem == "__init__"


# Directories that hold a project's import roots without being packages themselves.
_SOURCE_ROOTS = frozenset({"src", "python", "lib"})


def python_modules(paths: list[str]) -> dict[str, str]:
    """The import path of each Python file among `paths` (POSIX, relative to the checkout).

    A file in a package is named from the top of its `__init__` chain, wherever that stands
    (`pydantic-core/python/pydantic_core/core_schema.py` -> `pydantic_core.core_schema`); a file
    outside any package by what follows the last `src/`, `python/` or `lib/` directory, or else by
    its path (`scripts/release.py` -> `scripts.release`).
    """
    packages = {
        str(PurePosixPath(p).parent)
        for p in paths
        if PurePosixPath(p).name in ("__init__.py", "__init__.pyi")
    }
    names: dict[str, str] = {}
    for path in paths:
        pure = PurePosixPath(path)
        if pure.suffix not in (".py", ".pyi"):
            continue
        directory = pure.parent
        top = None
        while str(directory) in packages:
            top = directory
            directory = directory.parent
        if top is not None:
            parts = [top.name, *pure.relative_to(top).with_suffix("").parts]
        else:
            parts = list(pure.with_suffix("").parts)
            roots = [i for i, part in enumerate(parts[:-1]) if part in _SOURCE_ROOTS]
            if roots:
                parts = parts[roots[-1] + 1 :]
        if parts and parts[-1] == "__init__":
            parts.pop()
        names[path] = ".".join(parts)
    return names


def module_path(path: str, language: Language) -> str:
    """Dotted module of a Python or TS/JS file: everything after the last `src/`, extension,
    `__init__` and `index` dropped (`services/x/src/pkg/__init__.py` -> `pkg`)."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    # Everything up to the last `src/` directory is repository layout, not package.
    directories = parts[:-1]
    if "src" in directories:
        parts = parts[len(directories) - directories[::-1].index("src") :]
    package_file = "__init__" if language is Language.PYTHON else "index"
    if parts and parts[-1] == package_file:
        parts.pop()
    return ".".join(parts)


def _shorten(text: str, name_end: int) -> str:
    """`text` cut at the last boundary before `SIGNATURE_MAX_CHARS` (the name, ending at
    `name_end`, is always kept), with an ellipsis; `text` itself when it is short enough."""
    if len(text) <= SIGNATURE_MAX_CHARS:
        return text
    limit = max(SIGNATURE_MAX_CHARS, name_end)
    cut = max((m.start() for m in _SIGNATURE_BOUNDARY.finditer(text, name_end, limit)), default=limit)
    return text[:cut].rstrip(" \t,;") + "…"


def _function_body(declaration: Node) -> Node | None:
    """The body of a function, class or method declaration, or of the function a variable holds."""
    body = declaration.child_by_field_name("body")
    if body is None:
        value = declaration.child_by_field_name("value")
        body = value.child_by_field_name("body") if value is not None else None
    return body


def _join(*parts: str) -> str:
    return ".".join(part for part in parts if part)


def _text(node: Node | None) -> str:
    return node.text.decode(errors="replace") if node is not None and node.text is not None else ""


class _Collector:
    def __init__(self, *, path: str, language: Language, lines: list[bytes]) -> None:
        self.path = path
        self.language = language
        self.lines = lines
        self.symbols: list[Symbol] = []
        self.aliases: list[Alias] = []
        self._names: dict[str, set[str]] = {}

    def add(self, name_node: Node, span: Node, kind: SymbolKind, scope: str) -> None:
        name = _text(name_node)
        if not name:
            return
        self._names.setdefault(scope, set()).add(name)
        self.symbols.append(
            Symbol(
                name=name,
                qualified_name=_join(scope, name),
                kind=kind,
                language=self.language,
                path=self.path,
                start_line=span.start_point[0] + 1,
                end_line=span.end_point[0] + 1,
                signature=self._signature(name_node),
            )
        )

    def _signature(self, name: Node) -> str:
        row, name_column = name.start_point
        line = self.lines[row]
        whole = line.decode(errors="replace").strip()
        if len(whole) <= SIGNATURE_MAX_CHARS:
            return whole
        # A long line: from the start of the name's own declaration to its body's start.
        declaration = name.parent
        start, end = 0, len(line)
        if declaration is not None:
            if (
                declaration.start_point[0] == row
                and name_column - declaration.start_point[1] <= SIGNATURE_MAX_CHARS
            ):
                start = declaration.start_point[1]
            body = _function_body(declaration)
            if body is not None and body.start_point[0] == row:
                end = body.start_point[1]
        head = line[start:end].decode(errors="replace")
        name_end = len(line[start : name.end_point[1]].decode(errors="replace"))
        indent = len(head) - len(head.lstrip())
        return _shorten(head.strip(), name_end - indent)

    def module(self, name: str, line_count: int) -> None:
        short = name.rpartition(".")[2]
        self.symbols.append(
            Symbol(
                name=short,
                qualified_name=name,
                kind=SymbolKind.MODULE,
                language=self.language,
                path=self.path,
                start_line=1,
                end_line=max(1, line_count),
                signature=f"module {name}",
            )
        )

    # Python: module-level functions, constants, variables and type aliases; classes (nested too),
    # their methods, properties and attributes; also where an if, try or with block declares them.
    def python(self, block: Node, scope: str, *, in_class: bool = False) -> None:
        for statement in block.named_children:
            span = statement
            definition = (
                statement.child_by_field_name("definition")
                if statement.type == "decorated_definition"
                else statement
            )
            if definition is None:
                continue
            name = definition.child_by_field_name("name")
            if definition.type == "class_definition" and name is not None:
                self.add(name, span, SymbolKind.CLASS, scope)
                body = definition.child_by_field_name("body")
                if body is not None:
                    self.python(body, _join(scope, _text(name)), in_class=True)
            elif definition.type == "function_definition" and name is not None:
                decorators = _decorators(statement)
                if in_class and decorators & _SETTERS:
                    continue  # the property's getter is its symbol
                if in_class and decorators & _PROPERTIES:
                    self.add(name, span, SymbolKind.PROPERTY, scope)
                else:
                    self.add(name, span, SymbolKind.METHOD if in_class else SymbolKind.FUNCTION, scope)
                if in_class and _text(name) == "__init__":
                    self._instance_attributes(definition, scope)
            elif definition.type == "expression_statement":
                self._python_assignment(definition, scope, in_class=in_class)
            elif definition.type == "type_alias_statement" and not in_class:
                alias = definition.named_children[0] if definition.named_children else None
                target = alias.named_children[0] if alias is not None and alias.named_children else None
                if target is not None and target.type == "identifier":
                    self.add(target, statement, SymbolKind.TYPE, scope)
            elif definition.type in _PYTHON_BRANCHING:
                for branch in _python_blocks(definition):
                    self.python(branch, scope, in_class=in_class)

    def _python_assignment(self, statement: Node, scope: str, *, in_class: bool) -> None:
        for assignment in statement.named_children:
            if assignment.type != "assignment":
                continue
            target = assignment.child_by_field_name("left")
            value = assignment.child_by_field_name("right")
            annotation = assignment.child_by_field_name("type")
            if target is None or target.type != "identifier":
                continue
            name = _text(target)
            if name.startswith("__"):
                continue  # `__all__`, `__version__`: module machinery
            if in_class:
                # Private attributes are no API; a second assignment is the same attribute.
                if not name.startswith("_") and name not in self._declared(scope):
                    self.add(target, statement, SymbolKind.ATTRIBUTE, scope)
                continue
            # `T = TypeVar("T")` is a type parameter, not a symbol docs cite.
            if value is not None and value.type == "call" and _TYPE_PARAMETER.search(_text(value)):
                continue
            if _UPPER_CASE.fullmatch(name):
                self.add(target, statement, SymbolKind.CONSTANT, scope)
            elif not name.startswith("_") and name not in self._declared(scope):
                kind = SymbolKind.TYPE if _is_type_alias(name, annotation, value) else SymbolKind.VARIABLE
                self.add(target, statement, kind, scope)

    def _instance_attributes(self, init: Node, scope: str) -> None:
        """`self.x = ...` in `__init__`: attributes of the instance, once each, public only."""
        body = init.child_by_field_name("body")
        if body is None:
            return
        pending = list(body.named_children)
        while pending:
            node = pending.pop(0)
            if node.type in ("function_definition", "class_definition", "lambda"):
                continue  # another scope's `self`
            if node.type == "assignment":
                target = node.child_by_field_name("left")
                if (
                    target is not None
                    and target.type == "attribute"
                    and _text(target.child_by_field_name("object")) == "self"
                ):
                    attribute = target.child_by_field_name("attribute")
                    name = _text(attribute)
                    if (
                        attribute is not None
                        and not name.startswith("_")
                        and name not in self._declared(scope)
                    ):
                        statement = node.parent if node.parent is not None else node
                        self.add(attribute, statement, SymbolKind.ATTRIBUTE, scope)
            pending.extend(node.named_children)

    def _declared(self, scope: str) -> set[str]:
        return self._names.get(scope, set())

    def python_imports(self, root: Node, module: str, package: str) -> None:
        """Names the module imports from its own project (`from .x import y`, or from the same
        top-level package), at module level or in if/try/with blocks: its re-exports."""
        exported = _dunder_all(root)
        top = module.partition(".")[0]
        for statement in _python_statements(root):
            if statement.type == "import_from_statement":
                source = statement.child_by_field_name("module_name")
                if source is None:
                    continue
                base = _resolve_relative(_text(source), package)
                if base is None or base.partition(".")[0] != top:
                    continue
                for imported in statement.children_by_field_name("name"):
                    if imported.type == "aliased_import":
                        original = _text(imported.child_by_field_name("name"))
                        local = _text(imported.child_by_field_name("alias"))
                    else:
                        original = local = _text(imported)
                    if original and local:
                        self._alias(module, local, _join(base, original), exported)
            elif statement.type == "import_statement":
                for imported in statement.children_by_field_name("name"):
                    if imported.type == "aliased_import":
                        original = _text(imported.child_by_field_name("name"))
                        if original.partition(".")[0] == top:
                            local = _text(imported.child_by_field_name("alias"))
                            self._alias(module, local, original, exported)

    def _alias(self, module: str, local: str, target: str, exported: set[str] | None) -> None:
        public = local in exported if exported is not None else not local.startswith("_")
        name = _join(module, local)
        if name != target:
            self.aliases.append(Alias(name=name, target=target, public=public))

    # Go: package path = directory segments, plus the package clause when it differs from the
    # directory name (`cmd/tool` + `package main` -> `cmd.tool.main`); methods by receiver type.
    def go(self, root: Node, path: str) -> None:
        package = next(
            (
                _text(c.named_children[0])
                for c in root.named_children
                if c.type == "package_clause" and c.named_children
            ),
            "",
        )
        segments = [s for s in PurePosixPath(path).parent.parts if s != "."]
        if package and (not segments or segments[-1] != package):
            segments.append(package)
        scope = ".".join(segments)
        for declaration in root.named_children:
            if declaration.type == "function_declaration":
                self._add_named(declaration, declaration, SymbolKind.FUNCTION, scope)
            elif declaration.type == "method_declaration":
                receiver = _go_receiver_type(declaration)
                self._add_named(declaration, declaration, SymbolKind.METHOD, _join(scope, receiver))
            elif declaration.type in ("type_declaration", "const_declaration"):
                for spec, span in _go_specs(declaration):
                    if spec.type == "const_spec":
                        for name in spec.children_by_field_name("name"):
                            if name.is_named:  # the field also holds the commas of `A, B = ...`
                                self.add(name, span, SymbolKind.CONSTANT, scope)
                    else:
                        self._add_named(spec, span, _go_type_kind(spec), scope)

    def _add_named(self, node: Node, span: Node, kind: SymbolKind, scope: str) -> None:
        name = node.child_by_field_name("name")
        if name is not None:
            self.add(name, span, kind, scope)

    # TS/JS: top-level declarations, exported or not; class members as methods.
    def script(self, root: Node, scope: str) -> None:
        for statement in root.named_children:
            span = statement
            declaration = (
                statement.child_by_field_name("declaration")
                if statement.type == "export_statement"
                else statement
            )
            if declaration is None:
                continue
            for name, kind, body in _script_declarations(declaration):
                self.add(name, span, kind, scope)
                if body is not None:
                    self._script_members(body, _join(scope, _text(name)))

    def script_reexports(self, root: Node, module: str, path: str) -> None:
        """What the module exports from its project's other modules: `export { A as B } from
        './a'`, or `export { A }` of a name it imports from one (an `index.ts` that makes the
        package's API). Packages and `export *` are not followed."""
        imported: dict[str, str] = {}
        for statement in root.named_children:
            source = statement.child_by_field_name("source")
            origin = _script_module(path, _text(source)[1:-1]) if source is not None else None
            if statement.type == "import_statement" and origin is not None:
                for original, local in _script_specifiers(statement, "import_specifier"):
                    imported[local] = _join(origin, original)
            elif statement.type == "export_statement":
                for original, exported in _script_specifiers(statement, "export_specifier"):
                    if origin is not None:
                        target: str | None = _join(origin, original)
                    else:  # a name imported above, or one of its own under another name
                        target = imported.get(original) or (
                            _join(module, original) if exported != original else None
                        )
                    if target is not None:
                        self.aliases.append(Alias(name=_join(module, exported), target=target, public=True))

    def _script_members(self, body: Node, scope: str) -> None:
        for member in body.named_children:
            if member.type == "method_definition":
                name = member.child_by_field_name("name")
                # `#private` methods cannot be referred to from outside the class.
                if name is not None and name.type != "private_property_identifier":
                    self.add(name, member, SymbolKind.METHOD, scope)
            elif member.type in ("public_field_definition", "field_definition"):
                # A field holding an arrow function is a method in all but syntax.
                name = member.child_by_field_name("name") or member.child_by_field_name("property")
                value = member.child_by_field_name("value")
                if name is not None and value is not None and value.type in _FUNCTION_VALUES:
                    self.add(name, member, SymbolKind.METHOD, scope)


def _script_specifiers(statement: Node, kind: str) -> Iterator[tuple[str, str]]:
    """(name, local name) of each `{ name as local }` of an import or export statement."""
    stack = list(statement.named_children)
    while stack:
        node = stack.pop(0)
        if node.type == kind:
            name = _text(node.child_by_field_name("name"))
            alias = node.child_by_field_name("alias")
            if name:
                yield name, _text(alias) if alias is not None else name
        elif node.type in ("import_clause", "named_imports", "export_clause"):
            stack.extend(node.named_children)


def _script_module(path: str, specifier: str) -> str | None:
    """The module a relative import specifier names from `path` (`./table.js` -> `pkg.table`);
    None for a package (`react`) or a path that leaves the checkout."""
    if not specifier.startswith("."):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), specifier))
    if joined.startswith(".."):
        return None
    stem, extension = posixpath.splitext(joined)
    bare = stem if extension in _EXTENSIONS else joined
    return module_path(bare + ".ts", Language.TYPESCRIPT) or None


_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_SCRIPT_KINDS = {
    "function_declaration": SymbolKind.FUNCTION,
    "generator_function_declaration": SymbolKind.FUNCTION,
    "class_declaration": SymbolKind.CLASS,
    "abstract_class_declaration": SymbolKind.CLASS,
    "interface_declaration": SymbolKind.INTERFACE,
    "type_alias_declaration": SymbolKind.TYPE,
    "enum_declaration": SymbolKind.TYPE,
}


# Statements whose blocks declare at the level the statement stands at: `if TYPE_CHECKING:`, a
# version check, `try: from x import y` / `except ImportError: def y(...)`.
_PYTHON_BRANCHING = frozenset({"if_statement", "try_statement", "with_statement"})
_PYTHON_CLAUSES = frozenset(
    {"elif_clause", "else_clause", "except_clause", "except_group_clause", "finally_clause"}
)


_PROPERTIES = frozenset({"property", "cached_property", "functools.cached_property", "abc.abstractproperty"})
_SETTERS = frozenset({"setter", "deleter"})
# Right-hand sides that make a module-level assignment a type alias: `X = Union[...]`,
# `PositiveInt = Annotated[int, ...]`, `Handler = Callable[[Event], None]`.
_TYPE_FORMS = re.compile(
    r"(?:typing\.|typing_extensions\.|t\.)?"
    r"(?:Union|Optional|Annotated|Literal|Callable|Dict|List|Tuple|Set|FrozenSet|Type|Mapping|Sequence"
    r"|Iterable|Iterator|TypeAliasType|NewType)\b"
)


def _decorators(statement: Node) -> set[str]:
    """Decorator names of a decorated definition: `property`, and the last segment of
    `@name.setter` (`setter`)."""
    if statement.type != "decorated_definition":
        return set()
    names: set[str] = set()
    for child in statement.named_children:
        if child.type == "decorator":
            text = _text(child).lstrip("@").split("(")[0].strip()
            names.add(text)
            names.add(text.rpartition(".")[2])
    return names


def _is_type_alias(name: str, annotation: Node | None, value: Node | None) -> bool:
    """`X: TypeAlias = ...`, `X = Annotated[int, ...]`, `X = NewType(...)`, or a CamelCase name
    bound to a union (`Handler = Sync | Async`)."""
    if annotation is not None:
        return _text(annotation).rpartition(".")[2] == "TypeAlias"
    if value is None:
        return False
    text = _text(value)
    if value.type in ("subscript", "call"):
        return bool(_TYPE_FORMS.match(text))
    union = value.type == "binary_operator" and "|" in text
    return union and name[:1].isupper() and not _UPPER_CASE.fullmatch(name)


def _python_statements(block: Node) -> Iterator[Node]:
    """The statements of a block and of its if/try/with blocks."""
    for statement in block.named_children:
        if statement.type in _PYTHON_BRANCHING:
            for branch in _python_blocks(statement):
                yield from _python_statements(branch)
        else:
            yield statement


def _dunder_all(root: Node) -> set[str] | None:
    """The names a module's `__all__ = [...]` (or tuple) lists; None without one."""
    names: set[str] | None = None
    for statement in _python_statements(root):
        if statement.type != "expression_statement":
            continue
        for assignment in statement.named_children:
            target = assignment.child_by_field_name("left") if assignment.type == "assignment" else None
            value = assignment.child_by_field_name("right") if assignment.type == "assignment" else None
            if target is None or _text(target) != "__all__" or value is None:
                continue
            names = names or set()
            for item in value.named_children:
                if item.type == "string":
                    names.add(_text(item).strip("'\""))
    return names


def _resolve_relative(source: str, package: str) -> str | None:
    """`.fields` in package `pkg` -> `pkg.fields`; `..x` one level up; absolute names as they are."""
    level = len(source) - len(source.lstrip("."))
    if not level:
        return source
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    rest = source[level:]
    return ".".join([*base, rest] if rest else base) or None


def _python_blocks(statement: Node) -> Iterator[Node]:
    for child in statement.named_children:
        if child.type == "block":
            yield child
        elif child.type in _PYTHON_CLAUSES:
            yield from (block for block in child.named_children if block.type == "block")


def _script_declarations(declaration: Node) -> Iterator[tuple[Node, SymbolKind, Node | None]]:
    """(name node, kind, class body or None) for each symbol one top-level statement declares."""
    kind = _SCRIPT_KINDS.get(declaration.type)
    name = declaration.child_by_field_name("name")
    if kind is not None and name is not None:
        body = declaration.child_by_field_name("body") if kind is SymbolKind.CLASS else None
        yield name, kind, body
        return
    if declaration.type not in ("lexical_declaration", "variable_declaration"):
        return
    is_const = _text(declaration).startswith("const")
    for declarator in declaration.named_children:
        name = declarator.child_by_field_name("name")
        value = declarator.child_by_field_name("value")
        if declarator.type != "variable_declarator" or name is None or name.type != "identifier":
            continue
        if value is not None and value.type in _FUNCTION_VALUES:
            yield name, SymbolKind.FUNCTION, None
        elif is_const and _UPPER_CASE.fullmatch(_text(name)):
            yield name, SymbolKind.CONSTANT, None


def _go_receiver_type(method: Node) -> str:
    receiver = method.child_by_field_name("receiver")
    parameter = receiver.named_children[0] if receiver is not None and receiver.named_children else None
    node = parameter.child_by_field_name("type") if parameter is not None else None
    # Unwrap `*T`, `T[K]` and `*T[K]` down to the type's own name.
    while node is not None and node.type in ("pointer_type", "generic_type"):
        node = node.child_by_field_name("type") if node.type == "generic_type" else node.named_children[0]
    return _text(node)


def _go_specs(declaration: Node) -> Iterator[tuple[Node, Node]]:
    """(spec, span) pairs: a lone `const X = 1` spans its keyword; a grouped spec spans itself."""
    specs = [c for c in declaration.named_children if c.type in ("type_spec", "type_alias", "const_spec")]
    grouped = any(c.type == "(" for c in declaration.children)
    for spec in specs:
        yield spec, spec if grouped else declaration


def _go_type_kind(spec: Node) -> SymbolKind:
    type_node = spec.child_by_field_name("type")
    if type_node is not None and type_node.type == "interface_type":
        return SymbolKind.INTERFACE
    return SymbolKind.TYPE
