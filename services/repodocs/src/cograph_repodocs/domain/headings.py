"""Finding a document's headings and anchoring them as GitHub renders them.

Markdown is parsed with a CommonMark parser, so `#` lines inside fenced or
indented code are never headings and setext (underlined) headings are. For
reStructuredText, section titles are found by their adornment. Every other
matched file (a Dockerfile, a workflow, an example script) goes through the same
heading-and-word-window chunker as a README, with "no language-aware handling"
(the spec), and so with no markdown reading either: its headings are its `# `
lines at the left margin (one to six `#`, a space or tab, some text), taken as
written. A `---` separating YAML documents does not make the paragraph above it
a heading, and a code fence, an HTML tag or a leading `---` hides no `# ` line.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath

import msgspec
from markdown_it import MarkdownIt

from cograph_repodocs.domain.model import Heading

MARKDOWN_EXTENSIONS = frozenset({".md", ".mdx", ".markdown"})
RST_EXTENSIONS = frozenset({".rst"})


class HeadingAt(msgspec.Struct, frozen=True, kw_only=True):
    """A heading plus the 0-based line where its section starts (an rst overline starts it)."""

    heading: Heading
    section_start: int


def normalize_newlines(text: str) -> str:
    """`\r\n` and lone `\r` become `\n`, so that line numbers agree everywhere."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def find_headings(path: str, text: str) -> list[HeadingAt]:
    """Every heading of the document at `path`, in document order; lines are counted on `\n`."""
    text = normalize_newlines(text)
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in MARKDOWN_EXTENSIONS:
        return _markdown_headings(text)
    if suffix in RST_EXTENSIONS:
        return _rst_headings(text)
    return _comment_headings(text)


def github_anchor(text: str) -> str:
    """GitHub's heading slug (github-slugger): lowercase, drop punctuation and symbols, each space to `-`.

    Spaces are not collapsed: "Foo & Bar" becomes "foo--bar", exactly as on GitHub.
    """
    kept = (ch for ch in text.lower() if ch in " -" or _is_word_char(ch))
    return "".join(kept).replace(" ", "-")


def _is_word_char(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category[0] in "LMN" or category == "Pc"


class AnchorRegistry:
    """Makes anchors unique within one document: `usage`, `usage-1`, `usage-2`, as GitHub does."""

    def __init__(self) -> None:
        self._occurrences: dict[str, int] = {}

    def unique(self, text: str) -> str:
        base = github_anchor(text)
        anchor = base
        # A literal heading "Usage 1" may already own `usage-1`, hence the loop.
        while anchor in self._occurrences:
            self._occurrences[base] += 1
            anchor = f"{base}-{self._occurrences[base]}"
        self._occurrences[anchor] = 0
        return anchor


_FRONT_MATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$")


def _markdown_headings(text: str) -> list[HeadingAt]:
    lines = text.split("\n")
    # YAML front matter would otherwise parse as a thematic break plus a setext heading.
    if lines and lines[0].rstrip() == "---":
        end = next((i for i in range(1, len(lines)) if _FRONT_MATTER_END.match(lines[i])), None)
        if end is not None:
            lines = [""] * (end + 1) + lines[end + 1 :]
    env: dict[str, object] = {}  # the block pass fills in link reference definitions
    tokens = _BLOCKS.parse("\n".join(lines), env)
    anchors = AnchorRegistry()
    found: list[HeadingAt] = []
    parsed_chars = 0
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        source = tokens[index + 1].content
        if len(source) > _LONGEST_PARSED_HEADING or parsed_chars > _PARSED_HEADING_BUDGET:
            rendered = source.strip()
        else:
            parsed_chars += len(source)
            rendered = _heading_text(source, env).strip()
        start = token.map[0]
        # The anchor is GitHub's, from the exact rendered text; the shown text has its spaces tidied.
        heading = Heading(
            level=int(token.tag[1:]),
            text=" ".join(rendered.split()),
            anchor=anchors.unique(rendered),
            line=start + 1,
        )
        found.append(HeadingAt(heading=heading, section_start=start))
    return found


# Blocks only: inline markup is parsed in headings alone. Paragraphs are most of a document, and
# markdown-it's inline pass is quadratic on some of them (a long run of "![").
_BLOCKS = MarkdownIt("commonmark").disable("inline")
_INLINE = MarkdownIt("commonmark")
# Characters of heading text whose inline markup is parsed: per heading, and per document
# (markdown-it's inline pass is quadratic in a heading too). Beyond them, shown as written.
_LONGEST_PARSED_HEADING = 300
_PARSED_HEADING_BUDGET = 30_000


def _heading_text(source: str, env: dict[str, object]) -> str:
    """The rendered text of a heading: code spans keep their text, images and HTML tags give nothing,
    and a line break (a setext heading of several lines) is the newline GitHub renders there: the
    shown text makes it a space, the anchor drops it as GitHub's slugger does (`config-filesand-…`)."""
    inline = _INLINE.parseInline(source, env)[0]
    return "".join(
        _RENDERED_BREAKS.get(child.type, child.content)
        for child in inline.children or []
        if child.type in _RENDERED
    )


_RENDERED_BREAKS = {"softbreak": "\n", "hardbreak": "\n"}
_RENDERED = frozenset({"text", "code_inline", *_RENDERED_BREAKS})


def _comment_headings(text: str) -> list[HeadingAt]:
    """The `# ` lines at the left margin of a file that is neither markdown nor reStructuredText.

    Only what an ATX heading is in a line of its own counts: one to six `#`, then a space or a tab,
    then text, an optional closing run of `#` dropped. A line that is only `#` (a spacer in a comment
    block) is no heading. The text is shown and anchored as written: a comment is not markdown.
    """
    anchors = AnchorRegistry()
    found: list[HeadingAt] = []
    for index, line in enumerate(text.split("\n")):
        level = len(line) - len(line.lstrip("#"))
        if not 1 <= level <= 6 or len(line) == level or line[level] not in " \t":
            continue
        written = _without_closing_sequence(line[level:])
        if not written.strip():
            continue
        heading = Heading(
            level=level, text=" ".join(written.split()), anchor=anchors.unique(written), line=index + 1
        )
        found.append(HeadingAt(heading=heading, section_start=index))
    return found


def _without_closing_sequence(rest: str) -> str:
    """An ATX heading's text: `# Install ##` is "Install", while `# C#` keeps its `#`."""
    text = rest.strip(" \t")
    unclosed = text.rstrip("#")
    if unclosed != text and (not unclosed or unclosed[-1] in " \t"):
        return unclosed.rstrip(" \t")
    return text


_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+[ \t]*$")
_RST_ROLE = re.compile(r":[\w.+-]+:(?=`)")
# `text <target>`_ ; the space before "<" is left in the text and stripped after: a lazy match
# followed by \s* backtracks quadratically over a long run of spaces.
_RST_LINK = re.compile(r"`([^`<]*)<[^>`]*>`_{1,2}")  # neither part crosses a backtick
_RST_LITERAL = re.compile(r"`{1,2}([^`]+)`{1,2}_{0,2}")
_RST_EMPHASIS = re.compile(r"\*{1,2}([^*]+)\*{1,2}")


def _rst_headings(text: str) -> list[HeadingAt]:
    lines = text.split("\n")
    styles: list[tuple[str, bool]] = []
    anchors = AnchorRegistry()
    found: list[HeadingAt] = []
    i = 0
    while i < len(lines):
        match = _rst_title_at(lines, i)
        if match is None:
            i += 1
            continue
        title_index, style, consumed = match
        # Levels follow the order in which adornment styles first appear (docutils:
        # an overlined "=" and an underline-only "=" are different styles).
        if style not in styles:
            styles.append(style)
        title = _rst_plain(lines[title_index].strip())
        heading = Heading(
            level=styles.index(style) + 1, text=title, anchor=anchors.unique(title), line=title_index + 1
        )
        found.append(HeadingAt(heading=heading, section_start=i))
        i += consumed
    return found


def _rst_title_at(lines: list[str], i: int) -> tuple[int, tuple[str, bool], int] | None:
    """(title line, style, lines consumed) when a section title starts at line i."""
    over = _ADORNMENT.match(lines[i])
    if over and i + 2 < len(lines):
        title, under = lines[i + 1], lines[i + 2]
        if (
            title.strip()
            and not _ADORNMENT.match(title)
            and under.rstrip() == lines[i].rstrip()
            and len(lines[i].rstrip()) >= len(title.strip())
        ):
            return i + 1, (over.group(1), True), 3
    if i + 1 >= len(lines) or not lines[i].strip() or lines[i][0].isspace() or over:
        return None
    # An underline-only title starts a paragraph: first line, or after a blank line.
    if i > 0 and lines[i - 1].strip():
        return None
    under_match = _ADORNMENT.match(lines[i + 1])
    if under_match and len(lines[i + 1].rstrip()) >= len(lines[i].rstrip()):
        return i, (under_match.group(1), False), 2
    return None


def _rst_plain(title: str) -> str:
    title = _RST_ROLE.sub("", title)
    title = _RST_LINK.sub(lambda link: link[1].rstrip(), title)
    title = _RST_LITERAL.sub(r"\1", title)
    return _RST_EMPHASIS.sub(r"\1", title)
