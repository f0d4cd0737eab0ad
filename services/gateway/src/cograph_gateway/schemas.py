"""REST request and response bodies (msgspec Structs); the OpenAPI document is generated from them."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Generic, Literal, TypeVar

import msgspec
from msgspec import Meta

VisibilityName = Literal["public", "private", "admin_only"]


class CollectionCreate(msgspec.Struct, forbid_unknown_fields=True):
    name: Annotated[str, Meta(min_length=1, max_length=200)]
    description: Annotated[str, Meta(max_length=5000)] = ""
    visibility: VisibilityName = "private"


class Collection(msgspec.Struct):
    id: str
    name: str
    description: str
    visibility: VisibilityName
    owner: str
    group_grants: list[str]
    document_count: int
    chunk_count: int
    created_at: dt.datetime
    updated_at: dt.datetime


T = TypeVar("T")


class Page(msgspec.Struct, Generic[T]):
    items: list[T]
    next_page_token: str | None = None
