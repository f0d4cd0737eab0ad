"""The link step of a sync: identifiers in chunk text resolved to the repository's code nodes."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable

import msgspec

from cograph_repodocs.domain.mentions import RECEIVER_PREFIXES, find_mentions
from cograph_repodocs.domain.resolution import (
    Context,
    Node,
    Resolver,
    document_imports,
    heading_classes,
    heading_plurals,
    title_classes,
)
from cograph_repodocs.domain.symbols import Alias
from cograph_repodocs.stores.documents import MentionRow

# How many classes the text mentioned last stay context for a bare member name.
RECENT_CLASSES = 3


class ChunkText(msgspec.Struct, frozen=True):
    id: uuid.UUID
    path: str
    """The path of the chunk's document."""
    text: str
    chunk_index: int = 0
    heading_path: list[str] = msgspec.field(default_factory=list)


class Symbols:
    """The repository's code nodes and re-exports, as the resolver reads them."""

    def __init__(self, rows: Iterable[tuple[str, str, str, str, str]], aliases: Iterable[Alias] = ()) -> None:
        """`rows` are (node_id, name, qualified_name, path, kind)."""
        self.resolver = Resolver((Node(*row) for row in rows), aliases)


def link_chunks(chunks: Iterable[ChunkText], symbols: Symbols) -> list[MentionRow]:
    """One row per (chunk, code node, form) the chunk mentions, from its first such mention,
    with the reason it resolved there.

    A document's chunks are read in order, as a reader would: the imports in any of its code
    blocks, the classes its headings and its file name name, and the classes it mentioned last
    decide among members of one name. Blocking (regex over every chunk): run it in a thread.
    """
    resolver = symbols.resolver
    by_document: dict[str, list[ChunkText]] = defaultdict(list)
    for chunk in chunks:
        by_document[chunk.path].append(chunk)
    rows: list[MentionRow] = []
    for path, document in by_document.items():
        document.sort(key=lambda c: c.chunk_index)
        context = Context(
            path,
            document_imports("\n".join(c.text for c in document)),
            title_classes(path),
        )
        for chunk in document:
            context.heading_classes = heading_classes(chunk.heading_path)
            context.heading_plurals = heading_plurals(chunk.heading_path)
            linked: set[tuple[str, str]] = set()
            for mention in find_mentions(chunk.text):
                identifier = mention.text
                for prefix in RECEIVER_PREFIXES:
                    if identifier.startswith(prefix):
                        identifier = identifier[len(prefix) :]
                        break
                choice = resolver.resolve(
                    identifier,
                    target=mention.target,
                    marked=mention.marked,
                    context=context,
                    called=mention.called,
                )
                if choice is None:
                    continue
                for node_id in choice.node_ids:
                    if resolver.is_class(node_id):
                        recent = [c for c in context.recent_classes if c != node_id] + [node_id]
                        context.recent_classes = recent[-RECENT_CLASSES:]
                    if (node_id, mention.form.value) in linked:
                        continue
                    linked.add((node_id, mention.form.value))
                    rows.append(
                        MentionRow(
                            chunk.id,
                            uuid.UUID(node_id),
                            mention.form,
                            mention.text,
                            mention.start,
                            choice.reason,
                        )
                    )
    return rows
