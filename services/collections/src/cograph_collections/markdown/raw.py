"""Mutable records the block scanner fills in; the parser turns them into frozen Structs."""

from __future__ import annotations

import re

from cograph_collections.markdown.model import BlockKind

PARAGRAPH, FENCE, INDENTED, HTML, TABLE = range(5)


class InlineText:
    """Inline source of one paragraph, heading or cell. Its lines are consecutive file lines."""

    __slots__ = ("first_line", "text")

    def __init__(self, text: str, first_line: int) -> None:
        self.text = text
        self.first_line = first_line

    def line_at(self, offset: int) -> int:
        return self.first_line + self.text.count("\n", 0, offset)


class RawHeading:
    __slots__ = ("level", "line", "source", "top_level")

    def __init__(self, level: int, source: str, line: int, top_level: bool) -> None:
        self.level = level
        self.source = source
        self.line = line
        self.top_level = top_level


class RawTable:
    __slots__ = ("end_line", "header", "rows", "start_line", "width")

    def __init__(self, header: list[str], start_line: int, end_line: int) -> None:
        self.header = header
        self.width = len(header)
        self.rows: list[list[str]] = []
        self.start_line = start_line
        self.end_line = end_line


class RawBlock:
    """A root-level block; end_line is kept at its last non-blank line."""

    __slots__ = ("end_line", "heading", "kind", "start_line")

    def __init__(self, kind: BlockKind, start_line: int) -> None:
        self.kind: BlockKind = kind
        self.start_line = start_line
        self.end_line = start_line
        self.heading: int | None = None


class Container:
    """An open block quote or list item."""

    __slots__ = ("has_content", "indent", "quote")

    def __init__(self, quote: bool, indent: int = 0, empty_start: bool = False) -> None:
        self.quote = quote
        self.indent = indent  # list items: columns of content indentation
        self.has_content = not empty_start  # an item may begin with at most one blank line


class Leaf:
    """The open leaf block. Paragraph lines are consecutive file lines from first_line."""

    __slots__ = ("first_line", "kind", "last_indent", "last_line", "lines")

    def __init__(self, kind: int, first_line: int) -> None:
        self.kind = kind
        self.first_line = first_line
        self.last_line = first_line
        self.lines: list[str] = []
        self.last_indent = 0  # paragraphs: indentation of the last line (a table header can't be code)


class FenceLeaf(Leaf):
    __slots__ = ("fence_char", "fence_indent", "fence_length", "language")

    def __init__(self, first_line: int, char: str, length: int, indent: int, language: str | None) -> None:
        super().__init__(FENCE, first_line)
        self.fence_char = char
        self.fence_length = length
        self.fence_indent = indent
        self.language = language


class HtmlLeaf(Leaf):
    __slots__ = ("end_pattern",)

    def __init__(self, first_line: int, end_pattern: re.Pattern[str] | None) -> None:
        super().__init__(HTML, first_line)
        self.end_pattern = end_pattern  # None: the block ends at a blank line


class TableLeaf(Leaf):
    __slots__ = ("table",)

    def __init__(self, table: RawTable) -> None:
        super().__init__(TABLE, table.start_line)
        self.table = table
