"""The leading '---' YAML block: parsed, never raising, normalised to JSON-safe values."""

from __future__ import annotations

import base64
import datetime
from typing import Any

import msgspec
import yaml

try:  # libyaml is an order of magnitude faster than the pure-Python loader
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_OPENING = "---"
_CLOSINGS = ("---", "...")


class Frontmatter(msgspec.Struct, frozen=True):
    data: dict[str, Any]
    body_start: int  # index of the first body line (0 when there is no frontmatter)
    warnings: tuple[str, ...] = ()


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


def split_frontmatter(lines: list[str]) -> Frontmatter:
    """Frontmatter of a document given as lines. An unclosed '---' block is not frontmatter."""
    if not lines or lines[0].rstrip() != _OPENING:
        return Frontmatter({}, 0)
    for index in range(1, len(lines)):
        if lines[index].rstrip() in _CLOSINGS:
            return _parse_yaml("\n".join(lines[1:index]), index + 1)
    return Frontmatter({}, 0)


def _parse_yaml(source: str, body_start: int) -> Frontmatter:
    try:
        data = yaml.load(source, Loader=_Loader)
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        return Frontmatter({}, body_start, (f"invalid frontmatter YAML: {reason}",))
    if data is None:
        return Frontmatter({}, body_start)
    if not isinstance(data, dict):
        return Frontmatter({}, body_start, (f"frontmatter is a {type(data).__name__}, not a mapping",))
    return Frontmatter(_json_safe(data), body_start)
