"""The leading '---' YAML block: parsed, never raising, normalised to JSON-safe values."""

from __future__ import annotations

import base64
import datetime
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


def _json_safe(value: Any) -> Any:
    """Frontmatter ends up in jsonb: dates become ISO strings, keys strings, bytes base64."""
    if isinstance(value, dict):
        return {str(key): _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [_json_safe(item) for item in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


def split_frontmatter(text: str) -> Frontmatter:
    """Frontmatter of a document (lines ended by \\n). An unclosed '---' block is not frontmatter."""
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].rstrip() != "---":
        return Frontmatter({}, 0)
    closing = _CLOSING.search(text, first_end + 1)
    if closing is None:
        return Frontmatter({}, 0)
    data, warnings = _parse_yaml(text[first_end + 1 : max(closing.start() - 1, first_end + 1)])
    body_start = text.count("\n", 0, closing.start()) + 1
    return Frontmatter(data, body_start, warnings, min(closing.end() + 1, len(text)))


def _parse_yaml(source: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    try:
        data = yaml.load(source, Loader=_Loader)
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        return {}, (f"invalid frontmatter YAML: {reason}",)
    if data is None:
        return {}, ()
    if not isinstance(data, dict):
        return {}, (f"frontmatter is a {type(data).__name__}, not a mapping",)
    return _json_safe(data), ()
