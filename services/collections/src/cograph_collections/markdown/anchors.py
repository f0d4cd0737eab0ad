"""GitHub-style heading anchors, so collection/<id>#<anchor> matches what GitHub renders."""

from __future__ import annotations

import re
import unicodedata

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
_ASCII_KEPT = {code: _KEPT[code] for code in range(128)}  # complete, so translate needs no lookups


def slugify(text: str) -> str:
    """Lowercase, punctuation and symbols stripped, whitespace runs collapsed to '-'."""
    lowered = text.strip().lower()
    kept = lowered.translate(_ASCII_KEPT if lowered.isascii() else _KEPT)
    if "  " in kept or not kept.isprintable():  # a run of spaces, or other whitespace
        return _WHITESPACE.sub("-", kept)
    return kept.replace(" ", "-")


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
