"""What every controller shares: paging parameters and the problems an endpoint documents."""

from __future__ import annotations

from typing import Annotated

from litestar.params import PathParameter, QueryParameter

# The services cap a page at 500 rows; asking for more is a mistake worth a 400, not a silent cap.
PageSize = Annotated[
    int, QueryParameter(ge=1, le=500, description="Items per page (1 to 500); the default is 50.")
]
PageToken = Annotated[
    str,
    QueryParameter(
        max_length=200,
        description="The next_page_token of the previous page; omit it for the first page.",
    ),
]
DEFAULT_PAGE_SIZE = 50


def next_token(token: str) -> str | None:
    """The services answer an empty token on the last page; REST answers null."""
    return token or None


def uuid_path(what: str) -> PathParameter:
    """An id in the path: a UUID (anything else is a 400 naming the id)."""
    return PathParameter(format="uuid", description=f"The {what} id (a UUID).")


CollectionId = Annotated[str, uuid_path("collection")]
DocumentId = Annotated[str, uuid_path("document")]
ChunkId = Annotated[str, uuid_path("chunk")]
JobId = Annotated[str, uuid_path("job")]
NodeId = Annotated[str, uuid_path("code node")]
