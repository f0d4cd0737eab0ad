"""The code-symbol step of a sync, without I/O to the database: which source files changed since the
last sync (by content hash), their symbols, and how the stored nodes map onto them.

A symbol that is still in its file after an edit keeps its node id, matched by
(qualified name, kind) in source order, so the doc chunks that mention it stay linked
and its vector is reused when its signature did not change.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections import defaultdict, deque
from pathlib import Path

import msgspec

from cograph_embeddings import ModelInfo
from cograph_repodocs.application.progress import SyncProgress
from cograph_repodocs.domain.discovery import MAX_PATH_BYTES, NOTHING_IGNORED, GitIgnored, entered_directories
from cograph_repodocs.domain.symbols import (
    EMBEDDED_KINDS,
    Alias,
    Symbol,
    extract,
    language_for_path,
    python_modules,
)
from cograph_repodocs.opening import NotReadable, read_inside
from cograph_repodocs.stores.code import NewNode, StoredNode
from cograph_repodocs.stores.syncs import Skipped

# Names and qualified names are btree keys (PostgreSQL rows of at most about 2.7 KB); no real
# identifier comes near this, generated or minified code might.
MAX_NAME_BYTES = 1024
# Part of every stored file hash: a file is parsed again when what is extracted from it changes
# (this version), or its import path, or whether a .py beside a .pyi stub defines its names.
EXTRACTION = "symbols-2"


class ParsedFile(msgspec.Struct, frozen=True):
    path: str
    content_hash: str
    symbols: list[Symbol]
    aliases: list[Alias] = msgspec.field(default_factory=list)


class CodeScan(msgspec.Struct, frozen=True, kw_only=True):
    hashes: dict[str, str]
    """Every source file of the checkout in the four languages, with its content hash."""
    parsed: list[ParsedFile]
    """The files whose hash differs from the stored one (new or changed), parsed."""
    deleted: list[str]
    """Stored files that are gone (or now skipped)."""
    skipped: list[Skipped]


class NodePlan(msgspec.Struct, frozen=True, kw_only=True):
    inserts: list[NewNode]
    updates: list[NewNode]
    deletes: list[uuid.UUID]
    to_embed: list[NewNode]
    """Inserted nodes, and updated ones whose embedding text changed or whose vector came from another
    model or dimension."""


def scan_code(
    root: Path,
    stored: dict[str, str],
    max_file_bytes: int,
    ignored: GitIgnored = NOTHING_IGNORED,
    progress: SyncProgress | None = None,
) -> CodeScan:
    """Hash every source file under `root` and parse those that changed. Blocking: run it in a thread."""
    progress = progress or SyncProgress()
    root = root.resolve()  # what is opened is checked to lie inside it
    hashes: dict[str, str] = {}
    parsed: list[ParsedFile] = []
    skipped: list[Skipped] = []
    files = _source_files(root, ignored)
    progress.listed(len(files))
    relatives = [relative for relative, _ in files]
    modules = python_modules(relatives)
    present = set(relatives)
    for relative, path in files:
        progress.read()
        if len(relative.encode()) > MAX_PATH_BYTES:
            skipped.append(
                Skipped(relative, f"not parsed for symbols: path longer than {MAX_PATH_BYTES} bytes")
            )
            continue
        try:
            if path.is_symlink():
                # A link would index the same code twice, or code from outside the checkout.
                skipped.append(Skipped(relative, "not parsed for symbols: a symlink"))
                continue
            if not path.is_file():
                # Opening a FIFO would block the sync forever.
                skipped.append(Skipped(relative, "not parsed for symbols: not a regular file"))
                continue
            # Checked again once opened: the checkout may have changed since.
            data, _ = read_inside(root, path, max_file_bytes + 1, follow=False)
        except NotReadable as refused:
            skipped.append(Skipped(relative, f"not parsed for symbols: {refused}"))
            continue
        except OSError as error:
            skipped.append(
                Skipped(relative, f"not parsed for symbols: unreadable: {error.strerror or error}")
            )
            continue
        if len(data) > max_file_bytes:
            skipped.append(
                Skipped(relative, f"not parsed for symbols: larger than the {max_file_bytes}-byte limit")
            )
            continue
        if b"\x00" in data:
            skipped.append(Skipped(relative, "not parsed for symbols: binary file (contains a NUL byte)"))
            continue
        module = modules.get(relative)
        # A stub beside its module describes it: the module's definitions are the symbols, the
        # stub adds only what it re-exports. A stub alone (an extension module) is the definition.
        shadowed = relative.endswith(".pyi") and relative[:-1] in present
        context = f"{EXTRACTION}\0{module}\0{shadowed}\0".encode()
        content_hash = hashlib.sha256(context + data).hexdigest()
        hashes[relative] = content_hash
        if stored.get(relative) != content_hash:
            extracted = extract(relative, data, module)
            symbols = [] if shadowed else extracted.symbols
            kept = [
                s
                for s in symbols
                if max(len(s.name.encode()), len(s.qualified_name.encode())) <= MAX_NAME_BYTES
            ]
            if len(kept) < len(symbols):
                dropped = len(symbols) - len(kept)
                skipped.append(
                    Skipped(
                        relative, f"{dropped} symbol(s) with a name over {MAX_NAME_BYTES} bytes not indexed"
                    )
                )
            aliases = [
                a
                for a in extracted.aliases
                if max(len(a.name.encode()), len(a.target.encode())) <= MAX_NAME_BYTES
            ]
            parsed.append(ParsedFile(relative, content_hash, kept, aliases))
    deleted = sorted(set(stored) - set(hashes))
    return CodeScan(hashes=hashes, parsed=parsed, deleted=deleted, skipped=skipped)


def _source_files(root: Path, ignored: GitIgnored) -> list[tuple[str, Path]]:
    """(relative POSIX path, path) of the four languages' files, excluded and ignored directories pruned."""
    found: list[tuple[str, Path]] = []
    for current, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(current)
        dirnames[:] = entered_directories(root, base, dirnames, ignored)
        for name in sorted(filenames):
            path = base / name
            relative = path.relative_to(root).as_posix()
            if language_for_path(relative) is None or ignored.file(relative):
                continue
            try:
                relative.encode()
            except UnicodeEncodeError:
                continue  # a name no column can store; discovery reports such names for documents
            found.append((relative, path))
    return found


def embedding_text(qualified_name: str, kind: str, signature: str) -> str:
    """What a code node's vector is made from: enough to find it by meaning, cheap to recompute."""
    return f"{qualified_name} {kind} {signature}"


def plan_nodes(parsed: list[ParsedFile], existing: list[StoredNode], model: ModelInfo) -> NodePlan:
    """Map the stored nodes of the changed files onto their new symbols."""
    pool: dict[tuple[str, str, str], deque[StoredNode]] = defaultdict(deque)
    for stored in existing:  # in (path, start_line) order
        pool[(stored.path, stored.qualified_name, stored.kind.value)].append(stored)
    inserts: list[NewNode] = []
    updates: list[NewNode] = []
    to_embed: list[NewNode] = []
    for file in parsed:
        for symbol in file.symbols:
            candidates = pool.get((symbol.path, symbol.qualified_name, symbol.kind.value))
            if candidates:
                old = candidates.popleft()
                node = NewNode(old.id, symbol)
                updates.append(node)
                stale = old.signature != symbol.signature or not old.embedded_by(model)
            else:
                node = NewNode(uuid.uuid4(), symbol)
                inserts.append(node)
                stale = True
            if stale and symbol.kind in EMBEDDED_KINDS:
                to_embed.append(node)
    deletes = [stored.id for left in pool.values() for stored in left]
    return NodePlan(inserts=inserts, updates=updates, deletes=deletes, to_embed=to_embed)
