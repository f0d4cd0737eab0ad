"""Documents with their chunks and links: the structs stored and read, and how wiki links name a
document."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Any

import msgspec

from cograph_collections.markdown import ChunkDraft, ParsedDocument
from cograph_collections.markdown.links import normalise_source_key, strip_markdown_suffix


class PreparedDocument(msgspec.Struct, frozen=True):
    """A document parsed and chunked, ready to be written."""

    source_key: str
    content: str
    content_hash: str
    size_bytes: int
    parsed: ParsedDocument
    chunks: Sequence[ChunkDraft]


class StoredDocument(msgspec.Struct, frozen=True):
    id: uuid.UUID
    collection_id: uuid.UUID
    source_key: str
    title: str | None
    content_hash: str
    size_bytes: int
    chunk_count: int
    created_at: dt.datetime
    updated_at: dt.datetime
    content: str = ""
    frontmatter: dict[str, Any] = msgspec.field(default_factory=dict)
    structure: dict[str, Any] = msgspec.field(default_factory=dict)
    word_count: int = 0
    line_count: int = 0


class DocumentText(msgspec.Struct, frozen=True):
    """A stored document's text, as re-chunking reads it."""

    id: uuid.UUID
    source_key: str
    content: str
    content_hash: str


class ContentMatch(msgspec.Struct, frozen=True):
    content_hash: str
    collection_id: uuid.UUID
    collection_name: str
    document_id: uuid.UUID
    source_key: str


class StoredLink(msgspec.Struct, frozen=True):
    text: str
    href: str
    line: int
    link_type: str
    anchor: str | None
    target_document_id: uuid.UUID | None


class StoredChunk(msgspec.Struct, frozen=True):
    id: uuid.UUID
    document_id: uuid.UUID
    collection_id: uuid.UUID
    chunk_index: int
    heading_path: list[str]
    heading_level: int
    section_anchor: str
    content: str
    start_line: int  # 1-based, inclusive: the document lines the chunk was cut from
    end_line: int
    embedding_model: str | None
    chunker_max_chars: int
    chunker_min_chars: int
    chunker_max_chunks: int
    source_key: str


class ChunkHit(msgspec.Struct, frozen=True):
    chunk: StoredChunk
    document_title: str
    score: float
    ranks: dict[str, int]


class EmbedStatus(msgspec.Struct, frozen=True):
    total: int
    embedded: int
    pending: int
    stale: int
    outdated_chunker: int
    model: str


def wiki_key(source_key: str) -> str:
    """How wiki links name a document: its path without .md/.mdx, casefolded."""
    return strip_markdown_suffix(normalise_source_key(source_key)).casefold()
