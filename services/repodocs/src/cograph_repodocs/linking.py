"""The link step of a sync: identifiers in chunk text resolved to the repository's code nodes."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from cograph_repodocs.document_store import MentionRow
from cograph_repodocs.domain.mentions import SymbolIndex, find_mentions, resolve_mentions


def link_chunks(chunks: Iterable[tuple[uuid.UUID, str]], index: SymbolIndex) -> list[MentionRow]:
    """One row per (chunk, code node) the chunk mentions, with the form of its first mention.

    Blocking (regex over every chunk): run it in a thread when there are many chunks.
    """
    rows: list[MentionRow] = []
    for chunk_id, text in chunks:
        for resolved in resolve_mentions(find_mentions(text), index):
            rows.append(MentionRow(chunk_id, uuid.UUID(resolved.code_node_key), resolved.form, resolved.text))
    return rows
