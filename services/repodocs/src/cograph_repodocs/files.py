"""Lines of a source file in a repository's checkout: the four graph languages only, never outside it."""

from __future__ import annotations

import errno
import posixpath
from pathlib import Path, PurePosixPath

import msgspec

from cograph_errors import InvalidArgument, NotFound
from cograph_repodocs.domain.discovery import excluded_by
from cograph_repodocs.domain.symbols import Language, language_for_path
from cograph_repodocs.git import Git
from cograph_repodocs.opening import NotReadable, read_inside

READABLE = ".py, .go, .ts, .tsx, .js, .jsx, .mjs, .cjs"
SYMLINK_MODE = "120000"  # a tree entry's mode when it is a symbolic link
MAX_SYMLINK_HOPS = 40  # as the kernel's limit (ELOOP)


class FileRange(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    language: Language
    start_line: int
    end_line: int
    total_lines: int
    content: str


def check_source_path(path: str) -> tuple[str, Language]:
    """A relative path inside the checkout, to a file of one of the four languages."""
    if not path or "\x00" in path:
        raise InvalidArgument("give the path of a file inside the repository")
    pure = PurePosixPath(path)
    if pure.is_absolute() or path.startswith("\\"):
        raise InvalidArgument(f"{path!r} is absolute: give a path relative to the repository root")
    if ".." in pure.parts:
        raise InvalidArgument(f"{path!r} leaves the repository: '..' is not allowed")
    if ".git" in pure.parts:
        raise InvalidArgument(f"{path!r} is inside .git, which holds no source files")
    # Nor in a directory discovery skips (dot-directories, node_modules, virtualenvs): nothing
    # there is indexed, and it may hold what is not the repository's own, such as the clones of
    # other repositories under a checkout's .cograph/.
    hidden = excluded_by(pure.as_posix())
    if hidden is not None:
        raise InvalidArgument(f"{path!r} is inside {hidden}, which is not indexed and cannot be read")
    language = language_for_path(path)
    if language is None:
        raise InvalidArgument(
            f"{path!r} cannot be read: only Python, Go, TypeScript and JavaScript files can ({READABLE})"
        )
    return pure.as_posix(), language


def read_range(root: Path, path: str, start_line: int, end_line: int, max_file_bytes: int) -> FileRange:
    """Lines start..end (1-based, inclusive; 0 = first / last). Blocking: run it in a thread."""
    relative, language = check_source_path(path)
    _check_range(start_line, end_line)
    try:
        data = _read_checkout_file(root.resolve(), relative, max_file_bytes)
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            raise InvalidArgument(
                f"the path is too long for the file system ({len(relative)} characters)"
            ) from None
        raise
    return _line_range(relative, language, data.decode(errors="replace"), start_line, end_line)


async def read_committed_range(
    git: Git, root: Path, commit: str, path: str, start_line: int, end_line: int, max_file_bytes: int
) -> FileRange:
    """As read_range, from the commit's own tree rather than the working tree: a managed
    checkout's working tree moves to the new tip when a sync starts, long before the index
    (and the commit a citation names) does."""
    relative, language = check_source_path(path)
    _check_range(start_line, end_line)
    text = await _committed_file(git, root, commit, relative, max_file_bytes)
    return _line_range(relative, language, text, start_line, end_line)


def _check_range(start_line: int, end_line: int) -> None:
    if start_line < 0 or end_line < 0:
        raise InvalidArgument("line numbers are 1-based; 0 means the first or the last line")
    if start_line and end_line and start_line > end_line:
        raise InvalidArgument(f"start_line ({start_line}) is after end_line ({end_line})")


def _line_range(relative: str, language: Language, text: str, start_line: int, end_line: int) -> FileRange:
    lines = split_lines(text)
    total = len(lines)
    if start_line > total:
        raise InvalidArgument(
            f"start_line {start_line} is past the end of {relative}, which "
            + (f"has {total} lines" if total else "is empty")
        )
    if total == 0:
        return FileRange(
            path=relative, language=language, start_line=0, end_line=0, total_lines=0, content=""
        )
    first = start_line or 1
    last = min(end_line or total, total)
    return FileRange(
        path=relative,
        language=language,
        start_line=first,
        end_line=last,
        total_lines=total,
        content="".join(lines[first - 1 : last]),
    )


def _read_checkout_file(root: Path, relative: str, max_file_bytes: int) -> bytes:
    target = root / relative
    if not target.exists() and not target.is_symlink():
        raise NotFound(f"{relative} does not exist in the checkout")
    try:
        resolved = target.resolve()
    except RuntimeError:  # Python 3.11 reports a symlink loop this way
        raise InvalidArgument(f"{relative} is a symlink loop") from None
    # A symlink may point anywhere on the host; only what lies inside the checkout is readable.
    if not resolved.is_relative_to(root):
        raise InvalidArgument(f"{relative} is a symlink to a file outside the checkout")
    # Nor into .git (its config can hold credentials) or an excluded directory, as discovery.
    hidden = excluded_by(resolved.relative_to(root).as_posix()) if resolved != target else None
    if hidden is not None:
        raise InvalidArgument(f"{relative} is a symlink into {hidden}, which cannot be read")
    if not resolved.is_file():
        raise NotFound(f"{relative} is not a file in the checkout")
    try:  # what is opened is checked again: the checkout may have changed since
        data, _ = read_inside(root, resolved, max_file_bytes + 1, follow=False)
    except NotReadable as refused:
        raise InvalidArgument(f"{relative} cannot be read: {refused}") from None
    if len(data) > max_file_bytes:
        raise InvalidArgument(f"{relative} is larger than the {max_file_bytes}-byte limit")
    return data


async def _committed_file(git: Git, root: Path, commit: str, relative: str, max_file_bytes: int) -> str:
    """The file's text at `commit`, its symlinks followed inside the commit's tree only."""
    path = relative
    for _ in range(MAX_SYMLINK_HOPS):
        # Literal: a path is never read as a pathspec pattern or magic such as ':(top)'.
        listed = await git.run("--literal-pathspecs", "-C", str(root), "ls-tree", "-z", commit, "--", path)
        entry, _, _ = listed.partition("\0")
        if not entry:
            raise NotFound(f"{relative} does not exist at the indexed commit")
        mode, kind, rest = entry.split(" ", 2)
        sha = rest.split("\t", 1)[0]
        if kind != "blob":
            raise NotFound(f"{relative} is not a file at the indexed commit")
        if mode != SYMLINK_MODE:
            if int(await git.run("-C", str(root), "cat-file", "-s", sha)) > max_file_bytes:
                raise InvalidArgument(f"{relative} is larger than the {max_file_bytes}-byte limit")
            return await git.run("-C", str(root), "cat-file", "blob", sha)
        target = await git.run("-C", str(root), "cat-file", "blob", sha)
        followed = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if target.startswith("/") or followed == ".." or followed.startswith("../"):
            raise InvalidArgument(f"{relative} is a symlink to a file outside the checkout")
        hidden = excluded_by(followed)
        if hidden is not None:
            raise InvalidArgument(f"{relative} is a symlink into {hidden}, which cannot be read")
        path = followed
    raise InvalidArgument(f"{relative} is a symlink loop")


def split_lines(text: str) -> list[str]:
    """Lines with their newline, split on `\\n` only, as editors and tree-sitter number them;
    a final newline does not start another line."""
    if not text:
        return []
    lines = [line + "\n" for line in text.split("\n")]
    # The last piece has no newline of its own: it is empty when the text ended with one.
    last = lines.pop()[:-1]
    if last:
        lines.append(last)
    return lines
