"""Inline markdown: link extraction and plain text, per CommonMark precedence.

Code spans, autolinks and raw HTML bind tighter than links, so the scanner walks the
text left to right and skips each of them whole; brackets use CommonMark's opener
stack (a link cannot contain a link). Images are recognised so that their brackets
pair correctly, but they are not links: they name assets, not documents.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import NamedTuple

_URI_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^<>\x00-\x20]*)>")
_EMAIL_AUTOLINK = re.compile(
    r"<([a-zA-Z0-9.!#$%&'*+/=?^_`{|}~\-]+@[a-zA-Z0-9](?:[a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])?)*)>"
)
_ATTRIBUTE = r"(?:\s+[a-zA-Z_:][a-zA-Z0-9:._\-]*(?:\s*=\s*(?:[^\"'=<>`\x00-\x20]+|'[^']*'|\"[^\"]*\"))?)"
_HTML_TAG = re.compile(
    r"<[A-Za-z][A-Za-z0-9\-]*" + _ATTRIBUTE + r"*\s*/?>"
    r"|</[A-Za-z][A-Za-z0-9\-]*\s*>"
    r"|<!---?>|<!--(?:[^-]|-[^-]|--[^>])*-->"
    r"|<[?][\s\S]*?[?]>|<![A-Za-z][^>]*>|<!\[CDATA\[[\s\S]*?\]\]>"
)

_MAYBE_AUTOLINK = re.compile(r"<(?:[A-Za-z][A-Za-z0-9+.\-]{1,31}:|[^<>\s@]+@)")
# Characters where something that matters to links may start; everything else is skipped in C.
_INLINE_SPECIAL = re.compile(r"[\\`<\[\]]")
# A whole code span, or just the backtick run when nothing closes it (then it is literal).
_CODE_SPAN_OR_RUN = re.compile(r"(`+)(?!`)(?:[\s\S]*?(?<!`)\1(?!`))?")
_ANGLE = re.compile(
    r"(?P<uri>" + _URI_AUTOLINK.pattern + ")|(?P<email>" + _EMAIL_AUTOLINK.pattern + ")|" + _HTML_TAG.pattern
)

_LINE_BREAK_SPACE = r"[ \t]*(?:\n[ \t]*)?"
_TITLE = r"(?:\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\))"
_INLINE_DESTINATION = re.compile(
    r"\(" + _LINE_BREAK_SPACE + r"(?:<((?:[^<>\n\\]|\\.)*)>"
    r"|((?:[^\x00-\x20()\\]|\\.|\((?:[^\x00-\x20()\\]|\\.)*\))*))"
    r"(?:[ \t\n]+" + _TITLE + r")?" + _LINE_BREAK_SPACE + r"\)",
    re.S,
)
_LINK_LABEL = re.compile(r"\[((?:[^\[\]\\]|\\.){0,999})\]", re.S)
_WIKI = re.compile(r"\[\[([^\[\]\n]+?)\]\]")

_ESCAPABLE = r"[!-/:-@\[-`{-~]"
_ESCAPE = re.compile(r"\\(" + _ESCAPABLE + ")")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")

# Obsidian embeds of these are attachments (images, media, PDFs, canvases), not notes.
_ATTACHMENT_SUFFIX = re.compile(
    r"\.(?:png|jpe?g|gif|bmp|svg|webp|avif|ico|tiff?|mp3|webm|wav|m4a|ogg|3gp|flac|mp4|ogv|mov|mkv"
    r"|pdf|canvas|base|excalidraw|csv|json|zip)$",
    re.IGNORECASE,
)


class InlineLink(NamedTuple):
    offset: int  # where the link starts in the scanned text
    text: str
    href: str
    wiki: bool = False
    embed: bool = False


def decode_text(value: str) -> str:
    """Backslash escapes and character references resolved, as CommonMark does."""
    if "\\" in value:
        value = _ESCAPE.sub(r"\1", value)
    if "&" in value:
        value = _ENTITY.sub(lambda match: html.unescape(match.group(0)), value)
    return value


def normalise_label(label: str) -> str:
    return " ".join(label.split()).casefold()


class _Opener:
    __slots__ = ("active", "image", "start", "text_start")

    def __init__(self, start: int, text_start: int, image: bool) -> None:
        self.start = start
        self.text_start = text_start
        self.image = image
        self.active = True


def _wiki_link(match: re.Match[str], start: int, embed: bool) -> InlineLink | None:
    inner = match.group(1).replace("\\|", "|")
    target, _, label = inner.partition("|")
    target = target.strip()
    if embed and _ATTACHMENT_SUFFIX.search(target.partition("#")[0].strip()):
        return None
    return InlineLink(start, label.strip() or target, target, wiki=True, embed=embed)


def _reference_after(
    text: str, after: int, label_text: str, references: Mapping[str, str]
) -> tuple[str, int] | None:
    """Destination and end of a full, collapsed or shortcut reference link."""
    if after < len(text) and text[after] == "[":
        match = _LINK_LABEL.match(text, after)
        if match is not None:
            label = match.group(1) or label_text
            href = references.get(normalise_label(label))
            return None if href is None else (href, match.end())
    href = references.get(normalise_label(label_text)) if references else None
    return None if href is None else (href, after)


def scan_links(text: str, references: Mapping[str, str]) -> list[InlineLink]:
    """Links (not images) of one inline text: a paragraph, heading or table cell."""
    if "[" not in text and ("<" not in text or not _MAYBE_AUTOLINK.search(text)):
        return []  # without '[' only an autolink could be a link
    links: list[InlineLink] = []
    openers: list[_Opener] = []
    position = 0
    find = _INLINE_SPECIAL.search
    while (special := find(text, position)) is not None:
        start = special.start()
        ch = text[start]
        if ch == "[":
            position = _open_bracket(text, start, openers, links)
        elif ch == "]":
            position = _close_bracket(text, start, openers, links, references)
        elif ch == "\\":
            position = start + 2
        elif ch == "`":
            position = _CODE_SPAN_OR_RUN.match(text, start).end()  # type: ignore[union-attr]
        else:
            position = _angle(text, start, links)
    return links


def _is_escaped(text: str, position: int) -> bool:
    backslashes = 0
    while position > backslashes and text[position - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _open_bracket(text: str, start: int, openers: list[_Opener], links: list[InlineLink]) -> int:
    image = start > 0 and text[start - 1] == "!" and not _is_escaped(text, start - 1)
    opener_start = start - 1 if image else start
    wiki = _WIKI.match(text, start) if text.startswith("[", start + 1) else None
    if wiki is None or text.startswith("(", wiki.end()):
        # not a wiki link; [[text]](href) is a CommonMark link whose text has brackets
        openers.append(_Opener(opener_start, start + 1, image))
        return start + 1
    link = _wiki_link(wiki, opener_start, embed=image)
    if link is not None:
        links.append(link)
    return wiki.end()


def _angle(text: str, start: int, links: list[InlineLink]) -> int:
    """An autolink (recorded) or raw HTML tag (skipped) at start; a lone '<' is text."""
    match = _ANGLE.match(text, start)
    if match is None:
        return start + 1
    if match.lastgroup == "uri":
        links.append(InlineLink(start, text[start + 1 : match.end() - 1], text[start + 1 : match.end() - 1]))
    elif match.lastgroup == "email":
        address = text[start + 1 : match.end() - 1]
        links.append(InlineLink(start, address, "mailto:" + address))
    return match.end()


def _close_bracket(
    text: str,
    start: int,
    openers: list[_Opener],
    links: list[InlineLink],
    references: Mapping[str, str],
) -> int:
    after = start + 1
    if not openers:
        return after
    opener = openers.pop()
    if not opener.active:
        return after
    label_text = text[opener.text_start : start]
    href: str | None = None
    end = after
    if text.startswith("(", after):
        match = _INLINE_DESTINATION.match(text, after)
        if match is not None:
            destination = match.group(1) if match.group(1) is not None else match.group(2)
            href, end = decode_text(destination), match.end()
    if href is None:
        reference = _reference_after(text, after, label_text, references)
        if reference is None:
            return after
        href, end = reference
    if not opener.image:
        links.append(InlineLink(opener.start, plain_text(label_text, references), href))
        for earlier in openers:  # links may not contain other links
            if not earlier.image:
                earlier.active = False
    return end


# --- plain text -------------------------------------------------------------------------

_NEEDS_PLAIN = re.compile(r"[\\`*_<\[&!\n]")
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_ESCAPED_PUNCTUATION = re.compile(r"\\(" + _ESCAPABLE + ")")
_IMAGE = re.compile(r"!\[((?:[^\[\]\\]|\\.)*)\]\((?:[^()\\]|\\.|\([^()]*\))*\)")
_INLINE_LINK = re.compile(r"\[((?:[^\[\]\\]|\\.|\[[^\[\]]*\])*)\]\((?:[^()\\]|\\.|\([^()]*\))*\)")
_REFERENCE_LINK = re.compile(r"\[((?:[^\[\]\\]|\\.)+)\]\[[^\[\]]*\]")
_WIKI_TEXT = re.compile(r"!?\[\[([^\[\]|\n]*)(?:\|([^\[\]\n]*))?\]\](?!\()")
_SHORTCUT_REFERENCE = re.compile(r"\[((?:[^\[\]\\]|\\.)+)\](?!\()")
_STAR_EMPHASIS = re.compile(r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1(?!\*)", re.S)
_UNDERSCORE_EMPHASIS = re.compile(r"(?<![^\W_])(_{1,3})(?=\S)(.+?)(?<=\S)\1(?![^\W_])", re.S)
_PROTECTED = 0xE000  # private-use code points stand in for escaped and code text


def _protect(value: str, store: list[str]) -> str:
    store.append(value)
    return chr(_PROTECTED + len(store) - 1)


def plain_text(source: str, references: Mapping[str, str] | None = None) -> str:
    """Inline markdown reduced to the text a reader sees, whitespace collapsed.

    references turns shortcut reference links ([label]) into their text when defined.
    """
    if not _NEEDS_PLAIN.search(source):
        return source.strip()
    store: list[str] = []
    text = _CODE_SPAN.sub(lambda m: _protect(_code_span_content(m.group(2)), store), source)
    text = _ESCAPED_PUNCTUATION.sub(lambda m: _protect(m.group(1), store), text)
    text = _URI_AUTOLINK.sub(lambda m: _protect(m.group(1), store), text)
    text = _EMAIL_AUTOLINK.sub(lambda m: _protect(m.group(1), store), text)
    text = _HTML_TAG.sub("", text)
    text = _WIKI_TEXT.sub(lambda m: m.group(2) or m.group(1), text)
    text = _IMAGE.sub(r"\1", text)
    text = _INLINE_LINK.sub(r"\1", text)
    text = _REFERENCE_LINK.sub(r"\1", text)
    if references:
        text = _SHORTCUT_REFERENCE.sub(
            lambda m: m.group(1) if normalise_label(m.group(1)) in references else m.group(0), text
        )
    for _ in range(2):  # nested emphasis, e.g. **bold _and em_**
        text = _STAR_EMPHASIS.sub(r"\2", text)
        text = _UNDERSCORE_EMPHASIS.sub(r"\2", text)
    text = decode_text(text)
    if store:
        text = "".join(
            store[ord(ch) - _PROTECTED] if _PROTECTED <= ord(ch) < _PROTECTED + len(store) else ch
            for ch in text
        )
    return " ".join(text.split())


def _code_span_content(content: str) -> str:
    content = content.replace("\n", " ")
    if len(content) > 2 and content[0] == " " and content[-1] == " " and content.strip():
        return content[1:-1]
    return content
