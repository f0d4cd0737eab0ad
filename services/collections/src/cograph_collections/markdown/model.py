"""The parsed shape of a collection document and of its chunks.

All line numbers are 1-based lines of the original file, frontmatter included.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

LinkType = Literal["absolute", "anchor", "markdown", "relative", "wiki"]

# Top-level (root) blocks: the atomic units the chunker packs. A list is split
# into its top-level items; everything nested inside an item or a quote stays
# inside that block.
BlockKind = Literal[
    "paragraph",
    "heading",
    "fence",
    "indented_code",
    "html",
    "table",
    "list_item",
    "quote",
    "thematic_break",
]


class Heading(msgspec.Struct, frozen=True):
    level: int
    text: str  # plain text, inline markup removed
    anchor: str  # GitHub-style, -1/-2 suffixes on repeats within the document
    line: int


class CodeBlock(msgspec.Struct, frozen=True):
    language: str | None  # first word of the info string; None when absent or indented
    content: str  # the lines between the fences, without the final newline
    start_line: int  # the opening fence (or first code line of an indented block)
    end_line: int  # the closing fence (or last line the block runs to when unclosed)
    fenced: bool = True


class Table(msgspec.Struct, frozen=True):
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # padded or truncated to the header's width
    start_line: int  # the header row
    end_line: int  # the last body row (the delimiter row when there is none)


class Link(msgspec.Struct, frozen=True):
    text: str
    href: str  # as written (escapes and entities decoded), fragment included
    line: int
    link_type: LinkType
    anchor: str | None  # the #fragment, without '#'
    embed: bool = False  # an Obsidian ![[note]] transclusion


class Block(msgspec.Struct, frozen=True):
    kind: BlockKind
    start_line: int
    end_line: int  # last non-blank line of the block
    heading: int | None = None  # index into heading_tree for kind == "heading"


class ParsedDocument(msgspec.Struct, frozen=True):
    text: str  # the whole file, line endings normalised to \n, BOM removed
    body_start_line: int  # first line after the frontmatter (1 without frontmatter)
    frontmatter: dict[str, Any]
    title: str | None
    heading_tree: tuple[Heading, ...]
    code_blocks: tuple[CodeBlock, ...]
    tables: tuple[Table, ...]
    links: tuple[Link, ...]
    blocks: tuple[Block, ...]
    word_count: int  # whitespace-separated words of the body
    line_count: int  # lines of the whole file
    warnings: tuple[str, ...] = ()


class ChunkerParams(msgspec.Struct, frozen=True):
    max_chars: int
    min_chars: int
    max_chunks: int


class ChunkDraft(msgspec.Struct, frozen=True):
    chunk_index: int  # 0-based
    content: str  # the exact text of lines start_line..end_line
    heading_path: tuple[str, ...]
    heading_level: int  # level of the deepest heading of heading_path, 0 when empty
    section_anchor: str | None  # anchor of that heading, as in heading_tree
    start_line: int
    end_line: int
    params: ChunkerParams
