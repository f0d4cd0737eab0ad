"""Markdown parsing and chunking for collections: pure functions, no I/O."""

from cograph_collections.markdown.chunker import MarkdownChunker, TooManyChunksError
from cograph_collections.markdown.links import (
    classify_href,
    link_target_key,
    normalise_source_key,
    validate_source_key,
    wiki_target_matches,
)
from cograph_collections.markdown.model import (
    Block,
    ChunkDraft,
    ChunkerParams,
    CodeBlock,
    Heading,
    Link,
    LinkType,
    ParsedDocument,
    Table,
)
from cograph_collections.markdown.parser import parse_markdown
from cograph_collections.markdown.structure import TooManyTableCellsError

__all__ = [
    "Block",
    "ChunkDraft",
    "ChunkerParams",
    "CodeBlock",
    "Heading",
    "Link",
    "LinkType",
    "MarkdownChunker",
    "ParsedDocument",
    "Table",
    "TooManyChunksError",
    "TooManyTableCellsError",
    "classify_href",
    "link_target_key",
    "normalise_source_key",
    "parse_markdown",
    "validate_source_key",
    "wiki_target_matches",
]
