"""Documents indexed both ways: uploaded to a collection and checked into a repository, byte
for byte.

The spec's advice is never to index a document both ways: it is embedded twice and the two
copies compete in retrieval while drifting apart. The gateway is where both stores and the
caller's access meet, so it looks the bytes up in the other store and adds a warning to each
document that has a copy there: on upload to a collection (copies in repositories), and when a
repository's documents are read (copies in collections). The bytes are looked up everywhere and
only the places they were found in are authorized, so the cost follows the copies, not the size
of the deployment; places the caller cannot read are never named. A store that is down or slow
only costs the warning, never the request.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import grpc
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_errors import MAX_CONTENT_HASHES
from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.identity import Principal
from cograph_gateway.schemas import DocumentResult, RepoDocument, RepoDocumentSummary

log = logging.getLogger(__name__)

LOOKUP_SECONDS = 2.0  # a request is not held up for long by a slow store
_TWICE = "indexed twice, it is embedded twice and the copies compete in retrieval; keep it in one place"

Copies = dict[str, list[str]]  # content hash -> where else it is indexed, as a person reads it


async def _matches(find: Callable[[list[str]], Awaitable[Any]], hashes: set[str]) -> list[Any]:
    """Every match `find` answers for the hashes, asked in slices a store takes (at most
    MAX_CONTENT_HASHES each: a batch may be configured larger), at once."""
    ordered = sorted(hashes)
    slices = [ordered[at : at + MAX_CONTENT_HASHES] for at in range(0, len(ordered), MAX_CONTENT_HASHES)]
    answers = await asyncio.gather(*(find(some) for some in slices))
    return [match for found in answers for match in found.matches]


async def _copies(
    store: str,
    find: Callable[[list[str]], Awaitable[Any]],
    hashes: set[str],
    where: Callable[[Any], tuple[str, str]],
    readable_among: Callable[[Iterable[str]], Awaitable[set[str]]],
) -> Copies:
    """The places of the store holding each of the hashes that the caller may read (`where`
    tells a match's owner id and its place as a person reads it), or nothing when the store is
    down or slow."""
    try:
        located = [(match.content_hash, *where(match)) for match in await _matches(find, hashes)]
        readable = await readable_among(owner for _, owner, _ in located)
    except aio.AioRpcError as error:
        if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise
        log.warning("copies of documents not looked up: %s answered %s", store, error.code().name)
        return {}
    copies: Copies = {}
    for content_hash, owner, place in located:
        if owner in readable:
            copies.setdefault(content_hash, []).append(place)
    return copies


async def warn_of_repository_copies(
    results: Sequence[DocumentResult],
    contents: Sequence[bytes],
    principal: Principal,
    backends: Backends,
    access: Access,
) -> None:
    """Add a warning to each stored upload result (in upload order, as contents) whose bytes a
    readable repository also holds as a document."""
    hashes = [hashlib.sha256(content).hexdigest() for content in contents]
    stored = [index for index, result in enumerate(results) if result.error is None]
    if not stored:
        return

    def find(some: list[str]) -> Awaitable[rpb.FindDocumentsByContentResponse]:
        request = rpb.FindDocumentsByContentRequest(content_hashes=some, every_repository=True)
        return backends.repodocs.FindDocumentsByContent(request, timeout=LOOKUP_SECONDS)

    copies = await _copies(
        "repodocs",
        find,
        {hashes[index] for index in stored},
        lambda match: (match.repository_id, f"{match.repository}:{match.path}"),
        lambda ids: access.readable_repositories_among(principal, ids),
    )
    for index in stored:
        if places := copies.get(hashes[index]):
            warning = f"also indexed as a repository doc ({', '.join(places)}): {_TWICE}"
            results[index].warnings.append(warning)


async def warn_of_collection_copies(
    documents: Sequence[RepoDocumentSummary | RepoDocument],
    principal: Principal,
    backends: Backends,
    access: Access,
) -> None:
    """Add a warning to each repository document whose bytes a readable collection also holds."""
    if not documents:
        return

    def find(some: list[str]) -> Awaitable[cpb.FindDocumentsByContentResponse]:
        request = cpb.FindDocumentsByContentRequest(content_hashes=some, every_collection=True)
        return backends.collections.FindDocumentsByContent(request, timeout=LOOKUP_SECONDS)

    copies = await _copies(
        "collections",
        find,
        {document.content_hash for document in documents},
        lambda match: (
            match.collection_id,
            f"{match.source_key} in collection {match.collection_name!r} ({match.collection_id})",
        ),
        lambda ids: access.readable_collections_among(principal, ids),
    )
    for document in documents:
        if places := copies.get(document.content_hash):
            document.warnings.append(f"also uploaded to a collection ({', '.join(places)}): {_TWICE}")
