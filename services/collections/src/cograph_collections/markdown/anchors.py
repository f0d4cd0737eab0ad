"""GitHub-style heading anchors, so collection/<id>#<anchor> matches what GitHub renders."""

from __future__ import annotations

import re
import unicodedata

_ASCII_DROPPED = re.compile(r"[^a-z0-9_\-\s]")
_WHITESPACE = re.compile(r"\s+")


class _KeptCharacters(dict[int, str | None]):
    """str.translate table built lazily: github-slugger keeps letters, marks, numbers,
    connector punctuation, '-' and whitespace, and drops everything else."""

    def __missing__(self, code_point: int) -> str | None:
        ch = chr(code_point)
        category = unicodedata.category(ch)
        kept = category[0] in "LMN" or category == "Pc" or ch == "-" or ch.isspace()
        self[code_point] = ch if kept else None
        return self[code_point]


_KEPT = _KeptCharacters()


def slugify(text: str) -> str:
    """Lowercase, punctuation and symbols stripped, whitespace runs collapsed to '-'."""
    lowered = text.strip().lower()
    kept = _ASCII_DROPPED.sub("", lowered) if lowered.isascii() else lowered.translate(_KEPT)
    return _WHITESPACE.sub("-", kept)


class AnchorAllocator:
    """Hands out unique anchors within one document: foo, foo-1, foo-2, ..."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def allocate(self, text: str) -> str:
        base = slugify(text)
        anchor = base
        while anchor in self._seen:
            self._seen[base] += 1
            anchor = f"{base}-{self._seen[base]}"
        self._seen[anchor] = 0
        return anchor
