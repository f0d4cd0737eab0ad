"""Collections and who may read them: the rules their fields must pass, and their structs."""

from __future__ import annotations

import datetime as dt
import enum
import uuid

import msgspec

from cograph_errors import InvalidArgument, check_typed_text

MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 5000
# Every request's access check reads every grant: their number is bounded (a user granting
# 100,000 groups slowed every reader's request, and 400,000 overflowed the gRPC message).
MAX_GROUP_GRANTS = 100


class Visibility(enum.StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"
    ADMIN_ONLY = "admin_only"


class Collection(msgspec.Struct, frozen=True):
    id: uuid.UUID
    name: str
    description: str
    visibility: Visibility
    owner: str
    group_grants: list[str]
    document_count: int
    chunk_count: int
    created_at: dt.datetime
    updated_at: dt.datetime


class Access(msgspec.Struct, frozen=True):
    """What deciding who may read a collection needs of it."""

    id: uuid.UUID
    visibility: Visibility
    owner: str
    group_grants: list[str]


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


def check_visibility(visibility: str) -> Visibility:
    try:
        return Visibility(visibility)
    except ValueError:
        raise InvalidArgument("visibility must be public, private or admin_only") from None


def check_owner(owner: str) -> str:
    if not owner:
        raise InvalidArgument("a collection needs an owner")
    check_typed_text(owner, "owner")
    return owner


def check_group(group: str) -> str:
    group = group.strip()
    if not group or len(group) > MAX_NAME_CHARS:
        raise InvalidArgument(f"a group name has 1 to {MAX_NAME_CHARS} characters")
    check_typed_text(group, "group name")
    return group
