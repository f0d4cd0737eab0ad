"""Page tokens for list RPCs: opaque to callers, an offset underneath."""

from __future__ import annotations

import base64
import binascii

from cograph_grpc.errors import InvalidArgument

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
# Far beyond any real listing, and within PostgreSQL's bigint OFFSET.
MAX_OFFSET = 2**40


def page_window(page_size: int, page_token: str) -> tuple[int, int]:
    """(limit, offset) for a page request; asks one row more to know whether a next page exists."""
    if page_size < 0:
        raise InvalidArgument("page_size must not be negative")
    size = min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
    offset = 0
    if page_token:
        try:
            offset = int(base64.urlsafe_b64decode(page_token.encode()).decode())
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise InvalidArgument("page_token is not a token this service issued") from None
        if not 0 <= offset <= MAX_OFFSET:
            raise InvalidArgument("page_token is not a token this service issued")
    return size, offset


def next_page_token(offset: int, size: int, fetched: int) -> str:
    """Token of the following page, empty when `fetched` (asked size + 1) shows there is none."""
    if fetched <= size:
        return ""
    return base64.urlsafe_b64encode(str(offset + size).encode()).decode()
