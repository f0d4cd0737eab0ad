"""parse_markdown: frontmatter, one block pass over the body lines, then inline links."""

from __future__ import annotations

from typing import Any

from cograph_collections.markdown.anchors import AnchorAllocator
from cograph_collections.markdown.blocks import BlockScan
from cograph_collections.markdown.frontmatter import split_frontmatter
from cograph_collections.markdown.inline import plain_text, scan_links
from cograph_collections.markdown.links import classify_href, split_fragment
from cograph_collections.markdown.model import Block, Heading, Link, LinkType, ParsedDocument, Table


def normalise_text(text: str) -> str:
    """Line endings to \\n (CommonMark treats \\r\\n and \\r as line endings), BOM dropped."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def split_lines(text: str) -> list[str]:
    """Lines of normalised text; a final newline ends the last line rather than adding one."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _frontmatter_title(frontmatter: dict[str, Any]) -> str | None:
    title = frontmatter.get("title")
    if isinstance(title, str | int | float) and not isinstance(title, bool):
        cleaned = " ".join(str(title).split())
        return cleaned or None
    return None


def parse_markdown(text: str) -> ParsedDocument:
    """Parse one collection document. Never raises on malformed markdown or YAML."""
    text = normalise_text(text)
    lines = split_lines(text)
    frontmatter = split_frontmatter(lines)
    body_offset = sum(len(line) + 1 for line in lines[: frontmatter.body_start])
    scan_text = text if text.endswith("\n") else text + "\n"
    scan = BlockScan().scan(scan_text, lines, frontmatter.body_start, body_offset)

    anchors = AnchorAllocator()
    headings: list[Heading] = []
    for raw in scan.headings:
        heading_text = plain_text(raw.source, scan.references)
        headings.append(Heading(raw.level, heading_text, anchors.allocate(heading_text), raw.line))

    title = _frontmatter_title(frontmatter.data)
    if title is None:
        title = next((heading.text for heading in headings if heading.level == 1 and heading.text), None)

    return ParsedDocument(
        text=text,
        body_start_line=frontmatter.body_start + 1,
        frontmatter=frontmatter.data,
        title=title,
        heading_tree=tuple(headings),
        code_blocks=tuple(scan.code_blocks),
        tables=tuple(
            Table(tuple(raw.header), tuple(map(tuple, raw.rows)), raw.start_line, raw.end_line)
            for raw in scan.tables
        ),
        links=tuple(_links(scan)),
        blocks=tuple(Block(raw.kind, raw.start_line, raw.end_line, raw.heading) for raw in scan.blocks),
        word_count=len(text[body_offset:].split()),
        line_count=len(lines),
        warnings=frontmatter.warnings,
    )


def _links(scan: BlockScan) -> list[Link]:
    links: list[Link] = []
    for inline in scan.inline_texts:
        for found in scan_links(inline.text, scan.references):
            link_type: LinkType = "wiki" if found.wiki else classify_href(found.href)
            fragment = split_fragment(found.href)[1]
            links.append(
                Link(
                    text=found.text,
                    href=found.href,
                    line=inline.line_at(found.offset),
                    link_type=link_type,
                    anchor=fragment or None,
                    embed=found.embed,
                )
            )
    links.sort(key=lambda link: link.line)
    return links
