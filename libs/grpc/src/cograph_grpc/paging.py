"""Page tokens for list RPCs: opaque to callers, the sort key of the last row shown underneath.

A page starts after that key (keyset paging), never at a count of rows: a row deleted or
added before the cursor meanwhile cannot make the next page skip or repeat one. Keys travel
as text; the SQL casts each part back to its column's type, so each part is checked against
that type first: a forged or damaged token is a clear InvalidArgument, never a failed cast.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import uuid
from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

from cograph_errors import InvalidArgument

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
T = TypeVar("T")

# What one part of a sort key must be: a check that raises ValueError on anything else. Parts
# are written by next_page_token as str() of the row's values, so only those spellings pass.
KeyPart = Callable[[str], object]


def _text(part: str) -> object:
    if "\x00" in part:  # PostgreSQL text holds no NUL
        raise ValueError("NUL")
    return part.encode()  # nor a lone surrogate, which JSON can spell


def _canonical(parse: Callable[[str], object]) -> KeyPart:
    def check(part: str) -> object:
        if str(parse(part)) != part:
            raise ValueError(f"{part!r} is not written as this service writes it")
        return part

    return check


def _int4(part: str) -> int:
    value = int(part)
    if not -(2**31) <= value < 2**31:
        raise ValueError("out of range")
    return value


TEXT: KeyPart = _text
UUID: KeyPart = _canonical(uuid.UUID)
INTEGER: KeyPart = _canonical(_int4)
TIMESTAMP: KeyPart = _canonical(dt.datetime.fromisoformat)


class PageRequest(NamedTuple):
    size: int
    # The previous page's last sort key, one text per part; None parts for the first page.
    after: list[str | None]

    @property
    def limit(self) -> int:
        """Rows to ask for: one more than the page shows, to know whether another follows."""
        return self.size + 1


def page_request(page_size: int, page_token: str, key: Sequence[KeyPart]) -> PageRequest:
    """The page a request asks for, its sort key's columns being of the types `key` checks."""
    if page_size < 0:
        raise InvalidArgument("page_size must not be negative")
    size = min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
    if not page_token:
        return PageRequest(size, [None] * len(key))
    try:
        after = json.loads(base64.urlsafe_b64decode(page_token.encode()))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        after = None
    if not (isinstance(after, list) and len(after) == len(key) and all(isinstance(p, str) for p in after)):
        raise InvalidArgument("page_token is not a token this service issued for this listing")
    try:
        for check, part in zip(key, after, strict=True):
            check(part)
    except ValueError:  # UnicodeEncodeError is one
        raise InvalidArgument("page_token is not a token this service issued for this listing") from None
    return PageRequest(size, after)


def next_page_token(rows: Sequence[T], page: PageRequest, key: Callable[[T], Sequence[object]]) -> str:
    """Token of the following page (after the last row shown), empty when `rows` (asked with
    page.limit) show there is none."""
    if len(rows) <= page.size:
        return ""
    last = [str(part) for part in key(rows[page.size - 1])]
    return base64.urlsafe_b64encode(json.dumps(last, ensure_ascii=False).encode()).decode()  # UTF-8: shorter
