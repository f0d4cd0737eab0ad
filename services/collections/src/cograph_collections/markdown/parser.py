"""parse_markdown: frontmatter, then the body's structure from one pass of pulldown-cmark."""

from __future__ import annotations

from typing import Any

from cograph_collections.markdown.frontmatter import split_frontmatter
from cograph_collections.markdown.model import ParsedDocument
from cograph_collections.markdown.structure import Structure


def normalise_text(text: str) -> str:
    """Line endings to \\n (CommonMark treats \\r\\n and \\r as line endings), BOM dropped."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _frontmatter_title(frontmatter: dict[str, Any]) -> str | None:
    title = frontmatter.get("title")
    if isinstance(title, str | int | float) and not isinstance(title, bool):
        cleaned = " ".join(str(title).split())
        return cleaned or None
    return None


def parse_markdown(text: str) -> ParsedDocument:
    """Parse one collection document. Never raises on malformed markdown or YAML; raises
    TooManyTableCellsError for tables that would grow far beyond the text (see structure.py)."""
    text = normalise_text(text)
    frontmatter = split_frontmatter(text)
    body = text[frontmatter.body_offset :]
    structure = Structure(body, frontmatter.body_start + 1)
    headings = structure.headings
    # a final newline ends the last line rather than starting one
    line_count = text.count("\n") + (1 if text and not text.endswith("\n") else 0)

    title = _frontmatter_title(frontmatter.data)
    if title is None:
        title = next((heading.text for heading in headings if heading.level == 1 and heading.text), None)

    return ParsedDocument(
        text=text,
        body_start_line=frontmatter.body_start + 1,
        frontmatter=frontmatter.data,
        title=title,
        heading_tree=tuple(headings),
        code_blocks=tuple(structure.code_blocks),
        tables=tuple(structure.tables),
        links=tuple(structure.links),
        blocks=tuple(structure.blocks),
        word_count=structure.word_count,
        line_count=line_count,
        warnings=frontmatter.warnings,
    )
