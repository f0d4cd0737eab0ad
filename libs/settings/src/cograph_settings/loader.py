"""Read Settings from COGRAPH_<SECTION>__<KEY> variables, failing fast with a readable message."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

import msgspec

from cograph_settings.model import Settings

PREFIX = "COGRAPH_"
# Read by the client commands (`cograph repo|collection|search`), not settings of a service:
# a shell that exports them must still be able to run `cograph up`.
CLIENT_VARIABLES = frozenset({"COGRAPH_URL", "COGRAPH_TOKEN"})
_PATH = re.compile(r"\$\.(\w+)\.(\w+)")


class SettingsError(ValueError):
    """A setting is unknown or its value does not fit; the message names the variable."""


def env_name(section: str, key: str) -> str:
    return f"{PREFIX}{section.upper()}__{key.upper()}"


def _fields() -> Iterator[tuple[str, msgspec.inspect.Field]]:
    info = msgspec.inspect.type_info(Settings)
    assert isinstance(info, msgspec.inspect.StructType)
    for section in info.fields:
        section_type = section.type
        assert isinstance(section_type, msgspec.inspect.StructType)
        for field in section_type.fields:
            yield section.name, field


def _unwrap(field_type: msgspec.inspect.Type) -> msgspec.inspect.Type:
    return field_type.type if isinstance(field_type, msgspec.inspect.Metadata) else field_type


def _description(field_type: msgspec.inspect.Type) -> str:
    if isinstance(field_type, msgspec.inspect.Metadata) and field_type.extra_json_schema:
        return str(field_type.extra_json_schema.get("description", ""))
    return ""


def _is_structured(field_type: msgspec.inspect.Type) -> bool:
    """Lists and objects are given as JSON text in the environment."""
    return isinstance(
        _unwrap(field_type),
        msgspec.inspect.ListType | msgspec.inspect.DictType | msgspec.inspect.StructType,
    )


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Build Settings from the environment; unknown COGRAPH_ variables are an error, not a silent typo."""
    environ = os.environ if environ is None else environ
    known = {env_name(section, field.name): (section, field) for section, field in _fields()}
    data: dict[str, dict[str, Any]] = {}
    for name, raw in environ.items():
        if not name.startswith(PREFIX) or name in CLIENT_VARIABLES:
            continue
        if name not in known:
            raise SettingsError(f"{name} is not a setting; the settings are listed in the README")
        section, field = known[name]
        # A value read from a file (a Kubernetes Secret made with --from-file) ends with a
        # newline that is no part of a DSN, a key or a secret.
        value: Any = raw.strip()
        if _is_structured(field.type):
            try:
                value = msgspec.json.decode(value)
            except msgspec.DecodeError as exc:
                raise SettingsError(f"{name} must be JSON: {exc}") from None
        data.setdefault(section, {})[field.name] = value
    try:
        return msgspec.convert(data, Settings, strict=False)
    except msgspec.ValidationError as exc:
        message = str(exc)
        match = _PATH.search(message)
        reason = message.split(" - at ", maxsplit=1)[0]
        if reason.startswith(PREFIX):  # a check across fields names its variables itself
            raise SettingsError(reason) from None
        where = env_name(match.group(1), match.group(2)) if match else "settings"
        raise SettingsError(f"{where}: {reason}") from None


def settings_table() -> str:
    """The configuration table of the README, generated so it cannot drift from the code."""
    defaults = Settings()
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for section, field in _fields():
        default = getattr(getattr(defaults, section), field.name)
        shown = msgspec.json.encode(default).decode() if _is_structured(field.type) else str(default)
        if isinstance(default, bool):
            shown = shown.lower()
        rows.append(f"| `{env_name(section, field.name)}` | `{shown}` | {_description(field.type)} |")
    return "\n".join(rows)
