"""The leading '---' YAML block: parsed, never raising, normalised to JSON-safe values."""

from __future__ import annotations

import base64
import datetime
import math
import re
from typing import Any

import msgspec
import yaml

try:  # libyaml is an order of magnitude faster than the pure-Python loader
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

# A line closing the block: '---' or '...', trailing whitespace allowed.
_CLOSING = re.compile(r"^(?:---|\.\.\.)[^\S\n]*$", re.MULTILINE)


class Frontmatter(msgspec.Struct, frozen=True):
    data: dict[str, Any]
    body_start: int  # index of the first body line (0 when there is no frontmatter)
    warnings: tuple[str, ...] = ()
    body_offset: int = 0  # where the first body line starts in the text


class _TooLarge(Exception):
    """The block expands past what a document's metadata may hold (aliases can nest it)."""


def _clean(text: str) -> str:
    """A string PostgreSQL's jsonb can hold: YAML escapes can spell a NUL or a lone surrogate."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode()
    except UnicodeEncodeError:
        text = text.encode(errors="replace").decode()
    return text


class _JsonSafe:
    """Frontmatter ends up in jsonb: dates become ISO strings, keys strings, bytes base64,
    NaN and infinities their names. Aliases let a few bytes of YAML name a structure of
    millions of values, or one that contains itself: both stop at MAX_VALUES / MAX_DEPTH."""

    MAX_VALUES = 10_000
    MAX_DEPTH = 50

    def __init__(self) -> None:
        self._budget = self.MAX_VALUES

    def convert(self, value: Any, depth: int = 0) -> Any:
        self._budget -= 1
        if self._budget < 0 or depth > self.MAX_DEPTH:
            raise _TooLarge
        if isinstance(value, str):
            return _clean(value)
        if isinstance(value, dict):
            return {_clean(str(key)): self.convert(item, depth + 1) for key, item in value.items()}
        if isinstance(value, list | tuple | set):
            return [self.convert(item, depth + 1) for item in value]
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        if isinstance(value, datetime.date | datetime.datetime):
            return value.isoformat()
        if isinstance(value, bytes):
            return base64.b64encode(value).decode("ascii")
        return value


def split_frontmatter(text: str) -> Frontmatter:
    """Frontmatter of a document (lines ended by \\n). An unclosed '---' block is not
    frontmatter; nor is one whose YAML is invalid or not a mapping: '---' also opens markdown
    (a thematic break, a setext underline), and that text must be indexed, not dropped."""
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].rstrip() != "---":
        return Frontmatter({}, 0)
    closing = _CLOSING.search(text, first_end + 1)
    if closing is None:
        return Frontmatter({}, 0)
    data = _parse_yaml(text[first_end + 1 : max(closing.start() - 1, first_end + 1)])
    if isinstance(data, str):
        return Frontmatter({}, 0, (f"{data}; the block is read as markdown",))
    body_start = text.count("\n", 0, closing.start()) + 1
    return Frontmatter(data, body_start, (), min(closing.end() + 1, len(text)))


def _parse_yaml(source: str) -> dict[str, Any] | str:
    """The mapping, or why the block is not one."""
    try:
        data = yaml.load(source, Loader=_Loader)
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        return f"invalid frontmatter YAML: {reason}"
    if data is None:
        return {}
    if not isinstance(data, dict):
        return f"frontmatter is a {type(data).__name__}, not a mapping"
    try:
        converted: dict[str, Any] = _JsonSafe().convert(data)
    except _TooLarge:
        return (
            f"frontmatter expands to more than {_JsonSafe.MAX_VALUES:,} values"
            f" or {_JsonSafe.MAX_DEPTH} levels (YAML aliases)"
        )
    return converted
