"""Code symbols via tree-sitter: exact qualified names, kinds and line spans per language."""

from __future__ import annotations

import pytest

from cograph_repodocs.domain.symbols import (
    Alias,
    Language,
    Symbol,
    SymbolKind,
    extract,
    extract_symbols,
    language_for_path,
    module_path,
)

FUNCTION = SymbolKind.FUNCTION
CLASS = SymbolKind.CLASS
METHOD = SymbolKind.METHOD
TYPE = SymbolKind.TYPE
INTERFACE = SymbolKind.INTERFACE
CONSTANT = SymbolKind.CONSTANT
VARIABLE = SymbolKind.VARIABLE
ATTRIBUTE = SymbolKind.ATTRIBUTE
PROPERTY = SymbolKind.PROPERTY


def summary(path: str, source: str) -> list[tuple[str, SymbolKind, int, int]]:
    return [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in extract_symbols(path, source)]


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a.py", Language.PYTHON),
        ("cmd/main.go", Language.GO),
        ("web/app.ts", Language.TYPESCRIPT),
        ("web/App.TSX", Language.TYPESCRIPT),
        ("a.js", Language.JAVASCRIPT),
        ("a.jsx", Language.JAVASCRIPT),
        ("a.mjs", Language.JAVASCRIPT),
        ("a.cjs", Language.JAVASCRIPT),
        ("a.pyi", Language.PYTHON),
        ("a.rb", None),
        ("Makefile", None),
    ],
)
def test_language_for_path(path: str, language: Language | None) -> None:
    assert language_for_path(path) == language


@pytest.mark.parametrize(
    ("path", "language", "module"),
    [
        (
            "services/repodocs/src/cograph_repodocs/domain/slugs.py",
            Language.PYTHON,
            "cograph_repodocs.domain.slugs",
        ),
        ("src/pkg/__init__.py", Language.PYTHON, "pkg"),
        ("tools/build.py", Language.PYTHON, "tools.build"),
        ("__init__.py", Language.PYTHON, ""),
        ("src/src/a.py", Language.PYTHON, "a"),
        ("src.py", Language.PYTHON, "src"),
        ("web/src/components/Button.tsx", Language.TYPESCRIPT, "components.Button"),
        ("web/src/lib/index.ts", Language.TYPESCRIPT, "lib"),
        ("index.js", Language.JAVASCRIPT, ""),
    ],
)
def test_module_path(path: str, language: Language, module: str) -> None:
    assert module_path(path, language) == module


PYTHON = '''\
"""Configuration loading."""

from __future__ import annotations

MAX_RETRIES = 3
DEFAULT_TIMEOUT: float = 2.5
_PRIVATE_LIMIT = 10
logger = get_logger()
a, B = 1, 2
T = TypeVar("T")


@cache
def load(path: str) -> Config:
    def helper() -> None:
        pass

    return Config()


async def fetch(url):
    return await get(url)


class Loader(Base):
    """Loads."""

    RETRIES = 1

    def __init__(self) -> None:
        self.x = 1

    @property
    def name(self) -> str:
        return "loader"

    class Options:
        def merged(self):
            return {}
'''


def test_python_symbols() -> None:
    assert summary("src/cograph/config/loader.py", PYTHON) == [
        ("cograph.config.loader.MAX_RETRIES", CONSTANT, 5, 5),
        ("cograph.config.loader.DEFAULT_TIMEOUT", CONSTANT, 6, 6),
        ("cograph.config.loader._PRIVATE_LIMIT", CONSTANT, 7, 7),
        ("cograph.config.loader.logger", VARIABLE, 8, 8),
        ("cograph.config.loader.load", FUNCTION, 13, 18),
        ("cograph.config.loader.fetch", FUNCTION, 21, 22),
        ("cograph.config.loader.Loader", CLASS, 25, 39),
        ("cograph.config.loader.Loader.RETRIES", ATTRIBUTE, 28, 28),
        ("cograph.config.loader.Loader.__init__", METHOD, 30, 31),
        ("cograph.config.loader.Loader.x", ATTRIBUTE, 31, 31),
        ("cograph.config.loader.Loader.name", PROPERTY, 33, 35),
        ("cograph.config.loader.Loader.Options", CLASS, 37, 39),
        ("cograph.config.loader.Loader.Options.merged", METHOD, 38, 39),
    ]


def test_python_symbols_declared_inside_if_try_and_with_blocks() -> None:
    """A fallback definition, a version check, TYPE_CHECKING: these declare at the level the
    block stands at, and were missed; a function's own locals are still not symbols."""
    source = (
        "try:\n"
        "    from functools import cache\n"
        "except ImportError:\n"
        "    def cache(f):\n"
        "        def wrapper(): ...\n"
        "        return f\n"
        "if sys.version_info >= (3, 11):\n"
        "    class Loader:\n"
        "        if DEBUG:\n"
        "            def trace(self): ...\n"
        "elif WINDOWS:\n"
        "    MAX_PATH = 260\n"
        "else:\n"
        "    MAX_PATH = 4096\n"
        "with suppress(ImportError):\n"
        "    def optional(): ...\n"
    )
    assert summary("pkg/compat.py", source) == [
        ("pkg.compat.cache", FUNCTION, 4, 6),
        ("pkg.compat.Loader", CLASS, 8, 10),
        ("pkg.compat.Loader.trace", METHOD, 10, 10),
        ("pkg.compat.MAX_PATH", CONSTANT, 12, 12),
        ("pkg.compat.MAX_PATH", CONSTANT, 14, 14),
        ("pkg.compat.optional", FUNCTION, 16, 16),
    ]


def test_a_symbol_carries_its_signature_line_and_file() -> None:
    symbols = {s.name: s for s in extract_symbols("src/cograph/config/loader.py", PYTHON)}
    assert symbols["load"] == Symbol(
        name="load",
        qualified_name="cograph.config.loader.load",
        kind=FUNCTION,
        language=Language.PYTHON,
        path="src/cograph/config/loader.py",
        start_line=13,
        end_line=18,
        signature="def load(path: str) -> Config:",
    )
    assert symbols["fetch"].signature == "async def fetch(url):"
    assert symbols["DEFAULT_TIMEOUT"].signature == "DEFAULT_TIMEOUT: float = 2.5"


def test_a_minified_bundle_gives_each_symbol_its_own_short_signature() -> None:
    # One 70 KB line: a signature that is "the line" would store the whole bundle per function.
    bundle = "".join(f"function fn{i}(a,b){{return a+b+{i}}}" for i in range(2000))
    bundle += "var add=function(x,y){return x+y};const K=[" + ",".join(map(str, range(500))) + "];"
    bundle += "class Queue{push(item){this.items.push(item)}}"

    symbols = {s.qualified_name: s for s in extract_symbols("public/js/app.min.js", bundle)}

    assert len(symbols) == 2000 + 4
    assert symbols["public.js.app.min.fn0"].signature == "function fn0(a,b)"
    assert symbols["public.js.app.min.fn1999"].signature == "function fn1999(a,b)"
    assert symbols["public.js.app.min.add"].signature == "add=function(x,y)"
    assert symbols["public.js.app.min.Queue"].signature == "class Queue"
    assert symbols["public.js.app.min.Queue.push"].signature == "push(item)"
    # A value without a body is cut before 200 characters, between two elements, and marked.
    assert symbols["public.js.app.min.K"].signature == "K=[" + ",".join(map(str, range(69))) + "…"


def test_a_long_declaration_line_is_cut_after_its_name_at_a_boundary() -> None:
    parameters = ", ".join(f"argument_{i}: int" for i in range(20))
    [symbol] = extract_symbols("a.py", f"def handle({parameters}) -> None:\n    pass\n")
    assert symbol.signature == "def handle(" + ", ".join(f"argument_{i}: int" for i in range(11)) + "…"


GO = """\
// Package server serves HTTP.
package server

import "net/http"

const DefaultPort = 8080

const (
	ModeDev, ModeProd = "dev", "prod"
	maxConns          = 100
)

type Server struct {
	addr string
}

type (
	Handler interface {
		Serve(w http.ResponseWriter)
	}
	ID = string
	Cache[K comparable, V any] map[K]V
)

var global = 1

func New(addr string) *Server {
	return &Server{addr: addr}
}

func (s *Server) Start() error {
	return nil
}

func (Server) stop() {}

func (c *Cache[K, V]) Get(key K) V {
	var zero V
	return zero
}
"""


def test_go_symbols() -> None:
    assert summary("internal/server/server.go", GO) == [
        ("internal.server.DefaultPort", CONSTANT, 6, 6),
        ("internal.server.ModeDev", CONSTANT, 9, 9),
        ("internal.server.ModeProd", CONSTANT, 9, 9),
        ("internal.server.maxConns", CONSTANT, 10, 10),
        ("internal.server.Server", TYPE, 13, 15),
        ("internal.server.Handler", INTERFACE, 18, 20),
        ("internal.server.ID", TYPE, 21, 21),
        ("internal.server.Cache", TYPE, 22, 22),
        ("internal.server.New", FUNCTION, 27, 29),
        ("internal.server.Server.Start", METHOD, 31, 33),
        ("internal.server.Server.stop", METHOD, 35, 35),
        ("internal.server.Cache.Get", METHOD, 37, 40),
    ]
    start = next(s for s in extract_symbols("internal/server/server.go", GO) if s.name == "Start")
    assert start.signature == "func (s *Server) Start() error {"


@pytest.mark.parametrize(
    ("path", "package", "qualified"),
    [
        ("cmd/cograph/main.go", "main", "cmd.cograph.main.Run"),
        ("main.go", "main", "main.Run"),
        ("pkg/v2/client.go", "client", "pkg.v2.client.Run"),
        ("pkg/store/store_test.go", "store_test", "pkg.store.store_test.Run"),
    ],
)
def test_go_package_path_adds_the_package_clause_when_it_differs_from_the_directory(
    path: str, package: str, qualified: str
) -> None:
    [symbol] = extract_symbols(path, f"package {package}\n\nfunc Run() {{}}\n")
    assert symbol.qualified_name == qualified


TYPESCRIPT = """\
import { api } from "./api";

export const MAX_RETRIES = 3;
export const defaultName = "x";
const API_URL: string = "https://example.com";
let COUNTER = 0;

export const fetchUser = async (id: string): Promise<User> => {
  return api.get(id);
};

export interface User {
  id: string;
}

export type UserId = string;

export enum Role {
  Admin,
}

export default function main(): void {}

export abstract class Repository<T> extends Base implements Store {
  static readonly LIMIT = 10;

  @Inject()
  async find(id: string): Promise<T> {
    return this.db.get(id);
  }

  handle = (event: Event) => {
    this.events.push(event);
  };

  private count = 0;
}

namespace Internal {
  export function hidden() {}
}
"""


def test_typescript_symbols() -> None:
    assert summary("web/src/data/repository.ts", TYPESCRIPT) == [
        ("data.repository.MAX_RETRIES", CONSTANT, 3, 3),
        ("data.repository.API_URL", CONSTANT, 5, 5),
        ("data.repository.fetchUser", FUNCTION, 8, 10),
        ("data.repository.User", INTERFACE, 12, 14),
        ("data.repository.UserId", TYPE, 16, 16),
        ("data.repository.Role", TYPE, 18, 20),
        ("data.repository.main", FUNCTION, 22, 22),
        ("data.repository.Repository", CLASS, 24, 37),
        ("data.repository.Repository.find", METHOD, 28, 30),
        ("data.repository.Repository.handle", METHOD, 32, 34),
    ]
    find = next(s for s in extract_symbols("web/src/data/repository.ts", TYPESCRIPT) if s.name == "find")
    assert find.signature == "async find(id: string): Promise<T> {"


INDEX = """\
import { Table as T, Row } from './table';
import { render } from 'react-dom';
export { Table, Column as Col } from './table/index.js';
export * from './widgets';
export { T, Row as Line, render };
export const version = 1;
export { version as VERSION };
export { Theme } from '../../../../outside';
"""


def test_a_typescript_index_re_exports_its_modules_names_as_the_package_api() -> None:
    # Packages (`react-dom`), `export *` and paths that leave the checkout are not followed.
    assert extract("web/src/ui/index.ts", INDEX).aliases == [
        Alias(name="ui.Table", target="ui.table.Table", public=True),
        Alias(name="ui.Col", target="ui.table.Column", public=True),
        Alias(name="ui.T", target="ui.table.Table", public=True),
        Alias(name="ui.Line", target="ui.table.Row", public=True),
        Alias(name="ui.VERSION", target="ui.version", public=True),
    ]


TSX = """\
export function Button({ label }: Props) {
  return <button>{label}</button>;
}

export const Card = () => <div className="card" />;
"""


def test_tsx_symbols() -> None:
    assert summary("web/src/components/Button.tsx", TSX) == [
        ("components.Button.Button", FUNCTION, 1, 3),
        ("components.Button.Card", FUNCTION, 5, 5),
    ]


JAVASCRIPT = """\
'use strict';

const DEFAULTS = { retries: 3 };
var legacy = function () {};

function* ids() {
  yield 1;
}

class Queue {
  #items = [];

  push(item) {
    this.#items.push(item);
  }

  #drain() {}

  get size() {
    return this.#items.length;
  }

  onEvent = () => {};
}

export default class {
  anonymous() {}
}

module.exports = { Queue };
"""


def test_javascript_symbols() -> None:
    assert summary("lib/queue.js", JAVASCRIPT) == [
        ("lib.queue.DEFAULTS", CONSTANT, 3, 3),
        ("lib.queue.legacy", FUNCTION, 4, 4),
        ("lib.queue.ids", FUNCTION, 6, 8),
        ("lib.queue.Queue", CLASS, 10, 24),
        ("lib.queue.Queue.push", METHOD, 13, 15),
        ("lib.queue.Queue.size", METHOD, 19, 21),
        ("lib.queue.Queue.onEvent", METHOD, 23, 23),
    ]


def test_jsx_uses_the_javascript_grammar() -> None:
    source = "export const App = () => <main><Header /></main>;\n"
    assert summary("src/App.jsx", source) == [("App.App", FUNCTION, 1, 1)]


def test_unsupported_and_broken_sources_do_not_raise() -> None:
    assert extract_symbols("README.md", "# Title") == []
    # tree-sitter recovers from syntax errors; whatever it still recognises is kept.
    assert summary("a.py", "def ok():\n    pass\n\ndef broken(:\n") == [
        ("a.ok", FUNCTION, 1, 2),
        ("a.broken", FUNCTION, 4, 4),
    ]
    assert extract_symbols("a.go", b"\xff\xfe garbage {{{") == []
