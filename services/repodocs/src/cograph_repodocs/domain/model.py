"""Data shared by several domain modules."""

from __future__ import annotations

import msgspec


class Heading(msgspec.Struct, frozen=True, kw_only=True):
    """One heading of a document, as a renderer would show and anchor it."""

    level: int
    """1 for a top-level heading; for reStructuredText, the rank of its adornment style."""
    text: str
    """Plain text, inline markup removed."""
    anchor: str
    """GitHub-style fragment (without `#`), unique within the document."""
    line: int
    """1-based line of the heading text."""
