"""A collection document as HTML for the viewer's Preview tab: CommonMark (markdown-it-py), with the
document's own parse deciding what links point at, then sanitized (nh3, Rust's ammonia).

Headings carry the anchors of the document's heading_tree, in order, so `collection/<id>#<anchor>`
citations land on them. A link the collection resolved points at its target document's viewer; a
link to another page of the collection that did not resolve is marked as such, not dropped. Raw
HTML in a document is parsed so harmless markup shows, then everything that could run is removed:
scripts, event handlers, `javascript:` URLs, SVG, styles, frames.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Sequence

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markupsafe import Markup, escape

from cograph_gateway import schemas as s

# [[target]] or [[target|text]]: Obsidian's wiki links, which CommonMark does not know.
_WIKI_LINK = re.compile(r"\[\[([^\[\]|\n]+)(?:\|([^\[\]\n]+))?\]\]")
# Links that name another page of the collection, so one that did not resolve is a broken reference.
_INTERNAL = frozenset({"markdown", "relative", "wiki"})
UNRESOLVED = "unresolved"
# A line closing the frontmatter block, as the collections parser reads it: '---' or '...'.
_FRONTMATTER_CLOSING = re.compile(r"^(?:---|\.\.\.)[^\S\n]*$", re.MULTILINE)

_ATTRIBUTES = {
    **{tag: {"id"} for tag in ("h1", "h2", "h3", "h4", "h5", "h6")},
    "a": {"href", "title", "class"},
    "code": {"class"},
    "img": {"src", "alt", "title"},
    "th": {"align"},
    "td": {"align"},
}


def _wiki_link(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("[[", state.pos):
        return False
    found = _WIKI_LINK.match(state.src, state.pos)
    if found is None:
        return False
    if not silent:
        target, text = found.group(1).strip(), (found.group(2) or found.group(1)).strip()
        opening = state.push("link_open", "a", 1)
        opening.attrs = {"href": target}
        opening.meta = {"wiki": True}
        state.push("text", "", 0).content = text
        state.push("link_close", "a", -1)
    state.pos = found.end()
    return True


_MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable("table")
_MARKDOWN.inline.ruler.before("link", "wiki_link", _wiki_link)


def _links_by_written_target(links: Iterable[s.Link]) -> dict[tuple[bool, str], deque[s.Link]]:
    """The parsed links in document order, by (is a wiki link, href as written)."""
    found: dict[tuple[bool, str], deque[s.Link]] = defaultdict(deque)
    for link in links:
        found[(link.link_type == "wiki", link.href)].append(link)
    return found


def _point(token: Token, link: s.Link | None, viewer_url: str) -> None:
    """Point a link at what the collection resolved it to, or mark it unresolved."""
    if link is None:
        return
    if link.target_document_id:
        fragment = f"#{link.anchor}" if link.anchor else ""
        token.attrs["href"] = f"{viewer_url}/{link.target_document_id}{fragment}"
    elif link.link_type in _INTERNAL:
        token.attrs["class"] = UNRESOLVED
        token.attrs["title"] = "unresolved: no document of this collection has this name"


def _body(document: s.Document) -> str:
    """The document without the frontmatter block the parser read as metadata (markdown would
    take it for a thematic break and a setext heading)."""
    text = document.content
    first_end = text.find("\n")
    if not document.metadata.frontmatter or first_end < 0 or text[:first_end].rstrip() != "---":
        return text
    closing = _FRONTMATTER_CLOSING.search(text, first_end + 1)
    return text if closing is None else text[closing.end() + 1 :]


def render_document(document: s.Document, viewer_url: str) -> str:
    """A collection document's markdown as sanitized HTML; `viewer_url` is where its collection's
    documents are viewed (…/documents), for resolved links."""
    links = _links_by_written_target(document.metadata.links)

    def point(token: Token) -> None:
        written = (bool(token.meta.get("wiki")), str(token.attrs.get("href", "")))
        queue = links.get(written)
        _point(token, queue.popleft() if queue else None, viewer_url)

    anchors = [heading.anchor for heading in document.metadata.heading_tree]
    return _render(_body(document), anchors, point)


def render_page(text: str, toc: Iterable[s.TocEntry]) -> str:
    """A repository docs page's markdown as sanitized HTML, its headings carrying the anchors of
    the page's table of contents, which leaves some levels out (the title)."""
    entries = deque(toc)
    anchors: list[str | None] = []
    for token in _MARKDOWN.parse(text):
        if token.type == "heading_open":
            level = int(token.tag[1:])
            anchors.append(entries.popleft().anchor if entries and entries[0].level == level else None)
    return _render(text, anchors, lambda token: None)


def _render(text: str, anchors: Sequence[str | None], point: Callable[[Token], None]) -> str:
    """`anchors` are the headings' ids in order (None: that heading gets none)."""
    tokens = _MARKDOWN.parse(text)
    remaining = iter(anchors)
    for token in tokens:
        if token.type == "heading_open" and (anchor := next(remaining, None)) is not None:
            token.attrs["id"] = anchor
        for child in token.children or ():
            if child.type == "link_open":
                point(child)
    html = _MARKDOWN.renderer.render(tokens, _MARKDOWN.options, {})
    return nh3.clean(
        html,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


_WORD = re.compile(r"\w{2,}")


def highlight(text: str, query: str) -> Markup:
    """`text`, escaped, with the query's words (two letters or more, any case) marked."""
    words = sorted({w.lower() for w in _WORD.findall(query)}, key=len, reverse=True)
    if not words:
        return escape(text)
    pattern = re.compile("|".join(re.escape(word) for word in words), re.IGNORECASE)
    marked, at = [], 0
    for found in pattern.finditer(text):
        marked += [
            escape(text[at : found.start()]),
            Markup("<mark>"),
            escape(found.group()),
            Markup("</mark>"),
        ]
        at = found.end()
    marked.append(escape(text[at:]))
    return Markup("").join(marked)
