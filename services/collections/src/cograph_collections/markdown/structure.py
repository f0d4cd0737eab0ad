"""Document structure from pulldown-cmark's event stream (through pyromark).

pulldown-cmark parses CommonMark with GFM tables and Obsidian wiki links in compiled code.
One loop over its events records what a ParsedDocument needs as byte ranges and captured
text; short passes then turn those records into root blocks, headings, code blocks, tables
and links. Event ranges are UTF-8 byte offsets into the body, so line numbers are counted
in its encoded bytes, for many offsets at a time (see _line_numbers).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate, chain, compress, repeat
from operator import add, itemgetter, ne, sub
from typing import Any

import pyromark

from cograph_collections.markdown.anchors import AnchorAllocator
from cograph_collections.markdown.links import classify_href, is_attachment, split_fragment
from cograph_collections.markdown.model import Block, BlockKind, CodeBlock, Heading, Link, Table

_MARKDOWN = pyromark.Markdown(options=pyromark.Options.ENABLE_TABLES | pyromark.Options.ENABLE_WIKILINKS)
# Without wiki links, to re-read "[[label]](href)": CommonMark (and EIP citations) mean a
# link whose text is "[label]".
_COMMONMARK = pyromark.Markdown(options=pyromark.Options.ENABLE_TABLES)

# Root blocks opened by a string tag (a list item is one when its list is a root block).
_ROOT_KINDS: dict[str, BlockKind] = {"Paragraph": "paragraph", "HtmlBlock": "html", "Item": "list_item"}
# End tags the reader acts on; the others (paragraphs, items, emphasis...) only close.
_END_TAGS = frozenset(("Link", "Image", "TableRow", "TableHead", "CodeBlock", "Table"))
_BLANK = b" \t\n"  # what a blank line holds
_SPACES = re.compile(r"[ \t\n]+")
_NEWLINE = ord("\n")
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

_Root = tuple[BlockKind, int, int, int | None]  # kind, byte range, index of its heading


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
        self._data = body.encode()
        self._first_line = first_line
        self._roots: list[_Root] = []
        self._headings: list[tuple[int, str, int]] = []  # level, text, start
        self._code: list[tuple[str | None, bool, str, int, int]] = []  # language, fenced, content, range
        self._tables: list[tuple[list[tuple[str, ...]], int, int]] = []  # rows (header first), range
        self._links: list[tuple[int, int, Any, bool, str]] = []  # range, link data, embed, text
        self._read(events)
        self.blocks = self._blocks()
        self.headings = self._heading_tree()
        self.code_blocks = self._code_blocks()
        self.tables = self._table_list()
        self.links = self._link_list()

    def _read(self, events: Iterator[tuple[Any, Any]]) -> None:
        """Record the events that matter. Inline text is kept (in `parts`) only inside
        headings, links, images and code blocks; any other event costs a few dict lookups."""
        data, roots = self._data, self._roots
        parts: list[str] = []
        capture = 0  # open headings, links, images and code blocks
        mark = 0  # where the open heading's or code block's text starts in parts
        depth = 0  # open tags of any kind
        images = 0  # open images: a link in alt text is not a link
        opened: list[tuple[int, int, Any, bool, int] | None] = []  # open links; None: not recorded
        level = 0
        language: str | None = None
        fenced = False
        rows: list[tuple[str, ...]] = []
        cells: list[str] = []
        for event, span in events:
            if event.__class__ is str:
                if event == "Rule":
                    if depth == 0:
                        roots.append(("thematic_break", span["start"], span["end"], None))
                elif capture:  # a soft or hard line break
                    parts.append(" ")
                continue
            (key,) = event  # every other event is a one-key dict
            if key == "Text":
                if capture:
                    parts.append(event[key])
            elif key == "Start":
                tag = event[key]
                depth += 1
                if tag.__class__ is str:
                    if depth == 1 or (depth == 2 and tag == "Item"):  # items of a root list
                        roots.append((_ROOT_KINDS.get(tag, "paragraph"), span["start"], span["end"], None))
                    elif tag == "TableCell":  # cells are kept as written, markdown included
                        cell = data[span["start"] : span["end"]].decode().strip()
                        cells.append(cell.replace("\\|", "|") if "\\|" in cell else cell)
                elif "Link" in tag:
                    opened.append(
                        None if images else (span["start"], span["end"], tag["Link"], False, len(parts))
                    )
                    capture += 1
                elif "Image" in tag:
                    image = tag["Image"]
                    wiki = image["link_type"].__class__ is not str  # an Obsidian ![[embed]]
                    opened.append((span["start"], span["end"], image, True, len(parts)) if wiki else None)
                    images += 1
                    capture += 1
                elif "Heading" in tag:
                    if depth == 1:
                        roots.append(("heading", span["start"], span["end"], len(self._headings)))
                    level = int(tag["Heading"]["level"][1])
                    mark = len(parts)
                    capture += 1
                elif "CodeBlock" in tag:
                    kind = tag["CodeBlock"]
                    fenced = kind != "Indented"
                    if depth == 1:
                        roots.append(
                            ("fence" if fenced else "indented_code", span["start"], span["end"], None)
                        )
                    words = kind["Fenced"].split() if fenced else ()
                    language = words[0] if words else None
                    mark = len(parts)
                    capture += 1
                elif "Table" in tag:
                    if depth == 1:
                        roots.append(("table", span["start"], span["end"], None))
                    rows = []
                elif depth == 1 and "List" not in tag:  # a list's items are its root blocks
                    container: BlockKind = "quote" if "BlockQuote" in tag else "paragraph"
                    roots.append((container, span["start"], span["end"], None))
            elif key == "End":
                tag = event[key]
                depth -= 1
                if tag.__class__ is not str:
                    if "Heading" in tag:
                        self._headings.append((level, "".join(parts[mark:]), span["start"]))
                        del parts[mark:]
                        capture -= 1
                elif tag not in _END_TAGS:
                    pass
                elif tag in {"Link", "Image"}:
                    if tag == "Image":
                        images -= 1
                    capture -= 1
                    record = opened.pop()
                    if record is not None:
                        start, end, link, embed, link_mark = record
                        self._links.append((start, end, link, embed, "".join(parts[link_mark:])))
                    if not capture:
                        parts.clear()
                elif tag in {"TableRow", "TableHead"}:
                    rows.append(tuple(cells))
                    cells = []
                elif tag == "CodeBlock":
                    content = "".join(parts[mark:])
                    self._code.append((language, fenced, content, span["start"], span["end"]))
                    del parts[mark:]
                    capture -= 1
                else:  # Table
                    self._tables.append((rows, span["start"], span["end"]))
            elif key == "Code" and capture:
                parts.append(event[key])

    def _line_numbers(self, offsets: list[int], base: tuple[int, int] | None = None) -> list[int]:
        """The line of each offset, for ascending offsets at or after base (an offset and its
        line; the body's start when None): the newlines between neighbours are counted and
        summed in C, with no Python step per offset."""
        start, line = base or (0, self._first_line)
        count = self._data.count
        lines = accumulate(map(count, repeat(b"\n"), [start, *offsets], offsets), initial=line)
        next(lines)
        return list(lines)

    def _last(self, start: int, end: int) -> int:
        """Offset of the last non-blank byte in start..end (ranges may take in blank lines)."""
        data = self._data
        last = end - 1
        if last > start and data[last] == _NEWLINE:  # most ranges end with one newline
            last -= 1
        if data[last] in _BLANK:
            last = start + max(len(data[start:end].rstrip(_BLANK)) - 1, 0)
        return last

    def _blocks(self) -> list[Block]:
        """Root blocks, each from its first line to its last non-blank one. Text outside all
        of them (link reference definitions, which produce no events) becomes paragraph
        blocks, split at blank lines, so that the chunks cover the whole body."""
        data = self._data
        kinds, starts, ends, headings = zip(*self._roots, strict=True) if self._roots else ((), (), (), ())
        lasts = list(map(self._last, starts, ends))
        # each block's start and last byte, then the body's end: newlines[2 * i] is the
        # count in the gap before block i, newlines[-1] the one after the last block
        offsets = [*chain.from_iterable(zip(starts, lasts, strict=True)), len(data)]
        newlines = list(map(data.count, repeat(b"\n"), [0, *offsets[:-1]], offsets))
        lines = list(accumulate(newlines, initial=self._first_line))[1:]
        blocks = list(map(Block, kinds, lines[0:-1:2], lines[1::2], headings))
        gap_starts, gap_ends = [0, *map(add, lasts, repeat(1))], [*starts, len(data)]
        # a gap of newlines only is blank; only the others are looked at
        sizes = map(sub, gap_ends, gap_starts)
        for index in reversed(list(compress(range(len(gap_ends)), map(ne, newlines[0::2], sizes)))):
            # Counted from the block before the gap, not from the body's start: many gaps (link
            # reference definitions between paragraphs) made that quadratic.
            base = (lasts[index - 1], lines[2 * index - 1]) if index else None
            found = self._line_numbers(self._paragraphs(gap_starts[index], gap_ends[index]), base)
            blocks[index:index] = [
                Block("paragraph", first, last) for first, last in zip(found[0::2], found[1::2], strict=True)
            ]
        return blocks

    def _paragraphs(self, start: int, end: int) -> list[int]:
        """First and last byte of each run of non-blank lines in start..end."""
        offsets: list[int] = []
        in_run = False
        offset = start
        for line in self._data[start:end].split(b"\n"):
            if line.strip(_BLANK):
                if in_run:
                    offsets[-1] = offset + len(line) - 1
                else:
                    offsets += (offset, offset + len(line) - 1)
                in_run = True
            else:
                in_run = False
            offset += len(line) + 1
        return offsets

    def _heading_tree(self) -> list[Heading]:
        anchors = AnchorAllocator()
        headings: list[Heading] = []
        lines = self._line_numbers([start for _, _, start in self._headings])
        for (level, source, _), line in zip(self._headings, lines, strict=True):
            text = _plain(source)
            headings.append(Heading(level, text, anchors.allocate(text), line))
        return headings

    def _code_blocks(self) -> list[CodeBlock]:
        # the end line is the closing fence's, or the last line an unclosed block reaches
        lines = self._line_numbers([offset for code in self._code for offset in (code[3], code[4] - 1)])
        return [
            CodeBlock(language, content[:-1] if content.endswith("\n") else content, first, last, fenced)
            for (language, fenced, content, _, _), first, last in zip(
                self._code, lines[0::2], lines[1::2], strict=True
            )
        ]

    def _table_list(self) -> list[Table]:
        offsets = [offset for _, start, end in self._tables for offset in (start, self._last(start, end))]
        lines = self._line_numbers(offsets)
        return [
            Table(rows[0], tuple(rows[1:]), first, last)
            for (rows, _, _), first, last in zip(self._tables, lines[0::2], lines[1::2], strict=True)
        ]

    def _link_list(self) -> list[Link]:
        data = self._data
        records = sorted(self._links, key=itemgetter(0))  # a link in a link's text closes first
        links: list[Link] = []
        for (start, end, link, embed, source), line in zip(
            records, self._line_numbers([record[0] for record in records]), strict=True
        ):
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
