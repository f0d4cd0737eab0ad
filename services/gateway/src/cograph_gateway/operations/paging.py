"""Pages as every list operation takes and answers them."""

from __future__ import annotations

from typing import NamedTuple

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.repodocs.v1 import repodocs_service_pb2 as rpb

DEFAULT_PAGE_SIZE = 50


class PageRequest(NamedTuple):
    size: int = DEFAULT_PAGE_SIZE
    token: str = ""

    def collections(self) -> cpb.Page:
        return cpb.Page(page_size=self.size, page_token=self.token)

    def repodocs(self) -> rpb.Page:
        return rpb.Page(page_size=self.size, page_token=self.token)


def next_token(token: str) -> str | None:
    """The services answer an empty token on the last page; results answer null."""
    return token or None
