"""Which files of a checkout are repository documents: `classify` is the spec's rule table for one
path, and the directories a walk of a checkout never enters. Walking a checkout on disk, by these
rules, is `cograph_repodocs.walking`'s.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path, PurePosixPath

import msgspec


class DocumentKind(StrEnum):
    REPO_DOC = "repo_doc"
    WORKFLOW = "workflow"
    EXAMPLE = "example"
    TEST = "test"
    CONFIG = "config"


class DiscoveredFile(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    """POSIX path relative to the checkout root."""
    kind: DocumentKind
    size_bytes: int
    content: str
    content_hash: str
    """sha256 hex of the file's bytes as stored."""


class SkippedFile(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    reason: str


class DiscoveryResult(msgspec.Struct, frozen=True, kw_only=True):
    files: list[DiscoveredFile]
    skipped: list[SkippedFile]


# Exclusions are exact, case-sensitive directory names: tools create them spelled this way.
EXCLUDED_DIRS = frozenset(
    {
        "node_modules",
        "dist",
        "build",
        "venv",
        ".venv",
        "__pycache__",
        ".cograph",
        ".cache",
        ".tox",
        ".idea",
        ".vscode",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
ALLOWED_DOT_DIRS = frozenset({".devcontainer", ".github"})

DOC_EXTENSIONS = frozenset({".md", ".mdx", ".rst"})
EXAMPLE_EXTENSIONS = frozenset(
    {".go", ".py", ".ts", ".tsx", ".js", ".json", ".toml", ".yaml", ".yml"} | DOC_EXTENSIONS
)
EXAMPLE_SEGMENTS = frozenset({"example", "examples", "sample", "samples"})
TEST_SEGMENTS = frozenset({"test", "tests"})
# "Test-ish" = the source extensions of the four graph languages.
TEST_SOURCE_EXTENSIONS = frozenset({".py", ".go", ".ts", ".tsx", ".js"})
ROOT_CONFIG_FILES = frozenset(
    {
        "Dockerfile",
        "Makefile",
        "docker-compose.yml",
        "docker-compose.yaml",
        "compose.yml",
        "compose.yaml",
        "go.mod",
        "go.work",
        "package.json",
        "package-lock.json",
        "pyproject.toml",
    }
)
DEPLOY_DIRS = frozenset({"deploy", "deployment", "helm", "k8s", "ops", ".devcontainer"})
DEPLOY_EXTENSIONS = frozenset({".cfg", ".conf", ".ini", ".json", ".toml", ".yaml", ".yml"})
YAML_EXTENSIONS = frozenset({".yml", ".yaml"})


class GitIgnored(msgspec.Struct, frozen=True):
    """What git ignores under a checkout path, as `git ls-files --others --ignored
    --exclude-standard --directory` lists it relative to that path: files, and directories it
    ignores whole ending in '/'. A checkout path is read where it is; what its .gitignore keeps
    out of the repository (a local .env, a built site, a virtualenv under any name) is not the
    repository's, and a managed clone, cleaned with `git clean -ffdx`, never holds it either."""

    paths: frozenset[str] = frozenset()

    def directory(self, relative: str) -> bool:
        return f"{relative}/" in self.paths

    def file(self, relative: str) -> bool:
        return relative in self.paths


NOTHING_IGNORED = GitIgnored()


def is_excluded_dir(name: str) -> bool:
    """Whether a directory of this name is never walked nor ingested."""
    if name in ALLOWED_DOT_DIRS:
        return False
    return name.startswith(".") or name in EXCLUDED_DIRS


def entered_directories(root: Path, base: Path, names: list[str], ignored: GitIgnored) -> list[str]:
    """The subdirectories of `base` (under `root`) that a walk of the checkout enters, in name
    order: neither excluded by name nor ignored by git. Documents and code are walked alike."""
    return sorted(
        name
        for name in names
        if not is_excluded_dir(name) and not ignored.directory((base / name).relative_to(root).as_posix())
    )


def excluded_by(path: str) -> str | None:
    """What keeps `path` (POSIX, relative to the checkout root) out of the index: a `.git`
    (the directory, or the file a worktree or submodule has) or an excluded directory on it."""
    parts = PurePosixPath(path).parts
    if parts and parts[-1] == ".git":
        return ".git"
    return next((d for d in parts[:-1] if is_excluded_dir(d)), None)


def classify(path: str) -> DocumentKind | None:
    """The kind of the file at `path` (POSIX, relative to the checkout root), or None if not ingested."""
    pure = PurePosixPath(path)
    parts = pure.parts
    if not parts or pure.is_absolute() or ".." in parts:
        return None
    directories, name = parts[:-1], parts[-1]
    if excluded_by(path) is not None:
        return None
    # Extensions are compared case-insensitively: README.MD is still markdown.
    suffix = pure.suffix.lower()
    folded_dirs = {d.lower() for d in directories}

    if suffix in DOC_EXTENSIONS:
        return DocumentKind.REPO_DOC
    if directories == (".github", "workflows") and suffix in YAML_EXTENSIONS:
        return DocumentKind.WORKFLOW
    # Whole directory segments only: "examples_util/" is not an examples directory.
    if folded_dirs & EXAMPLE_SEGMENTS and suffix in EXAMPLE_EXTENSIONS:
        return DocumentKind.EXAMPLE
    if _is_test(folded_dirs, name, suffix):
        return DocumentKind.TEST
    if _is_config(directories, name, suffix):
        return DocumentKind.CONFIG
    return None


def _is_test(folded_dirs: set[str], name: str, suffix: str) -> bool:
    # Go keeps x_test.go beside the code, so a test-named file itself satisfies
    # "a path containing test"; a test/tests directory does too.
    test_named = suffix in TEST_SOURCE_EXTENSIONS and (name.startswith("test_") or name.endswith("_test.go"))
    in_test_dir = bool(folded_dirs & TEST_SEGMENTS)
    # The doc-extension arm can never fire: Repo Doc already took every doc file.
    return test_named or (in_test_dir and suffix in DOC_EXTENSIONS)


def _is_config(directories: tuple[str, ...], name: str, suffix: str) -> bool:
    if not directories and name in ROOT_CONFIG_FILES:
        return True
    if name.startswith(".env"):
        return True
    return bool(directories) and directories[0] in DEPLOY_DIRS and suffix in DEPLOY_EXTENSIONS


# PostgreSQL's btree index rows hold at most about 2.7 KB: a longer path could not be stored,
# and would fail every sync. Real paths are far shorter.
MAX_PATH_BYTES = 1024


def printable_path(relative: str) -> str:
    """A path that can be stored: bytes that are not UTF-8 (kept as surrogates) shown as \\x escapes."""
    return relative.encode(errors="surrogateescape").decode(errors="backslashreplace")
