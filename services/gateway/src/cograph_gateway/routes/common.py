"""What every controller shares: paging parameters and the problems an endpoint documents."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import unquote_to_bytes

from litestar import Request
from litestar.params import FromPath, PathParameter, QueryParameter

from cograph_gateway import schemas as s
from cograph_gateway.access import RepositoryName
from cograph_gateway.errors import Problem
from cograph_gateway.operations.paging import DEFAULT_PAGE_SIZE, PageRequest

# The services cap a page at 500 rows; asking for more is a mistake worth a 400, not a silent cap.
PageSize = Annotated[
    int, QueryParameter(ge=1, le=500, description="Items per page (1 to 500); the default is 50.")
]
# A token carries the last row's sort key (a source key or path of up to a few KiB), base64-encoded.
MAX_PAGE_TOKEN = 16384
PageToken = Annotated[
    str,
    QueryParameter(
        max_length=MAX_PAGE_TOKEN,
        description="The next_page_token of the previous page; omit it for the first page.",
    ),
]


def page(page_size: PageSize = DEFAULT_PAGE_SIZE, page_token: PageToken = "") -> PageRequest:
    """The page a list asks for, as the `page` dependency of every list route."""
    return PageRequest(page_size, page_token)


def repository_in_path(host: FromPath[str], owner: FromPath[str], name: FromPath[str]) -> RepositoryName:
    """The repository a path names as /{host}/{owner}/{name}: the `repository` dependency of the
    REST routes and the reader's pages under such a path."""
    return RepositoryName(host, owner, name)


def uuid_path(what: str) -> PathParameter:
    """An id in the path: a UUID (anything else is a 400 naming the id)."""
    return PathParameter(format="uuid", description=f"The {what} id (a UUID).")


# The group of .../grants/{group}, stated as a group in a body is; the services judge it.
GroupInPath = Annotated[
    str,
    PathParameter(
        description="The group's name, URL-encoded (%2F for a '/' in it).",
        schema_extra={"pattern": s.TYPED_TEXT},
    ),
]
CollectionId = Annotated[str, uuid_path("collection")]
DocumentId = Annotated[str, uuid_path("document")]
ChunkId = Annotated[str, uuid_path("chunk")]
JobId = Annotated[str, uuid_path("job")]
NodeId = Annotated[str, uuid_path("code node")]


def granted_group(request: Request[Any, Any, Any], routed: str) -> str:
    """The group a `.../grants/{group}` path names. Group names may hold '/' (an identity
    provider's group path such as /eng/backend, sent as %2Feng%2Fbackend); the router has
    decoded that before matching, so the name is read from the raw path, after as many
    segments as the route has before {group} (a name may itself hold '/grants/'). `routed`
    (the router's reading) serves when the server gives no raw path."""
    raw: bytes | None = request.scope.get("raw_path")
    template: str = request.scope.get("path_template", "")
    if not raw or "/{group" not in template:
        return routed.removeprefix("/")
    before = sum(1 for segment in template.partition("/{group")[0].split("/") if segment)
    parts = raw.split(b"/")
    seen = 0
    for position, part in enumerate(parts):
        seen += bool(part)  # '//' is one separator to the router too
        if seen == before:
            name = b"/".join(parts[position + 1 :])
            break
    else:
        return routed.removeprefix("/")
    try:
        # A literal trailing '/' is the URL's, as the router reads it; an encoded one (%2F) is the name's.
        return unquote_to_bytes(name.rstrip(b"/")).decode()
    except UnicodeDecodeError:
        raise Problem(400, "the group name in the path is not UTF-8") from None
