"""The link step of a sync: identifiers in chunk text resolved to the repository's code nodes."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable

import msgspec

from cograph_repodocs.domain.mentions import ResolvedMention, SymbolIndex, find_mentions, resolve_mentions
from cograph_repodocs.stores.documents import MentionRow


class ChunkText(msgspec.Struct, frozen=True):
    id: uuid.UUID
    path: str
    """The path of the chunk's document."""
    text: str


class Symbols:
    """The repository's code nodes: the domain's index, and where each node is defined."""

    def __init__(self, rows: Iterable[tuple[str, str, str, str]]) -> None:
        """`rows` are (node_id, name, qualified_name, path)."""
        listed = list(rows)
        self.index = SymbolIndex((node_id, name, qualified) for node_id, name, qualified, _ in listed)
        self.paths = {node_id: path for node_id, _, _, path in listed}


def link_chunks(chunks: Iterable[ChunkText], symbols: Symbols) -> list[MentionRow]:
    """One row per (chunk, code node) the chunk mentions, with the form of its first mention.

    A name defined in the chunk's own file wins over the same name elsewhere: an example or
    a test (documents that are source files) calling `_env()` means its own `_env`, as
    Python's and Go's scoping would have it. Blocking (regex over every chunk): run it in a thread.
    """
    rows: list[MentionRow] = []
    for chunk in chunks:
        by_text: dict[str, list[ResolvedMention]] = defaultdict(list)
        for resolved in resolve_mentions(find_mentions(chunk.text), symbols.index):
            by_text[resolved.text].append(resolved)
        for candidates in by_text.values():
            local = [r for r in candidates if symbols.paths.get(r.code_node_key) == chunk.path]
            for resolved in local or candidates:
                rows.append(
                    MentionRow(
                        chunk.id,
                        uuid.UUID(resolved.code_node_key),
                        resolved.form,
                        resolved.text,
                        resolved.start,
                    )
                )
    return rows
