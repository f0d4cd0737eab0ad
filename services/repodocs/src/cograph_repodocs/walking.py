"""Walking a checkout on disk: every file discovery's rules (domain.discovery) take for a document,
read safely (opening.read_inside) and hashed, or skipped with the reason why. Never raises for a
bad file: a checkout is the repository's to shape.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from cograph_repodocs.domain.discovery import (
    MAX_PATH_BYTES,
    NOTHING_IGNORED,
    DiscoveredFile,
    DiscoveryResult,
    DocumentKind,
    GitIgnored,
    SkippedFile,
    classify,
    entered_directories,
    excluded_by,
    printable_path,
)
from cograph_repodocs.opening import NotReadable, read_inside


def _nothing(*_: object) -> None:
    """Nobody watches this walk."""


def walk(
    root: Path,
    max_file_bytes: int,
    ignored: GitIgnored = NOTHING_IGNORED,
    *,
    listed: Callable[[int], None] = _nothing,
    read: Callable[[], None] = _nothing,
) -> DiscoveryResult:
    """Classify and read every document under `root` that git does not ignore, in path order;
    never raises for a bad file. `listed` learns how many files will be read, `read` each one read."""
    root = root.resolve()
    files: list[DiscoveredFile] = []
    skipped: list[SkippedFile] = []
    matched: list[tuple[Path, str, DocumentKind]] = []

    def on_error(error: OSError) -> None:
        where = printable_path(_relative(root, Path(error.filename))) if error.filename else "."
        skipped.append(SkippedFile(path=where, reason=f"directory unreadable: {error.strerror}"))

    # followlinks=False: a symlinked directory is never entered, so no loops and no escapes.
    for current, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=False):
        base = Path(current)
        dirnames[:] = entered_directories(root, base, dirnames, ignored)
        for filename in sorted(filenames):
            relative = _relative(root, base / filename)
            if ignored.file(relative):
                continue
            kind = classify(relative)
            if kind is not None:
                matched.append((base / filename, relative, kind))
    listed(len(matched))
    for path, relative, kind in matched:
        outcome = _read(root, path, relative, kind, max_file_bytes)
        read()
        if isinstance(outcome, DiscoveredFile):
            files.append(outcome)
        else:
            skipped.append(outcome)
    return DiscoveryResult(
        files=sorted(files, key=lambda f: f.path), skipped=sorted(skipped, key=lambda s: s.path)
    )


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _read(
    root: Path, path: Path, relative: str, kind: DocumentKind, max_file_bytes: int
) -> DiscoveredFile | SkippedFile:
    def skip(reason: str) -> SkippedFile:
        return SkippedFile(path=relative, reason=reason)

    try:
        encoded = relative.encode()
    except UnicodeEncodeError:
        # Undecodable bytes in a file name survive as surrogates that nothing downstream can store.
        return SkippedFile(path=printable_path(relative), reason="file name is not valid UTF-8")
    if len(encoded) > MAX_PATH_BYTES:
        return skip(f"path longer than {MAX_PATH_BYTES} bytes")

    try:
        if path.is_symlink():
            try:
                target = path.resolve()
            except RuntimeError:  # Python 3.11 reports a symlink loop this way
                return skip("symlink loop")
            if not target.is_relative_to(root):
                return skip("symlink points outside the checkout")
            # The link is followed only where the walk itself would go: never into .git or node_modules.
            hidden = excluded_by(_relative(root, target))
            if hidden is not None:
                return skip(f"symlink points into {hidden}, which is not indexed")
            if not target.is_file():
                return skip("symlink target is missing or not a regular file")
        elif not path.is_file():
            return skip("not a regular file")
        # One byte past the limit tells "too large" without reading a huge file. What is opened
        # is checked again: the checkout may have changed since the checks above.
        raw, real = read_inside(root, path, max_file_bytes + 1)
    except NotReadable as refused:
        return skip(str(refused))
    except OSError as error:
        return skip(f"unreadable: {error.strerror or error}")
    if real is not None and real != relative and (hidden := excluded_by(real)) is not None:
        return skip(f"symlink points into {hidden}, which is not indexed")
    if len(raw) > max_file_bytes:
        return skip(f"larger than the {max_file_bytes}-byte limit")
    if b"\x00" in raw:
        return skip("binary file (contains a NUL byte)")
    try:
        # utf-8-sig: a leading byte-order mark is not part of the text.
        content = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return skip(f"not valid UTF-8 (invalid byte at offset {error.start})")
    return DiscoveredFile(
        path=relative,
        kind=kind,
        size_bytes=len(raw),
        content=content,
        content_hash=hashlib.sha256(raw).hexdigest(),
    )
