"""Block structure in one pass over the lines, following CommonMark's container/leaf model.

Each line first continues the open containers (block quotes, list items), may open new
ones, then feeds or opens one leaf (paragraph, fence, indented code, HTML, table).
Lazy paragraph continuation, setext underlines and GFM tables (whose header is the last
line of the open paragraph) are handled the way markdown-it does.

Speed: at the root, where most lines are, runs that need no per-line decision (plain
paragraph text, fence and HTML bodies, indented code) are consumed with one compiled
regex search each; only lines that may change the structure go through Python.

The scan records what the parser reports (headings, code, tables, inline texts to scan
for links, reference definitions) and the root-level blocks the chunker packs.
"""

from __future__ import annotations

import re

from cograph_collections.markdown import syntax
from cograph_collections.markdown.inline import decode_text, normalise_label
from cograph_collections.markdown.model import BlockKind, CodeBlock
from cograph_collections.markdown.raw import (
    INDENTED,
    PARAGRAPH,
    TABLE,
    Container,
    FenceLeaf,
    HtmlLeaf,
    InlineText,
    Leaf,
    RawBlock,
    RawHeading,
    RawTable,
    TableLeaf,
)

# First characters of a line that may open or close a block, or be a setext underline
# or a table delimiter row; any other line (after spaces) is plain paragraph text.
_MAY_START_BLOCK = frozenset("#`~<>-+*_=|: \t0123456789")
_CONTAINER_START = frozenset(">-+*0123456789")
_INDENT_CHARS = (" ", "\t")
_PLAIN_LINES = re.compile(r"(?: *[^\n#`~<>\-+*_=|:0-9 \t][^\n]*\n)*")
_BLANK_LINES = re.compile(r"(?:[ \t]*\n)+")
_ROOT_INDENTED_CODE_END = re.compile(r"^(?! {4}| {0,3}\t|[ \t]*$)", re.M)
_BODY_ENDS: dict[tuple[str, int, str, int], re.Pattern[str]] = {}


def _body_end(kind: str, indent: int, char: str = "", length: int = 0) -> re.Pattern[str]:
    """Regex finding the first line that ends the body of a literal block nested in list
    items indented `indent` columns (0 at the root). For fences, group 'close' is set when
    that line is the closing fence rather than an outdented line."""
    key = (kind, indent, char, length)
    pattern = _BODY_ENDS.get(key)
    if pattern is None:
        prefix = " " * indent
        if kind == "fence":
            closing = prefix + r" {0,3}(?P<close>" + re.escape(char) + f"{{{length},}})" + r"[ \t]*$"
            source = "^" + closing if indent == 0 else "^(?:" + closing + "|(?!" + prefix + r"|[ \t]*$))"
        elif kind == "indented":
            source = _ROOT_INDENTED_CODE_END.pattern if indent == 0 else "^(?!" + prefix + r"    |[ \t]*$)"
        else:  # an HTML block that ends at a blank line
            source = "^(?!" + prefix + r"[ \t]*\S)"
        pattern = _BODY_ENDS[key] = re.compile(source, re.M)
    return pattern


def _is_blank(line: str) -> bool:
    return not line or (line.isspace() and not line.strip(" \t"))


def _dedent(line: str, count: int) -> str:
    """line without up to `count` leading spaces."""
    stripped = line.lstrip(" ")
    return line[min(len(line) - len(stripped), count) :]


class BlockScan:
    """Scans the body; results are left on the instance."""

    def __init__(self) -> None:
        self.headings: list[RawHeading] = []
        self.code_blocks: list[CodeBlock] = []
        self.tables: list[RawTable] = []
        self.inline_texts: list[InlineText] = []
        self.references: dict[str, str] = {}
        self.blocks: list[RawBlock] = []
        self._stack: list[Container] = []
        self._leaf: Leaf | None = None
        self._item_indent: int | None = 0  # total indentation when only list items are open

    def scan(self, text: str, lines: list[str], first: int, offset: int) -> BlockScan:
        """Scan lines[first:], which start at `offset` in text. text ends with a newline and
        lines are its lines; line numbers are list index + 1."""
        count = len(lines)
        index = first
        stack, blocks = self._stack, self.blocks  # never rebound, only mutated
        while index < count:
            leaf = self._leaf
            line = lines[index]
            if leaf is None and not stack and line and line[0] not in _MAY_START_BLOCK:
                leaf = self._open_leaf(PARAGRAPH, index + 1, "paragraph")  # a root paragraph starts
            if leaf is not None and self._item_indent is not None:
                kind = leaf.kind
                if kind == PARAGRAPH:
                    progress = line[:1] == " " or (line and line[0] not in _MAY_START_BLOCK)
                    after, after_offset = (
                        self._skip_plain(leaf, text, lines, index, offset) if progress else (index, offset)
                    )
                elif kind != TABLE:
                    after, after_offset = self._skip_literal(leaf, text, lines, index, offset)
                else:
                    after = index
                if after > index:
                    index, offset = after, after_offset
                    continue
            blank = not line or (line[0] in " \t" and not line.strip(" \t"))
            if stack:
                self._line(line, index + 1)
            elif blank:
                if leaf is not None:
                    self._close_leaf(index)
                offset += len(line) + 1
                index += 1
                continue
            else:
                self._root_line(line, index + 1)
            if not blank:
                blocks[-1].end_line = index + 1
            offset += len(line) + 1
            index += 1
        self._close_leaf(count)
        self._stack.clear()
        return self

    def _root_line(self, line: str, number: int) -> None:
        """A non-blank root line that may start a block: the common openers without the
        container machinery; anything else takes the general path."""
        ch = line[0]
        if ch == "#":
            if self._try_atx(line, number):
                return
        elif ch in "`~":
            if self._try_fence(line, 0, number):
                return
        elif ch == "<":
            leaf = self._leaf
            if self._try_html(line, -1 if leaf is None else leaf.kind, number):
                return
        self._line(line, number)

    # --- runs consumed by one regex search --------------------------------------------

    def _skip_plain(
        self, leaf: Leaf, text: str, lines: list[str], index: int, offset: int
    ) -> tuple[int, int]:
        """Consume paragraph continuation lines that cannot start a block."""
        end = _PLAIN_LINES.match(text, offset).end()  # type: ignore[union-attr]
        if end == offset:
            return index, offset
        stop = index + text.count("\n", offset, end)
        leaf.lines.extend(lines[index:stop])
        last = lines[stop - 1]
        leaf.last_indent = max(0, len(last) - len(last.lstrip(" ")) - (self._item_indent or 0))
        self.blocks[-1].end_line = stop
        if not self._stack:  # at the root, blank lines after the paragraph close it
            blanks = _BLANK_LINES.match(text, end)
            if blanks is not None:
                self._close_leaf(stop)
                return stop + text.count("\n", end, blanks.end()), blanks.end()
        return stop, end

    def _skip_literal(
        self, leaf: Leaf, text: str, lines: list[str], index: int, offset: int
    ) -> tuple[int, int]:
        """Consume the body of a fence, indented code or HTML block, up to the line that
        closes it (consumed too) or that the per-line rules must decide (left alone)."""
        indent = self._item_indent or 0
        if isinstance(leaf, FenceLeaf):
            pattern = _body_end("fence", indent, leaf.fence_char, leaf.fence_length)
        elif not isinstance(leaf, HtmlLeaf):
            pattern = _body_end("indented", indent)
        elif leaf.end_pattern is None:
            pattern = _body_end("html", indent)
        elif indent == 0:
            pattern = leaf.end_pattern
        else:
            return index, offset
        end = pattern.search(text, offset)
        stop = len(lines) if end is None else index + text.count("\n", offset, end.start())
        if end is None:
            closes = False
        elif isinstance(leaf, FenceLeaf):
            closes = end.group("close") is not None
        else:
            closes = isinstance(leaf, HtmlLeaf) and pattern is leaf.end_pattern
        if stop > index:
            self._take_body(leaf, lines[index:stop], index, indent, closes)
        if end is None:
            self._close_leaf(leaf.last_line)
            return stop, len(text)
        if not closes:
            return stop, end.start()
        leaf.last_line = stop + 1
        self.blocks[-1].end_line = stop + 1
        self._close_leaf(stop + 1)
        return stop + 1, text.index("\n", end.start()) + 1

    def _take_body(self, leaf: Leaf, body: list[str], index: int, indent: int, closed: bool) -> None:
        """Add body (lines from index + 1) to a literal leaf; unless the next line closes the
        block, the root block then ends at body's last non-blank line."""
        if isinstance(leaf, FenceLeaf):
            strip = indent + leaf.fence_indent
            leaf.lines.extend(body if not strip else [_dedent(line, strip) for line in body])
            leaf.last_line = index + len(body)
        elif leaf.kind == INDENTED:
            if indent == 0:
                leaf.lines.extend(syntax.strip_columns(line, 0, 4) for line in body)
            else:
                leaf.lines.extend(_dedent(line, indent + 4) for line in body)
        if closed:
            return
        for position in range(len(body) - 1, -1, -1):
            if not _is_blank(body[position]):
                last = index + position + 1
                if leaf.kind == INDENTED:
                    leaf.last_line = max(leaf.last_line, last)
                self.blocks[-1].end_line = max(self.blocks[-1].end_line, last)
                return

    # --- per line ---------------------------------------------------------------------

    def _line(self, line: str, number: int) -> None:
        if self._stack:
            rest, column, matched = self._continue_containers(line)
            all_matched = matched == len(self._stack)
        else:
            rest, column, matched, all_matched = line, 0, 0, True
        leaf = self._leaf
        if all_matched and leaf is not None:
            if isinstance(leaf, FenceLeaf):
                self._fence_line(leaf, rest, column, number)
                return
            if isinstance(leaf, HtmlLeaf):
                self._html_line(leaf, rest, number)
                return
        width, chars = syntax.indentation(rest, column) if rest[:1] in _INDENT_CHARS else (0, 0)
        opened = False
        if width < 4 and chars < len(rest) and rest[chars] in _CONTAINER_START:
            opened, rest, column = self._open_containers(
                rest, column, width, chars, matched, all_matched, number
            )
            if opened:
                width, chars = syntax.indentation(rest, column) if rest[:1] in _INDENT_CHARS else (0, 0)
        blank = chars == len(rest)
        if not opened and not all_matched:
            if (
                leaf is not None
                and leaf.kind == PARAGRAPH
                and not blank
                and self._is_lazy(rest, width, chars)
            ):
                leaf.lines.append(rest[chars:])
                leaf.last_indent = 0
                return
            self._close_containers(matched, number - 1)
        self._leaf_line(rest, column, width, chars, blank, number)

    def _continue_containers(self, line: str) -> tuple[str, int, int]:
        rest, column, matched = line, 0, 0
        for container in self._stack:
            width, chars = syntax.indentation(rest, column) if rest[:1] in _INDENT_CHARS else (0, 0)
            if container.quote:
                if width > 3 or chars >= len(rest) or rest[chars] != ">":
                    break
                column += width + 1
                rest = rest[chars + 1 :]
                if rest[:1] in _INDENT_CHARS:
                    rest = syntax.strip_columns(rest, column, 1)
                    column += 1
            elif chars == len(rest):  # blank line
                if not container.has_content:  # an item may begin with at most one blank line
                    break
                rest = ""
            elif width >= container.indent:
                rest = syntax.strip_columns(rest, column, container.indent)
                column += container.indent
                container.has_content = True
            else:
                break
            matched += 1
        return rest, column, matched

    def _open_containers(
        self, rest: str, column: int, width: int, chars: int, matched: int, all_matched: bool, number: int
    ) -> tuple[bool, str, int]:
        """Open the block quotes and list items that start this line (rest[chars] may start one)."""
        opened = False
        while True:
            ch = rest[chars]
            if ch == ">":
                self._before_container(opened, matched, all_matched, number, "quote")
                self._stack.append(Container(quote=True))
                self._item_indent = None
                column += width + 1
                rest = rest[chars + 1 :]
                if rest[:1] in _INDENT_CHARS:
                    rest = syntax.strip_columns(rest, column, 1)
                    column += 1
            else:
                marker_end = syntax.list_marker_end(rest, chars)
                if marker_end < 0:
                    break
                after = rest[marker_end:]
                after_column = column + width + marker_end - chars
                after_width, after_chars = syntax.indentation(after, after_column) if after else (0, 0)
                empty_item = after_chars == len(after)
                leaf = self._leaf
                interrupts = leaf is not None and leaf.kind == PARAGRAPH and all_matched and not opened
                ordered_not_one = ch not in "-+*" and int(rest[chars : marker_end - 1]) != 1
                if interrupts and (empty_item or ordered_not_one):
                    break  # such an item cannot interrupt a paragraph
                self._before_container(opened, matched, all_matched, number, "list_item")
                spaces = 1 if empty_item or after_width >= 5 else after_width
                indent = width + marker_end - chars + spaces
                self._stack.append(Container(quote=False, indent=indent, empty_start=empty_item))
                if self._item_indent is not None:
                    self._item_indent += indent
                if empty_item:
                    rest = ""
                elif after_width >= 5:  # the content starts with indented code
                    rest = syntax.strip_columns(after, after_column, 1)
                else:
                    rest = after[after_chars:]
                column = after_column + spaces
            opened = True
            width, chars = syntax.indentation(rest, column) if rest[:1] in _INDENT_CHARS else (0, 0)
            if width >= 4 or chars >= len(rest) or rest[chars] not in _CONTAINER_START:
                break
        return opened, rest, column

    def _before_container(
        self, opened: bool, matched: int, all_matched: bool, number: int, kind: BlockKind
    ) -> None:
        """Close what a new container ends, and start a root block when it opens at the root."""
        if not opened:
            if not all_matched:
                self._close_containers(matched, number - 1)
            self._close_leaf(number - 1)
        if not self._stack:
            self.blocks.append(RawBlock(kind, number))

    def _is_lazy(self, rest: str, width: int, chars: int) -> bool:
        """Whether a line outside the paragraph's containers continues it (starts no block)."""
        if width >= 4:
            return True
        text = rest[chars:]
        ch = text[0]
        if ch in "`~" and syntax.FENCE_OPEN.match(text):
            return False
        if ch == "#" and syntax.ATX_OPEN.match(text):
            return False
        if ch in "-*_" and syntax.THEMATIC_BREAK.match(text):
            return False
        return not (ch == "<" and 0 <= syntax.html_block_kind(text) < syntax.LONE_TAG_KIND)

    def _leaf_line(self, rest: str, column: int, width: int, chars: int, blank: bool, number: int) -> None:
        leaf = self._leaf
        kind = -1 if leaf is None else leaf.kind
        if blank:
            if kind in (PARAGRAPH, TABLE):
                self._close_leaf(number - 1)
            elif leaf is not None and kind == INDENTED:
                leaf.lines.append(syntax.strip_columns(rest, column, 4))
            return
        if width >= 4:
            if leaf is not None and kind == PARAGRAPH:
                self._paragraph_line(leaf, rest[chars:], width)
                return
            if leaf is None or kind != INDENTED:
                self._close_leaf(number - 1)
                leaf = self._open_leaf(INDENTED, number, "indented_code")
            leaf.lines.append(syntax.strip_columns(rest, column, 4))
            leaf.last_line = number
            return
        if kind == INDENTED:
            self._close_leaf(number - 1)
            leaf, kind = None, -1
        text = rest[chars:]
        ch = text[0]
        if ch in "`~" and self._try_fence(text, width, number):
            return
        if ch == "#" and self._try_atx(text, number):
            return
        if ch == "<" and self._try_html(text, kind, number):
            return
        if leaf is not None and kind == PARAGRAPH:
            if ch in "|-:" and self._try_table(leaf, text, number):
                return
            if ch in "=-" and syntax.SETEXT_UNDERLINE.match(text) and self._try_setext(leaf, text):
                return
        if ch in "-*_" and syntax.THEMATIC_BREAK.match(text):
            self._close_leaf(number - 1)
            self._start_block("thematic_break", number)
            return
        if isinstance(leaf, TableLeaf):
            table = leaf.table
            table.rows.append(self._row(syntax.split_cells(text), table.width, number))
            table.end_line = number
            return
        if leaf is None or kind != PARAGRAPH:
            leaf = self._open_leaf(PARAGRAPH, number, "paragraph")
        self._paragraph_line(leaf, text, width)

    @staticmethod
    def _paragraph_line(leaf: Leaf, text: str, width: int) -> None:
        leaf.lines.append(text)
        leaf.last_indent = width

    # --- leaf openers -----------------------------------------------------------------

    def _start_block(self, kind: BlockKind, number: int) -> None:
        if not self._stack:
            self.blocks.append(RawBlock(kind, number))

    def _open_leaf(self, kind: int, number: int, block_kind: BlockKind) -> Leaf:
        leaf = Leaf(kind, number)
        self._leaf = leaf
        self._start_block(block_kind, number)
        return leaf

    def _try_fence(self, text: str, indent: int, number: int) -> bool:
        match = syntax.FENCE_OPEN.match(text)
        if match is None:
            return False
        marker, info = match.group(1), match.group(2)
        if marker[0] == "`" and "`" in info:
            return False
        self._close_leaf(number - 1)
        self._leaf = FenceLeaf(number, marker[0], len(marker), indent, syntax.fence_info(info))
        self._start_block("fence", number)
        return True

    def _try_atx(self, text: str, number: int) -> bool:
        match = syntax.ATX_OPEN.match(text)
        if match is None:
            return False
        self._close_leaf(number - 1)
        level = match.end()
        self._add_heading(level, syntax.atx_heading_text(text, level), number, from_paragraph=False)
        return True

    def _add_heading(self, level: int, source: str, line: int, from_paragraph: bool) -> None:
        """Record a heading; at the root it is its own block (a setext one converts its paragraph's)."""
        top_level = not self._stack
        self.headings.append(RawHeading(level, source, line, top_level))
        if "[" in source or "<" in source:
            self.inline_texts.append(InlineText(source, line))
        if top_level:
            if from_paragraph:
                block = self.blocks[-1]
                block.kind = "heading"
            else:
                block = RawBlock("heading", line)
                self.blocks.append(block)
            block.heading = len(self.headings) - 1

    def _try_html(self, text: str, kind: int, number: int) -> bool:
        html_kind = syntax.html_block_kind(text)
        if html_kind < 0 or (html_kind == syntax.LONE_TAG_KIND and kind in (PARAGRAPH, TABLE)):
            return False
        self._close_leaf(number - 1)
        end_pattern = syntax.HTML_BLOCK_STARTS[html_kind][1]
        self._start_block("html", number)
        if end_pattern is None or not end_pattern.search(text):
            self._leaf = HtmlLeaf(number, end_pattern)
        return True

    def _try_table(self, leaf: Leaf, text: str, number: int) -> bool:
        width = syntax.delimiter_row_width(text)
        if width == 0 or leaf.last_indent >= 4:
            return False
        header_source = leaf.lines[-1]
        if "|" not in header_source:
            return False
        header = syntax.split_cells(header_source)
        if len(header) != width:
            return False
        header_line = leaf.first_line + len(leaf.lines) - 1
        leaf.lines.pop()
        if leaf.lines:
            self._close_leaf(header_line - 1)
            if not self._stack:
                self.blocks[-1].end_line = header_line - 1
                self.blocks.append(RawBlock("table", header_line))
        else:
            self._leaf = None
            if not self._stack:
                self.blocks[-1].kind = "table"
        table = RawTable(header, header_line, number)
        self.inline_texts.extend(
            InlineText(cell, header_line) for cell in header if "[" in cell or "<" in cell
        )
        self._leaf = TableLeaf(table)
        return True

    def _row(self, cells: list[str], width: int, number: int) -> list[str]:
        if len(cells) < width:
            cells.extend([""] * (width - len(cells)))
        del cells[width:]
        self.inline_texts.extend(InlineText(cell, number) for cell in cells if "[" in cell or "<" in cell)
        return cells

    def _try_setext(self, leaf: Leaf, text: str) -> bool:
        self._take_references(leaf)
        if not leaf.lines:  # only definitions: the underline is ordinary text or a break
            return False
        self._leaf = None
        level = 1 if text[0] == "=" else 2
        self._add_heading(level, "\n".join(leaf.lines).strip(), leaf.first_line, from_paragraph=True)
        return True

    # --- literal leaves ---------------------------------------------------------------

    def _fence_line(self, leaf: FenceLeaf, rest: str, column: int, number: int) -> None:
        width, chars = syntax.indentation(rest, column)
        leaf.last_line = number
        if (
            width < 4
            and chars < len(rest)
            and rest[chars] == leaf.fence_char
            and syntax.is_closing_fence(rest[chars:], leaf.fence_char, leaf.fence_length)
        ):
            self._close_leaf(number)
            return
        indent = min(width, leaf.fence_indent)
        leaf.lines.append(syntax.strip_columns(rest, column, indent) if indent else rest)

    def _html_line(self, leaf: HtmlLeaf, rest: str, number: int) -> None:
        if leaf.end_pattern is None:
            if not rest or rest.isspace():
                self._close_leaf(number - 1)
            return
        if leaf.end_pattern.search(rest):
            self._close_leaf(number)

    # --- closing ----------------------------------------------------------------------

    def _close_containers(self, keep: int, last_line: int) -> None:
        if len(self._stack) > keep:
            self._close_leaf(last_line)
        del self._stack[keep:]
        self._stack_changed()

    def _stack_changed(self) -> None:
        total = 0
        for container in self._stack:
            if container.quote:
                self._item_indent = None
                return
            total += container.indent
        self._item_indent = total

    def _close_leaf(self, last_line: int) -> None:
        leaf = self._leaf
        if leaf is None:
            return
        self._leaf = None
        if leaf.kind == PARAGRAPH:
            if leaf.lines and leaf.lines[0][:4].lstrip(" ").startswith("["):
                self._take_references(leaf)
            if leaf.lines:
                source = "\n".join(leaf.lines)
                if "[" in source or "<" in source:  # only these can hold a link
                    self.inline_texts.append(InlineText(source.rstrip(), leaf.first_line))
        elif isinstance(leaf, FenceLeaf):
            self.code_blocks.append(
                CodeBlock(leaf.language, "\n".join(leaf.lines), leaf.first_line, leaf.last_line)
            )
        elif leaf.kind == INDENTED:
            lines = leaf.lines
            while lines and (not lines[-1] or lines[-1].isspace()):
                lines.pop()
            self.code_blocks.append(CodeBlock(None, "\n".join(lines), leaf.first_line, leaf.last_line, False))
        elif isinstance(leaf, TableLeaf):
            self.tables.append(leaf.table)

    def _take_references(self, leaf: Leaf) -> None:
        """Strip link reference definitions from the start of a paragraph (first one wins).

        A definition is one line, or a '[label]:' line whose destination is on the next line.
        """
        taken = 0
        lines = leaf.lines
        while taken < len(lines) and lines[taken].lstrip(" ").startswith("["):
            consumed = 1
            line = lines[taken].lstrip(" ")
            match = syntax.REFERENCE_DEFINITION.match(line)
            if match is None and taken + 1 < len(lines) and syntax.LABEL_ONLY_DEFINITION.match(line):
                match = syntax.REFERENCE_DEFINITION.match(line + " " + lines[taken + 1].strip())
                consumed = 2
            if match is None or not match.group(1).strip():
                break
            label = normalise_label(match.group(1))
            destination = match.group(2) if match.group(2) is not None else match.group(3)
            self.references.setdefault(label, decode_text(destination))
            taken += consumed
        if taken:
            del lines[:taken]
            leaf.first_line += taken
