"""Rules of the collections domain that need no I/O."""

from __future__ import annotations

import enum

from cograph_grpc import InvalidArgument, check_typed_text

MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 5000


class Visibility(enum.StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"
    ADMIN_ONLY = "admin_only"


def check_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise InvalidArgument("a collection needs a name")
    if len(name) > MAX_NAME_CHARS:
        raise InvalidArgument(f"a collection name has at most {MAX_NAME_CHARS} characters")
    check_typed_text(name, "collection name")
    return name


def check_description(description: str) -> str:
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise InvalidArgument(f"a description has at most {MAX_DESCRIPTION_CHARS} characters")
    check_typed_text(description, "description")
    return description


def check_group(group: str) -> str:
    group = group.strip()
    if not group or len(group) > MAX_NAME_CHARS:
        raise InvalidArgument(f"a group name has 1 to {MAX_NAME_CHARS} characters")
    check_typed_text(group, "group name")
    return group
