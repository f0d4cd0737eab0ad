"""Reading line ranges of checkout files: the four languages only, never outside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from cograph_errors import InvalidArgument, NotFound
from cograph_repodocs.domain.symbols import Language
from cograph_repodocs.files import check_source_path, read_range, split_lines

LIMIT = 1000


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("one\ntwo\nthree\n")
    (root / "pkg" / "empty.go").write_text("")
    (root / "pkg" / "big.js").write_text("x" * (LIMIT + 1))
    (root / "pkg" / "inside.ts").symlink_to(root / "pkg" / "mod.py")
    (tmp_path / "outside.py").write_text("secret\n")
    (root / "pkg" / "outside.py").symlink_to(tmp_path / "outside.py")
    (root / "pkg" / "dangling.py").symlink_to(root / "pkg" / "nothing.py")
    (root / "pkg" / "loop.py").symlink_to(root / "pkg" / "loop.py")
    # .git/config can hold the clone URL's credentials.
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[remote]\n\turl = https://user:token@example.com/r.git\n")
    (root / "pkg" / "settings.py").symlink_to("../.git/config")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("module.exports = {}\n")
    (root / "pkg" / "vendored.js").symlink_to("../node_modules/pkg/index.js")
    return root


def test_ranges_default_clamp_and_keep_newlines(checkout: Path) -> None:
    whole = read_range(checkout, "pkg/mod.py", 0, 0, LIMIT)
    assert (whole.content, whole.start_line, whole.end_line, whole.total_lines) == (
        "one\ntwo\nthree\n",
        1,
        3,
        3,
    )
    assert whole.language is Language.PYTHON
    middle = read_range(checkout, "pkg/mod.py", 2, 2, LIMIT)
    assert middle.content == "two\n"
    tail = read_range(checkout, "pkg/mod.py", 2, 99, LIMIT)
    assert (tail.content, tail.end_line) == ("two\nthree\n", 3)
    empty = read_range(checkout, "pkg/empty.go", 0, 0, LIMIT)
    assert (empty.content, empty.total_lines, empty.start_line) == ("", 0, 0)
    # A symlink whose target stays inside the checkout is read (with the link's language).
    linked = read_range(checkout, "pkg/inside.ts", 1, 1, LIMIT)
    assert (linked.content, linked.language) == ("one\n", Language.TYPESCRIPT)


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("pkg/outside.py", InvalidArgument, "symlink to a file outside the checkout"),
        ("pkg/missing.py", NotFound, "does not exist"),
        ("pkg/dangling.py", NotFound, "is not a file"),
        ("pkg/big.js", InvalidArgument, "larger than the 1000-byte limit"),
        ("pkg/settings.py", InvalidArgument, "is a symlink into .git, which cannot be read"),
        ("pkg/vendored.js", InvalidArgument, "is a symlink into node_modules, which cannot be read"),
        ("pkg/loop.py", InvalidArgument, "is a symlink loop"),
        pytest.param(
            "pkg/" + "x" * 5000 + ".py", InvalidArgument, "too long for the file system", id="5000-characters"
        ),
    ],
)
def test_refusals_on_disk(checkout: Path, path: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        read_range(checkout, path, 0, 0, LIMIT)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "give the path"),
        ("/etc/passwd.py", "is absolute"),
        ("../x.py", "'..' is not allowed"),
        ("a/../../x.py", "'..' is not allowed"),
        (".git/hooks/x.py", "inside .git"),
        # Directories discovery skips: what is in them is not the repository's own code (a
        # checkout's .cograph/ holds the clones of other, maybe private, repositories).
        (".cograph/checkouts/other/app/settings.py", "inside .cograph, which is not indexed"),
        ("web/node_modules/pkg/index.js", "inside node_modules, which is not indexed"),
        (".venv/lib/conf.py", "inside .venv, which is not indexed"),
        ("README.md", "only Python, Go, TypeScript and JavaScript"),
        ("Dockerfile", "only Python"),
        ("a\x00.py", "give the path"),
    ],
)
def test_refused_paths(path: str, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        check_source_path(path)


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [(3, 2, "is after end_line"), (-1, 0, "1-based"), (0, -2, "1-based"), (4, 0, "past the end")],
)
def test_bad_ranges(checkout: Path, start: int, end: int, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        read_range(checkout, "pkg/mod.py", start, end, LIMIT)


def test_a_line_of_an_empty_file_is_past_its_end(checkout: Path) -> None:
    # As line 4 of a three-line file: the whole (empty) file is still readable.
    past = r"start_line 1 is past the end of pkg/empty\.go, which is empty"
    with pytest.raises(InvalidArgument, match=past):
        read_range(checkout, "pkg/empty.go", 1, 1, LIMIT)


def test_split_lines_counts_like_an_editor() -> None:
    assert split_lines("") == []
    assert split_lines("a") == ["a"]
    assert split_lines("a\n") == ["a\n"]
    assert split_lines("a\nb") == ["a\n", "b"]
    assert split_lines("a\n\n") == ["a\n", "\n"]
    assert split_lines("a\r\nb\x0cc\n") == ["a\r\n", "b\x0cc\n"]  # only \n ends a line
