"""The spec's discovery table, row by row, and walking a real checkout on disk."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cograph_repodocs.checkouts import Checkouts
from cograph_repodocs.domain.discovery import (
    EXCLUDED_DIRS,
    NOTHING_IGNORED,
    DiscoveredFile,
    DocumentKind,
    SkippedFile,
    classify,
)
from cograph_repodocs.git import Git
from cograph_repodocs.walking import walk

DOC = DocumentKind.REPO_DOC
WORKFLOW = DocumentKind.WORKFLOW
EXAMPLE = DocumentKind.EXAMPLE
TEST = DocumentKind.TEST
CONFIG = DocumentKind.CONFIG

CASES: list[tuple[str, DocumentKind | None]] = [
    # Repo Doc: .md, .mdx, .rst anywhere, any case of extension.
    ("README.md", DOC),
    ("docs/guide/intro.mdx", DOC),
    ("docs/api.rst", DOC),
    ("CHANGELOG.MD", DOC),
    ("notes.markdown", None),
    ("notes.txt", None),
    # Rule order: Repo Doc wins over Test, Example and Config.
    ("tests/README.md", DOC),
    ("examples/README.md", DOC),
    ("deploy/NOTES.md", DOC),
    (".github/ISSUE_TEMPLATE/bug.md", DOC),
    (".github/workflows/README.md", DOC),
    # Workflow: .yml/.yaml directly under the root .github/workflows/.
    (".github/workflows/ci.yml", WORKFLOW),
    (".github/workflows/release.yaml", WORKFLOW),
    (".github/workflows/nested/ci.yml", None),
    (".github/ci.yml", None),
    (".github/workflows/ci.json", None),
    ("sub/.github/workflows/ci.yml", None),
    (".github/ISSUE_TEMPLATE/config.yml", None),
    # Example: a whole directory segment example(s)/sample(s), case-insensitive, listed extension.
    ("examples/foo.py", EXAMPLE),
    ("examples/foo.rb", None),
    ("example/main.go", EXAMPLE),
    ("pkg/samples/app.tsx", EXAMPLE),
    ("sample/config.toml", EXAMPLE),
    ("Examples/demo.js", EXAMPLE),
    ("examples/deep/nested/data.json", EXAMPLE),
    ("examples/settings.yaml", EXAMPLE),
    ("examples_util/foo.py", None),
    ("my-examples/foo.py", None),
    ("example.py", None),
    ("examples/test_demo.py", EXAMPLE),
    # Test: test_* with a graph-language extension, or *_test.go; a tests dir alone is not enough.
    ("tests/test_x.py", TEST),
    ("test_x.py", TEST),
    ("pkg/server/x_test.go", TEST),
    ("x_test.go", TEST),
    ("pkg/x_test.py", None),
    ("tests/x_test.py", None),
    ("tests/helpers.py", None),
    ("src/test_utils.ts", TEST),
    ("web/test_app.tsx", TEST),
    ("web/test_app.js", TEST),
    ("tests/test_data.json", None),
    ("web/app.test.ts", None),
    ("Test_x.py", None),
    # Config: named files only at the root.
    ("Dockerfile", CONFIG),
    ("services/api/Dockerfile", None),
    ("Makefile", CONFIG),
    ("sub/Makefile", None),
    ("docker-compose.yml", CONFIG),
    ("docker-compose.yaml", CONFIG),
    ("compose.yml", CONFIG),
    ("compose.yaml", CONFIG),
    ("go.mod", CONFIG),
    ("go.work", CONFIG),
    ("package.json", CONFIG),
    ("web/package.json", None),
    ("package-lock.json", CONFIG),
    ("pyproject.toml", CONFIG),
    ("libs/x/pyproject.toml", None),
    ("go.sum", None),
    ("Dockerfile.dev", None),
    # Config: any .env* anywhere.
    (".env", CONFIG),
    (".env.local", CONFIG),
    ("services/api/.env.example", CONFIG),
    (".envrc", CONFIG),
    # Config: listed extensions anywhere under a top-level deploy directory.
    ("deploy/values.yaml", CONFIG),
    ("deploy/sub/values.yaml", CONFIG),
    ("deployment/app.conf", CONFIG),
    ("helm/chart/templates/service.yaml", CONFIG),
    ("k8s/overlays/prod/kustomization.yml", CONFIG),
    ("ops/settings.ini", CONFIG),
    ("ops/setup.cfg", CONFIG),
    ("ops/settings.toml", CONFIG),
    ("deploy/grafana.json", CONFIG),
    (".devcontainer/devcontainer.json", CONFIG),
    ("deploy/run.sh", None),
    ("services/deploy/values.yaml", None),
    ("Deploy/values.yaml", None),
    # Nothing else.
    ("src/main.py", None),
    ("main.go", None),
    (".gitignore", None),
    ("LICENSE", None),
]

EXCLUSION_CASES: list[tuple[str, DocumentKind | None]] = [
    *[(f"{directory}/README.md", None) for directory in sorted(EXCLUDED_DIRS)],
    *[(f"pkg/{directory}/README.md", None) for directory in sorted(EXCLUDED_DIRS)],
    ("node_modules/lib/README.md", None),
    ("web/node_modules/lib/README.md", None),
    ("a/b/c/node_modules/d/e/CHANGELOG.md", None),
    ("examples/node_modules/x/demo.js", None),
    (".git/README.md", None),
    (".hidden/README.md", None),
    ("docs/.vuepress/config.md", None),
    (".github/README.md", DOC),
    (".devcontainer/README.md", DOC),
    ("docs/.github/README.md", DOC),
    # Only directories are excluded; a file named like one is not.
    ("build.md", DOC),
    ("docs/node_modules.md", DOC),
    # Exclusions are exact names.
    ("Build/README.md", DOC),
    ("builder/README.md", DOC),
]


@pytest.mark.parametrize(("path", "expected"), CASES + EXCLUSION_CASES)
def test_classify(path: str, expected: DocumentKind | None) -> None:
    assert classify(path) == expected


@pytest.mark.parametrize("path", ["", "/etc/README.md", "../README.md", "docs/../../README.md"])
def test_classify_rejects_paths_outside_the_checkout(path: str) -> None:
    assert classify(path) is None


def write(root: Path, relative: str, data: bytes | str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def test_walk_reads_classified_files_in_path_order(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "# Hello\n")
    write(tmp_path, "docs/b.md", "b")
    write(tmp_path, "docs/a/z.md", "z")
    write(tmp_path, "Dockerfile", "FROM scratch\n")
    write(tmp_path, "src/main.py", "print()\n")

    result = walk(tmp_path, max_file_bytes=1000)

    assert [(f.path, f.kind) for f in result.files] == [
        ("Dockerfile", CONFIG),
        ("README.md", DOC),
        ("docs/a/z.md", DOC),
        ("docs/b.md", DOC),
    ]
    readme = result.files[1]
    assert readme == DiscoveredFile(
        path="README.md",
        kind=DOC,
        size_bytes=8,
        content="# Hello\n",
        content_hash=hashlib.sha256(b"# Hello\n").hexdigest(),
    )
    assert result.skipped == []


def test_walk_skips_bad_files_with_a_reason(tmp_path: Path) -> None:
    write(tmp_path, "big.md", "x" * 101)
    write(tmp_path, "exact.md", "x" * 100)
    write(tmp_path, "binary.md", b"# title\x00\x01")
    write(tmp_path, "latin1.md", "café".encode("latin-1"))

    result = walk(tmp_path, max_file_bytes=100)

    assert [f.path for f in result.files] == ["exact.md"]
    assert result.skipped == [
        SkippedFile(path="big.md", reason="larger than the 100-byte limit"),
        SkippedFile(path="binary.md", reason="binary file (contains a NUL byte)"),
        SkippedFile(path="latin1.md", reason="not valid UTF-8 (invalid byte at offset 3)"),
    ]


def test_walk_strips_a_byte_order_mark_but_hashes_the_bytes(tmp_path: Path) -> None:
    raw = "\ufeff# Title\n".encode()
    write(tmp_path, "README.md", raw)

    [found] = walk(tmp_path, max_file_bytes=100).files

    assert found.content == "# Title\n"
    assert found.content_hash == hashlib.sha256(raw).hexdigest()
    assert found.size_bytes == len(raw)


def test_walk_prunes_excluded_directories_without_entering_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "node_modules/pkg/README.md", "x")
    write(tmp_path, "web/node_modules/pkg/README.md", "x")
    write(tmp_path, ".git/README.md", "x")
    write(tmp_path, ".github/workflows/ci.yml", "on: push\n")
    listed: list[str] = []
    real_scandir = os.scandir

    def recording_scandir(path: str) -> Iterator[os.DirEntry[str]]:
        listed.append(Path(path).relative_to(tmp_path).as_posix())
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", recording_scandir)  # os.walk lists each directory with it

    result = walk(tmp_path, max_file_bytes=100)

    assert [f.path for f in result.files] == [".github/workflows/ci.yml"]
    assert sorted(listed) == [".", ".github", ".github/workflows", "web"]


def test_walk_does_not_follow_symlinks_out_of_the_checkout(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    checkout = tmp_path / "checkout"
    write(outside, "secret.md", "secret")
    write(outside, "dir/inner.md", "inner")
    write(checkout, "real.md", "real")
    (checkout / "leak.md").symlink_to(outside / "secret.md")
    (checkout / "linked-dir").symlink_to(outside / "dir")
    (checkout / "alias.md").symlink_to(checkout / "real.md")
    (checkout / "broken.md").symlink_to(checkout / "missing.md")
    (checkout / "loop").symlink_to(checkout)
    (checkout / "ping.md").symlink_to(checkout / "pong.md")
    (checkout / "pong.md").symlink_to(checkout / "ping.md")

    result = walk(checkout, max_file_bytes=100)

    assert [(f.path, f.content) for f in result.files] == [("alias.md", "real"), ("real.md", "real")]
    assert result.skipped == [
        SkippedFile(path="broken.md", reason="symlink target is missing or not a regular file"),
        SkippedFile(path="leak.md", reason="symlink points outside the checkout"),
        SkippedFile(path="ping.md", reason="symlink loop"),
        SkippedFile(path="pong.md", reason="symlink loop"),
    ]


def test_walk_does_not_follow_symlinks_into_git_or_excluded_directories(tmp_path: Path) -> None:
    # .git/config can hold the clone URL's credentials; node_modules is not the repository's prose.
    write(tmp_path, ".git/config", "[remote]\n\turl = https://user:token@example.com/r.git\n")
    write(tmp_path, "node_modules/pkg/README.md", "# vendored\n")
    write(tmp_path, "docs/real.md", "real")
    write(tmp_path, "sub/.git", "gitdir: ../.git/modules/sub\n")
    (tmp_path / "notes.md").symlink_to(".git/config")
    (tmp_path / "vendored.md").symlink_to("node_modules/pkg/README.md")
    (tmp_path / "submodule.md").symlink_to("sub/.git")
    (tmp_path / "alias.md").symlink_to("docs/real.md")

    result = walk(tmp_path, max_file_bytes=1000)

    assert [f.path for f in result.files] == ["alias.md", "docs/real.md"]
    assert result.skipped == [
        SkippedFile(path="notes.md", reason="symlink points into .git, which is not indexed"),
        SkippedFile(path="submodule.md", reason="symlink points into .git, which is not indexed"),
        SkippedFile(path="vendored.md", reason="symlink points into node_modules, which is not indexed"),
    ]


def test_walk_records_unreadable_and_special_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.mkfifo(tmp_path / "pipe.md")  # reading it would block forever
    write(tmp_path, "private.md", "x")
    real_open = os.open

    def deny_private(path: str | os.PathLike[str], flags: int, *args: int) -> int:
        if Path(path).name == "private.md":  # as an unreadable file does (the tests run as root)
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", deny_private)

    result = walk(tmp_path, max_file_bytes=100)

    assert result.files == []
    assert result.skipped == [
        SkippedFile(path="pipe.md", reason="not a regular file"),
        SkippedFile(path="private.md", reason="unreadable: Permission denied"),
    ]


def test_walk_skips_file_names_that_are_not_utf8(tmp_path: Path) -> None:
    with open(os.fsencode(tmp_path) + b"/caf\xe9.md", "wb") as handle:  # a Latin-1 file name
        handle.write(b"x")

    result = walk(tmp_path, max_file_bytes=100)

    assert result.files == []
    assert result.skipped == [SkippedFile(path="caf\\xe9.md", reason="file name is not valid UTF-8")]


def test_walk_of_a_missing_root_reports_instead_of_raising(tmp_path: Path) -> None:
    result = walk(tmp_path / "absent", max_file_bytes=100)

    assert result.files == []
    assert result.skipped == [SkippedFile(path=".", reason="directory unreadable: No such file or directory")]


async def test_a_checkout_path_inside_a_repository_leaves_out_what_git_ignores_there(tmp_path: Path) -> None:
    """git lists what it ignores relative to the checkout path, which may be a folder of a
    repository, by the repository's .gitignore files at every level; a folder it ignores whole
    is not walked at all."""
    repository = tmp_path / "repo"
    write(repository, ".gitignore", "*.local.md\n")
    write(repository, "docs/.gitignore", "_build/\n")
    write(repository, "docs/guide.md", "# Guide\n")
    write(repository, "docs/guide.local.md", "# My copy\n")
    write(repository, "docs/_build/guide.md", "# Built\n")
    write(repository, "docs/api/_build/index.md", "# Built too\n")
    write(repository, "docs/api/index.md", "# API\n")
    git = Git(timeout_seconds=30)
    await git.run("init", "--quiet", str(repository))

    checkouts = Checkouts(git, tmp_path / "managed")
    ignored = await checkouts.ignored(repository / "docs")
    assert [f.path for f in walk(repository / "docs", max_file_bytes=100, ignored=ignored).files] == [
        "api/index.md",
        "guide.md",
    ]
    # Not a git working tree: nothing is ignored.
    plain = tmp_path / "plain"
    write(plain, ".gitignore", "*.md\n")
    write(plain, "a.md", "# A\n")
    assert await checkouts.ignored(plain) == NOTHING_IGNORED
    assert [f.path for f in walk(plain, max_file_bytes=100, ignored=NOTHING_IGNORED).files] == ["a.md"]
