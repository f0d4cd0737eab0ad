"""Checks on free text a person typed (search queries, name filters), shared by every service."""

from __future__ import annotations

import re

from cograph_grpc.errors import InvalidArgument

# Control characters other than tab, newline and carriage return: PostgreSQL refuses NUL in
# text, and none of them is anything a person searches for.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def check_typed_text(text: str, what: str = "query") -> None:
    """Raise InvalidArgument, naming the character, when text holds a control character."""
    if control := _CONTROL.search(text):
        raise InvalidArgument(
            f"the {what} contains a control character (U+{ord(control.group()):04X}), which cannot be"
            " searched for: remove it"
        )
