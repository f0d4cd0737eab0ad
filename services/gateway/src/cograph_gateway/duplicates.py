"""Documents uploaded to a collection that a repository already indexes, byte for byte.

The spec's advice is never to index a document both ways: it is embedded twice and the two
copies compete in retrieval while drifting apart. The gateway is where both stores and the
caller's readable repositories meet, so it looks the uploaded bytes up there and adds a
warning to each stored document that has a copy; repositories the caller cannot read are
never named. A repodocs service that is down only costs the warning, never the upload.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence

import grpc
from grpc import aio

from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.identity import Principal
from cograph_gateway.schemas import DocumentResult

log = logging.getLogger(__name__)

LOOKUP_SECONDS = 2.0  # an upload is not held up for long by a slow repodocs


async def warn_of_repository_copies(
    results: Sequence[DocumentResult],
    contents: Sequence[bytes],
    principal: Principal,
    backends: Backends,
    access: Access,
) -> None:
    """Add a warning to each stored result (in upload order, as contents) whose bytes a
    readable repository also holds as a document."""
    hashes = [hashlib.sha256(content).hexdigest() for content in contents]
    stored = [index for index, result in enumerate(results) if result.error is None]
    if not stored:
        return
    try:
        repositories = await access.readable_repositories(principal)
        if not repositories:
            return
        found = await backends.repodocs.FindDocumentsByContent(
            rpb.FindDocumentsByContentRequest(
                content_hashes=sorted({hashes[index] for index in stored}), repository_ids=repositories
            ),
            timeout=LOOKUP_SECONDS,
        )
    except aio.AioRpcError as error:
        if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise
        log.warning("repository copies not looked up: repodocs answered %s", error.code().name)
        return
    copies: dict[str, list[str]] = {}
    for match in found.matches:
        copies.setdefault(match.content_hash, []).append(f"{match.repository}:{match.path}")
    for index in stored:
        places = copies.get(hashes[index])
        if places:
            results[index].warnings.append(
                f"also indexed as a repository doc ({', '.join(places)}): indexed twice, it is embedded"
                " twice and the copies compete in retrieval; keep it in one place"
            )
