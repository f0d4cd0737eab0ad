"""Heading split, then a word window with overlap: the repository-document chunker.

A section that fits in one window is stored as written. A larger one is cut
into windows of `max_words` words, each starting `max_words - overlap_words`
words after the previous one, and joined with single spaces: indentation and
blank lines of an oversized section are not preserved (the spec accepts that).

A window longer than `max_chars` characters (minified or generated text, where
one "word" can be a whole file) is cut again into windows of `max_chars`
characters overlapping by `overlap_chars`, so no chunk outgrows what PostgreSQL
can index.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import msgspec

from cograph_repodocs.domain.headings import HeadingAt, find_headings, normalize_newlines
from cograph_repodocs.domain.model import Heading

MAX_WORDS = 512
OVERLAP_WORDS = 64
# Far above what 512 words of prose take (about 3,500 characters), far below the 1 MiB a
# tsvector may hold: only text without whitespace, such as minified JSON, is cut by characters.
MAX_CHARS = 8000
OVERLAP_CHARS = 800
# Every chunk of a section repeats its heading path, and PostgreSQL indexes it with the text:
# a "heading" that is a whole minified line must not be repeated whole.
MAX_HEADING_CHARS = 200


class Chunk(msgspec.Struct, frozen=True, kw_only=True):
    chunk_index: int
    """0-based over the whole document."""
    heading_path: list[str]
    """Texts of the enclosing headings, outermost first (each cut to `MAX_HEADING_CHARS`);
    empty before the first heading."""
    heading_anchor: str
    """Anchor of the deepest heading in heading_path; empty when there is none."""
    text: str


class ChunkedDocument(msgspec.Struct, frozen=True, kw_only=True):
    title: str
    headings: list[Heading]
    chunks: list[Chunk]


class Section(msgspec.Struct, frozen=True, kw_only=True):
    heading_path: list[str]
    heading_anchor: str
    text: str
    """The section's lines, heading line included, with surrounding whitespace stripped."""


def split_sections(path: str, text: str) -> tuple[list[Heading], list[Section]]:
    """The document's headings, and its text cut at every heading (blank sections dropped)."""
    lines = normalize_newlines(text).split("\n")
    found = find_headings(path, text)
    starts = [0, *(h.section_start for h in found)]
    ends = [*(h.section_start for h in found), len(lines)]
    owners: list[HeadingAt | None] = [None, *found]

    sections: list[Section] = []
    stack: list[Heading] = []
    for owner, start, end in zip(owners, starts, ends, strict=True):
        if owner is not None:
            # A heading closes every open heading of the same or a deeper level.
            while stack and stack[-1].level >= owner.heading.level:
                stack.pop()
            stack.append(owner.heading)
        body = "\n".join(lines[start:end]).strip()
        if body:
            sections.append(
                Section(
                    heading_path=[_shortened(h.text) for h in stack],
                    heading_anchor=stack[-1].anchor if stack else "",
                    text=body,
                )
            )
    return [h.heading for h in found], sections


def _shortened(heading: str) -> str:
    return heading if len(heading) <= MAX_HEADING_CHARS else heading[: MAX_HEADING_CHARS - 1] + "…"


def document_title(path: str, headings: list[Heading]) -> str:
    """The first non-empty level-1 heading, else the file name.

    In reStructuredText the first title is level 1 by definition, so it is the title.
    """
    for heading in headings:
        if heading.level == 1 and heading.text:
            return heading.text
    return PurePosixPath(path).name


class WordWindowChunker:
    """The parameters are constructor defaults on purpose: changing them means re-embedding."""

    def __init__(
        self,
        max_words: int = MAX_WORDS,
        overlap_words: int = OVERLAP_WORDS,
        max_chars: int = MAX_CHARS,
        overlap_chars: int = OVERLAP_CHARS,
    ) -> None:
        if max_words <= 0 or not 0 <= overlap_words < max_words:
            raise ValueError("need max_words > 0 and 0 <= overlap_words < max_words")
        if max_chars <= 0 or not 0 <= overlap_chars < max_chars:
            raise ValueError("need max_chars > 0 and 0 <= overlap_chars < max_chars")
        self.max_words = max_words
        self.overlap_words = overlap_words
        self.max_chars = max_chars
        self.overlap_chars = overlap_chars

    def chunk(self, path: str, text: str) -> ChunkedDocument:
        headings, sections = split_sections(path, text)
        chunks: list[Chunk] = []
        for section in sections:
            for window in self.windows(section.text):
                chunks.append(
                    Chunk(
                        chunk_index=len(chunks),
                        heading_path=section.heading_path,
                        heading_anchor=section.heading_anchor,
                        text=window,
                    )
                )
        return ChunkedDocument(title=document_title(path, headings), headings=headings, chunks=chunks)

    def windows(self, text: str) -> list[str]:
        """The chunk texts of one section."""
        return [piece for window in self._word_windows(text) for piece in self._character_windows(window)]

    def _word_windows(self, text: str) -> list[str]:
        words = text.split()
        if not words:
            return []
        if len(words) <= self.max_words:
            return [text]
        step = self.max_words - self.overlap_words
        windows: list[str] = []
        start = 0
        while True:
            end = min(start + self.max_words, len(words))
            windows.append(" ".join(words[start:end]))
            if end == len(words):
                return windows
            start += step

    def _character_windows(self, text: str) -> list[str]:
        """`text` itself when it fits in `max_chars`; else windows starting every
        `max_chars - overlap_chars` characters, the last one reaching the end."""
        if len(text) <= self.max_chars:
            return [text]
        step = self.max_chars - self.overlap_chars
        # A start at or past len - overlap would only repeat what the previous window holds.
        pieces = (
            text[start : start + self.max_chars] for start in range(0, len(text) - self.overlap_chars, step)
        )
        return [piece for piece in pieces if not piece.isspace()]
