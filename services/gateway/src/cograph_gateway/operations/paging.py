"""Pages as every list operation takes and answers them."""

from __future__ import annotations

from typing import NamedTuple, TypeVar

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_gateway.schemas import Page

DEFAULT_PAGE_SIZE = 50
T = TypeVar("T")


class PageRequest(NamedTuple):
    size: int = DEFAULT_PAGE_SIZE
    token: str = ""

    def collections(self) -> cpb.Page:
        return cpb.Page(page_size=self.size, page_token=self.token)

    def repodocs(self) -> rpb.Page:
        return rpb.Page(page_size=self.size, page_token=self.token)


def page_of(items: list[T], next_page_token: str) -> Page[T]:
    """A page of results; the services answer an empty token on the last page, results null."""
    return Page(items=items, next_page_token=next_page_token or None)
