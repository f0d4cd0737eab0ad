"""Document structure from pulldown-cmark's event stream (through pyromark).

pulldown-cmark parses CommonMark with GFM tables and Obsidian wiki links in compiled code.
One loop over its events (read_events, compiled: see _reader.pyx) records what a
ParsedDocument needs, with line numbers, and captured text; short passes then turn those
records into root blocks, headings, code blocks, tables and links.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import starmap
from operator import itemgetter
from typing import Any

import pyromark

from cograph_collections.markdown._reader import count_words, read_events
from cograph_collections.markdown.anchors import AnchorAllocator
from cograph_collections.markdown.links import classify_href, is_attachment, split_fragment
from cograph_collections.markdown.model import Block, CodeBlock, Heading, Link, Table

_MARKDOWN = pyromark.Markdown(options=pyromark.Options.ENABLE_TABLES | pyromark.Options.ENABLE_WIKILINKS)
# Without wiki links, to re-read "[[label]](href)": CommonMark (and EIP citations) mean a
# link whose text is "[label]".
_COMMONMARK = pyromark.Markdown(options=pyromark.Options.ENABLE_TABLES)

_SPACES = re.compile(r"[ \t\n]+")
# What may follow "[[text]]" to make it the text of a CommonMark link: a parenthesised
# destination and title (<...>, quotes, parentheses nested twice). Read within
# _DESTINATION_BYTES of the '(' and without backtracking (possessive), so that finding it
# stays linear however many links a line holds.
_DESTINATION = re.compile(
    rb"""\((?:[^()\\"'<]|\\.|<[^<>\n]*>|"[^"\n]*"|'[^'\n]*'|["'<]|\((?:[^()\\]|\\.|\([^()\\]*\))*\))*+\)""",
    re.DOTALL,
)
_DESTINATION_BYTES = 2048

# pulldown-cmark takes a tab after a closing fence for text, where CommonMark allows spaces
# or tabs: the rest of the document became code. Such tabs become spaces, byte for byte, so
# every offset stays the file's (a fence-only line inside other code loses a trailing tab).
# Possessive: a run of blanks is read once (a lazy split of it backtracked quadratically).
_FENCE_TAB = re.compile(r"\n {0,3}(?:`{3,}|~{3,}) *+\t[ \t]*+(?=\n|\Z)")  # a closing fence: never line 1


# A table's rows are filled out to its header's width, so a wide header over many short rows
# makes cells (and parser events) quadratic in the text. Real cells cost at least two bytes
# ("|x"); beyond that and a fixed allowance, the document is refused before it is parsed.
TABLE_CELL_ALLOWANCE = 100_000
# A line of '|', ':', '-' and blanks: a superset of delimiter rows (an upper bound is all the
# check needs). The leading newline lets the regex engine skip ahead to line starts.
_DELIMITER_ROW = re.compile(r"\n[ \t>]*+[|:-][ \t|:-]*+(?=\n)")  # quotes and list items hold tables too
_BLANK_LINE = re.compile(r"\n[ \t]*(?:\n|$)")


class TooManyTableCellsError(ValueError):
    """The document's tables, filled out to their headers' widths, would hold too many cells."""

    def __init__(self, cells: int, cap: int) -> None:
        super().__init__(
            f"its tables would hold about {cells} cells once every row is filled out to its header's"
            f" width, more than the {cap} a document of this size may; shorten the tables' headers or rows"
        )


def check_table_cells(body: str) -> None:
    """TooManyTableCellsError when the tables of body would hold too many cells: an upper
    bound, each table's header width times its lines up to the next blank one."""
    if "|" not in body or "-" not in body:
        return
    cap = TABLE_CELL_ALLOWANCE + len(body) // 2
    cells = 0
    table_end = 0
    for row in _DELIMITER_ROW.finditer(body):  # a table needs a header line: never the first
        if row.start() < table_end or "|" not in row[0] or "-" not in row[0]:
            continue
        blank = _BLANK_LINE.search(body, row.end())
        table_end = blank.start() if blank else len(body)
        cells += (row[0].strip(" \t|\n").count("|") + 1) * body.count("\n", row.end(), table_end)
        if cells > cap:
            raise TooManyTableCellsError(cells, cap)


class Structure:
    """The structure of one document body; line numbers are the file's."""

    def __init__(self, body: str, first_line: int) -> None:
        check_table_cells(body)
        if "\t" in body:
            body = _FENCE_TAB.sub(lambda line: line[0].replace("\t", " "), body)
        events = _MARKDOWN.events_with_range(body)  # first: encode() then reuses its UTF-8 copy
        self._data = data = body.encode()
        roots, self._headings, self._code, self._tables, self._links = read_events(events, data, first_line)
        self.blocks = list(starmap(Block, roots))
        self.word_count = count_words(data)
        self.headings = self._heading_tree()
        self.code_blocks = self._code_blocks()
        self.tables = self._table_list()
        self.links = self._link_list()

    def _heading_tree(self) -> list[Heading]:
        anchors = AnchorAllocator()
        headings: list[Heading] = []
        for level, source, line in self._headings:
            text = _plain(source)
            headings.append(Heading(level, text, anchors.allocate(text), line))
        return headings

    def _code_blocks(self) -> list[CodeBlock]:
        return [
            CodeBlock(language, content[:-1] if content.endswith("\n") else content, first, last, fenced)
            for language, fenced, content, first, last in self._code
        ]

    def _table_list(self) -> list[Table]:
        return [Table(rows[0], tuple(rows[1:]), first, last) for rows, first, last in self._tables]

    def _link_list(self) -> list[Link]:
        data = self._data
        records = sorted(self._links, key=itemgetter(0))  # a link in a link's text closes first
        links: list[Link] = []
        for start, end, link, embed, source, line in records:
            link_type, href = link["link_type"], link["dest_url"]
            text = _plain(source)
            if link_type.__class__ is str:
                if link_type == "Email":
                    href = "mailto:" + href
                kind = classify_href(href)
            elif not embed and data[end : end + 1] == b"(" and (reread := self._reread_link(start, end)):
                text, href = reread
                kind = classify_href(href)
            else:
                href = href.removesuffix("\\").strip()  # a table cell's [[note\|label]]
                if embed and is_attachment(href):
                    continue
                text, kind = text or href, "wiki"
            links.append(Link(text, href, line, kind, split_fragment(href)[1] or None, embed))
        return links

    def _reread_link(self, start: int, end: int) -> tuple[str, str] | None:
        """(text, href) when the [[...]] at start is the text of a CommonMark [...](href) link."""
        # Only the link itself is read again, up to its closing parenthesis (the destination may
        # follow a line break): reading to the end of the line made many such links quadratic.
        destination = _DESTINATION.match(self._data, end, end + _DESTINATION_BYTES)
        if destination is None:
            return None
        source = self._data[start : destination.end()].decode()
        events: Iterator[tuple[Any, Any]] = _COMMONMARK.events_with_range(source)
        parts: list[str] = []
        href: str | None = None
        for event, span in events:
            if event.__class__ is str:
                continue
            if href is None:
                tag = event.get("Start")
                if tag is not None and "Link" in tag and span["start"] == 0:
                    href = tag["Link"]["dest_url"]
            elif event.get("End") == "Link":
                return _plain("".join(parts)), href
            else:
                parts.append(event.get("Text") or event.get("Code") or "")
        return None


def _plain(text: str) -> str:
    """Inline text as a reader sees it: runs of spaces, tabs and line breaks are one space
    (a no-break space is text, and stays)."""
    if "  " in text or "\t" in text or "\n" in text or text[:1] == " " or text[-1:] == " ":
        return _SPACES.sub(" ", text).strip(" ")
    return text
