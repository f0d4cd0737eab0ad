# cython: language_level=3, boundscheck=False, wraparound=False
"""The loops of parsing that run once per event, per line or per character, compiled.

read_events turns pulldown-cmark's event stream into the records Structure builds a document
from, with their line numbers; count_words counts a body's words. What runs a few times per
block stays Python (structure.py). Compiled because these loops were most of the time of
parsing in Python (measured by bench/markdown_throughput.py): the events come from pyromark as
Python dicts, one or more per word of text, and every one of them must be looked at.
"""

from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.unicode cimport Py_UNICODE_ISSPACE
from libc.string cimport memchr

# Root blocks opened by a string tag (a list item is one when its list is a root block).
cdef dict _ROOT_KINDS = {"Paragraph": "paragraph", "HtmlBlock": "html", "Item": "list_item"}


cdef inline object _only_key(dict mapping, PyObject **value):
    """The key of a one-key dict (every tagged event is one), and its value in *value."""
    cdef Py_ssize_t position = 0
    cdef PyObject *key
    PyDict_Next(mapping, &position, &key, value)
    return <object>key


cdef inline bint _is(str name, str literal):
    """name == literal, cheaply when it is not: pyromark's names are interned, as literals are,
    so an equal name is usually the same object, and most others differ in length."""
    return name is literal or (len(name) == len(literal) and name == literal)


cdef inline bint _blank(unsigned char byte):
    return byte == 32 or byte == 9 or byte == 10  # what a blank line holds


cdef class _Body:
    """The body's UTF-8 bytes, with a cursor that turns byte offsets into line numbers:
    offsets asked for in ascending order (event starts are) cost one pass over the body."""

    cdef bytes owner  # keeps data alive
    cdef const unsigned char *data
    cdef Py_ssize_t size, cursor, cursor_line

    def __cinit__(self, bytes data, Py_ssize_t first_line):
        self.owner = data
        self.data = <const unsigned char *><const char *>data
        self.size = len(data)
        self.cursor = 0
        self.cursor_line = first_line

    cdef Py_ssize_t newlines(self, Py_ssize_t start, Py_ssize_t end):
        """How many newlines start..end holds (none when end <= start)."""
        cdef Py_ssize_t count = 0
        cdef const unsigned char *found
        # offsets come from the parser: never past the body, unless it has a bug, and then the
        # count is wrong rather than read from outside the buffer
        cdef const unsigned char *limit = self.data + min(end, self.size)
        cdef const unsigned char *at = self.data + start
        while at < limit:
            found = <const unsigned char *>memchr(at, 10, limit - at)
            if found == NULL:
                break
            count += 1
            at = found + 1
        return count

    cdef Py_ssize_t line(self, Py_ssize_t offset):
        if offset >= self.cursor:
            self.cursor_line += self.newlines(self.cursor, offset)
        else:
            self.cursor_line -= self.newlines(offset, self.cursor)
        self.cursor = offset
        return self.cursor_line

    cdef tuple lines(self, Py_ssize_t start, Py_ssize_t last):
        """(first line, last line) of the bytes start..last."""
        cdef Py_ssize_t first = self.line(start)
        return first, first + self.newlines(start, last)

    cdef Py_ssize_t last_byte(self, Py_ssize_t start, Py_ssize_t end):
        """Offset of the last byte in start..end that is not blank (start when there is none):
        event ranges may take in the blank lines after a block."""
        cdef Py_ssize_t last = min(end, self.size) - 1
        while last > start and _blank(self.data[last]):
            last -= 1
        return last if last > start else start


cdef class _Blocks:
    """Root blocks as (kind, first line, last non-blank line, heading index or None), in order.
    Text between them that is not blank (link reference definitions, which produce no events)
    becomes paragraph blocks, one per run of non-blank lines, so that the blocks cover the body."""

    cdef _Body body
    cdef list blocks
    cdef Py_ssize_t covered  # the byte after the last block added

    def __cinit__(self, _Body body):
        self.body = body
        self.blocks = []
        self.covered = 0

    cdef tuple add(self, str kind, Py_ssize_t start, Py_ssize_t end, object heading):
        """Adds the block (after the gap before it); answers its first and last line."""
        cdef Py_ssize_t last = self.body.last_byte(start, end)
        cdef tuple lines
        self.add_gap(start)
        lines = self.body.lines(start, last)
        self.blocks.append((kind, lines[0], lines[1], heading))
        self.covered = last + 1
        return lines

    cdef add_gap(self, Py_ssize_t end):
        cdef const unsigned char *data = self.body.data
        cdef Py_ssize_t at = self.covered, line_end, run_first = 0, line, offset
        cdef bint in_run = False, blank
        cdef const unsigned char *found
        end = min(end, self.body.size)  # as in _Body: never read past the body
        while at < end and data[at] == 10:  # the usual gap: newlines only
            at += 1
        if at >= end:
            return
        line = self.body.line(at)
        while at < end:
            found = <const unsigned char *>memchr(data + at, 10, end - at)
            line_end = (found - data) if found != NULL else end
            blank = True
            for offset in range(at, line_end):
                if not _blank(data[offset]):
                    blank = False
                    break
            if not blank and not in_run:
                run_first = line
            elif blank and in_run:
                self.blocks.append(("paragraph", run_first, line - 1, None))
            in_run = not blank
            at = line_end + 1
            line += 1
        if in_run:
            self.blocks.append(("paragraph", run_first, line - 1, None))


def read_events(events, bytes data, Py_ssize_t first_line):
    """(blocks, headings, code blocks, tables, links) of one body (data, its UTF-8 bytes, whose
    first line is first_line), from its events.

    blocks: see _Blocks; headings: (level, inline text, line); code blocks: (language, fenced,
    content, first line, last line); tables: (rows, header first; first line, last non-blank
    line); links: (byte range, pyromark's link data, whether an embed, inline text, line).
    Inline text is kept only inside headings, links, images and code blocks; any other event
    costs a few comparisons.
    """
    cdef _Body body = _Body(data, first_line)
    cdef _Blocks roots = _Blocks(body)
    cdef list headings = [], code = [], tables = [], links = []
    cdef list parts = []  # captured inline text
    cdef list opened = []  # open links and images; None: not recorded
    cdef list rows = [], cells = []
    cdef Py_ssize_t capture = 0  # open headings, links, images and code blocks
    cdef Py_ssize_t mark = 0  # where the open heading's or code block's text starts in parts
    cdef Py_ssize_t depth = 0  # open tags of any kind
    cdef Py_ssize_t images = 0  # open images: a link in alt text is not a link
    cdef Py_ssize_t level = 0, heading_line = 0, start, end
    cdef Py_ssize_t code_line = 0, code_last = 0, table_line = 0, table_last = 0
    cdef Py_UCS4 digit
    cdef bint fenced = False
    cdef object language = None, event, span, key, tag, value, record
    cdef str cell
    cdef PyObject *raw
    for event, span in events:
        if type(event) is str:
            if _is(event, "Rule"):
                if depth == 0:
                    roots.add("thematic_break", span["start"], span["end"], None)
            elif capture:  # a soft or hard line break
                parts.append(" ")
            continue
        key = _only_key(event, &raw)
        tag = <object>raw
        if _is(key, "Text") or _is(key, "Code"):
            if capture:
                parts.append(tag)
        elif _is(key, "Start"):
            depth += 1
            start, end = span["start"], span["end"]
            if type(tag) is str:
                if depth == 1 or (depth == 2 and _is(tag, "Item")):  # items of a root list
                    roots.add(_ROOT_KINDS.get(tag, "paragraph"), start, end, None)
                elif _is(tag, "TableCell"):  # cells are kept as written, markdown included
                    cell = data[start:end].decode().strip()
                    cells.append(cell.replace("\\|", "|") if "\\|" in cell else cell)
                continue
            key = _only_key(tag, &raw)
            value = <object>raw
            if _is(key, "Link"):
                opened.append(None if images else (start, end, value, False, len(parts), body.line(start)))
                capture += 1
            elif _is(key, "Image"):
                # an Obsidian ![[embed]] is recorded as a link; an image is not
                wiki = type(value["link_type"]) is not str
                opened.append((start, end, value, True, len(parts), body.line(start)) if wiki else None)
                images += 1
                capture += 1
            elif _is(key, "Heading"):
                if depth == 1:
                    roots.add("heading", start, end, len(headings))
                heading_line = body.line(start)
                digit = (<str>value["level"])[1]  # "H1" to "H6"
                level = <Py_ssize_t>digit - 48
                mark = len(parts)
                capture += 1
            elif _is(key, "CodeBlock"):
                fenced = value != "Indented"
                if depth == 1:
                    roots.add("fence" if fenced else "indented_code", start, end, None)
                # the end line is the closing fence's, or the last line an unclosed block reaches
                code_line, code_last = body.lines(start, end - 1)
                words = value["Fenced"].split() if fenced else ()
                language = words[0] if words else None
                mark = len(parts)
                capture += 1
            elif _is(key, "Table"):
                if depth == 1:
                    table_line, table_last = roots.add("table", start, end, None)
                else:
                    table_line, table_last = body.lines(start, body.last_byte(start, end))
                rows = []
            elif depth == 1 and key != "List":  # a list's items are its root blocks
                roots.add("quote" if _is(key, "BlockQuote") else "paragraph", start, end, None)
        elif _is(key, "End"):
            depth -= 1
            if type(tag) is not str:
                if "Heading" in tag:
                    headings.append((level, "".join(parts[mark:]), heading_line))
                    del parts[mark:]
                    capture -= 1
            elif _is(tag, "Link") or _is(tag, "Image"):
                if _is(tag, "Image"):
                    images -= 1
                capture -= 1
                record = opened.pop()
                if record is not None:
                    text = "".join(parts[record[4]:])
                    links.append((record[0], record[1], record[2], record[3], text, record[5]))
                if not capture:
                    del parts[:]
            elif _is(tag, "TableRow") or _is(tag, "TableHead"):
                rows.append(tuple(cells))
                cells = []
            elif _is(tag, "CodeBlock"):
                code.append((language, fenced, "".join(parts[mark:]), code_line, code_last))
                del parts[mark:]
                capture -= 1
            elif _is(tag, "Table"):
                tables.append((rows, table_line, table_last))
    roots.add_gap(body.size)
    return roots.blocks, headings, code, tables, links


# What each byte of well-formed UTF-8 starts: 0 a character that is not whitespace, 1 ASCII
# whitespace (str.isspace), 2 a multi-byte character, to decode; 3 is a continuation byte.
cdef unsigned char[256] _BYTE_KIND
for _byte in range(256):
    _BYTE_KIND[_byte] = (1 if chr(_byte).isspace() else 0) if _byte < 0x80 else (3 if _byte < 0xC0 else 2)


def count_words(bytes data):
    """len(data.decode().split()) without decoding or building the list: runs of characters that
    are not whitespace by str.split's (Unicode) rules, in well-formed UTF-8 (what str.encode makes).
    Branch-free for ASCII; a multi-byte character is decoded, since some are whitespace (U+00A0...)."""
    cdef const unsigned char *at = <const unsigned char *><const char *>data
    cdef const unsigned char *end = at + len(data)
    cdef const unsigned char *kinds = _BYTE_KIND
    cdef Py_ssize_t words = 0
    cdef unsigned char kind, inside = 0, lead
    cdef Py_UCS4 character
    while at < end:
        kind = kinds[at[0]]
        if kind >= 2:
            if kind == 3:
                at += 1
                continue
            lead = at[0]
            if lead >= 0xF0:
                character = (lead & 0x07) << 18 | (at[1] & 0x3F) << 12 | (at[2] & 0x3F) << 6 | (at[3] & 0x3F)
            elif lead >= 0xE0:
                character = (lead & 0x0F) << 12 | (at[1] & 0x3F) << 6 | (at[2] & 0x3F)
            else:
                character = (lead & 0x1F) << 6 | (at[1] & 0x3F)
            kind = Py_UNICODE_ISSPACE(character)
        at += 1
        words += (kind == 0) & (inside == 0)
        inside = kind == 0
    return words
