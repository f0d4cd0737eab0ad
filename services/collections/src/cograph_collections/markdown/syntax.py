"""Line-level CommonMark/GFM syntax: compiled once, each test a single regex or slice."""

from __future__ import annotations

import re

from cograph_collections.markdown.inline import decode_text

TAB_STOP = 4
_LEADING_WHITESPACE = re.compile(r"[ \t]*")

FENCE_OPEN = re.compile(r"(`{3,}|~{3,})(.*)$")
ATX_OPEN = re.compile(r"#{1,6}(?=[ \t]|$)")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"(?:=+|-+)[ \t]*$")
THEMATIC_BREAK = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_ORDERED_MARKER = re.compile(r"[0-9]{1,9}[.)](?=[ \t]|$)")
REFERENCE_DEFINITION = re.compile(
    r"\[((?:[^\[\]\\]|\\.){0,999})\]:[ \t]*(?:<((?:[^<>\n\\]|\\.)*)>|(\S+))"
    r"(?:[ \t]+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?[ \t]*$"
)
LABEL_ONLY_DEFINITION = re.compile(r"\[(?:[^\[\]\\]|\\.){1,999}\]:[ \t]*$")
_DELIMITER_CELL = re.compile(r":?-+:?$")
_DELIMITER_CHARS = frozenset("|-: \t")

_BLOCK_TAG_NAMES = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog"
    "|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h1|h2|h3|h4|h5|h6|head"
    "|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param"
    "|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
_ATTRIBUTE = r"(?:\s+[a-zA-Z_:][a-zA-Z0-9:._\-]*(?:\s*=\s*(?:[^\"'=<>`\x00-\x20]+|'[^']*'|\"[^\"]*\"))?)"
_OPEN_OR_CLOSE_TAG = r"(?:<[A-Za-z][A-Za-z0-9\-]*" + _ATTRIBUTE + r"*\s*/?>|</[A-Za-z][A-Za-z0-9\-]*\s*>)"

# CommonMark's seven HTML block kinds: (start, end) where end None means "a blank line".
# Kind 7 (any lone tag, e.g. an MDX component) cannot interrupt a paragraph.
HTML_BLOCK_STARTS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...] = (
    (
        re.compile(r"<(?:script|pre|style|textarea)(?=\s|>|$)", re.I),
        re.compile(r"</(?:script|pre|style|textarea)>", re.I),
    ),
    (re.compile(r"<!--"), re.compile(r"-->")),
    (re.compile(r"<\?"), re.compile(r"\?>")),
    (re.compile(r"<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>")),
    (re.compile(r"</?(?:" + _BLOCK_TAG_NAMES + r")(?=\s|/?>|$)", re.I), None),
    (re.compile(_OPEN_OR_CLOSE_TAG + r"\s*$"), None),
)
LONE_TAG_KIND = 6  # index of kind 7 above


def indentation(text: str, column: int) -> tuple[int, int]:
    """(columns, characters) of leading whitespace of text, which starts at `column`."""
    chars = _LEADING_WHITESPACE.match(text).end()  # type: ignore[union-attr]
    if chars == 0:
        return 0, 0
    prefix = text[:chars]
    if "\t" not in prefix:
        return chars, chars
    width = 0
    for ch in prefix:
        width += 1 if ch == " " else TAB_STOP - (column + width) % TAB_STOP
    return width, chars


def strip_columns(text: str, column: int, count: int) -> str:
    """text without `count` columns of leading whitespace; a tab split in two leaves spaces."""
    if text.startswith(" " * count):
        return text[count:]
    width = 0
    index = 0
    while width < count and index < len(text):
        ch = text[index]
        if ch == " ":
            width += 1
        elif ch == "\t":
            tab = TAB_STOP - (column + width) % TAB_STOP
            if width + tab > count:
                return " " * (width + tab - count) + text[index + 1 :]
            width += tab
        else:
            break
        index += 1
    return text[index:]


def list_marker_end(text: str, start: int) -> int:
    """End of the list item marker at text[start], or -1 (a thematic break is not an item)."""
    ch = text[start]
    if ch in "-+*":
        if text[start + 1 : start + 2] not in ("", " ", "\t"):
            return -1
        if ch != "+" and text.count(ch, start) >= 3 and THEMATIC_BREAK.match(text, start):
            return -1
        return start + 1
    match = _ORDERED_MARKER.match(text, start)
    return -1 if match is None else match.end()


def atx_heading_text(line: str, marker_end: int) -> str:
    text = line[marker_end:].strip(" \t")
    return _ATX_CLOSING.sub("", text).strip(" \t") if text.endswith("#") else text


def fence_info(info: str) -> str | None:
    """Language of a fence: the first word of its info string."""
    words = decode_text(info.strip()).split(maxsplit=1)
    return words[0] if words else None


def is_closing_fence(text: str, fence_char: str, fence_length: int) -> bool:
    stripped = text.strip(" \t")
    return (
        len(stripped) >= fence_length
        and stripped[0] == fence_char
        and stripped.count(fence_char) == len(stripped)
    )


def split_cells(row: str) -> list[str]:
    """GFM row cells: split on unescaped '|', '\\|' kept as '|', outer empty cells dropped."""
    row = row.strip()
    if "\\|" in row:
        cells = [cell.replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row)]
    else:
        cells = row.split("|")
    if cells and not cells[0].strip():
        cells.pop(0)
    if cells and not cells[-1].strip():
        cells.pop()
    return [cell.strip() for cell in cells]


def delimiter_row_width(text: str) -> int:
    """Number of columns of a GFM delimiter row (text without indentation), 0 if it is not one."""
    if len(text) < 2 or text[0] not in "|-:":
        return 0
    second = text[1]
    if second not in _DELIMITER_CHARS or (text[0] == "-" and second in " \t"):
        return 0
    if not _DELIMITER_CHARS.issuperset(text):
        return 0
    columns = text.split("|")
    width = 0
    for index, column in enumerate(columns):
        cell = column.strip()
        if not cell:
            if index in (0, len(columns) - 1):
                continue
            return 0
        if not _DELIMITER_CELL.match(cell):
            return 0
        width += 1
    return width


_HTML_BLOCK_START = re.compile(
    "|".join(f"(?P<k{kind}>{start.pattern})" for kind, (start, _) in enumerate(HTML_BLOCK_STARTS)), re.I
)


def html_block_kind(text: str) -> int:
    """Index into HTML_BLOCK_STARTS of the HTML block text opens, -1 if none."""
    match = _HTML_BLOCK_START.match(text)
    return -1 if match is None else int(match.lastgroup[1:])  # type: ignore[index]
