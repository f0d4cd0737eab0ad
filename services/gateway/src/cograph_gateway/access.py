"""Applies the policy to real resources: fetches the access facts from the owning service, then decides.

The facts are fetched on every request, whole, and never cached: a removed grant takes effect on the
next request, and the work done is the same whether a resource is missing or merely unreadable.
"""

from __future__ import annotations

import uuid

import grpc
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_gateway.backends import Backends
from cograph_gateway.convert import access_from_pb, repository_access_from_pb
from cograph_gateway.errors import Problem, naming_the_service
from cograph_gateway.identity import Principal
from cograph_gateway.policy import (
    CollectionAccess,
    Operation,
    Outcome,
    RepositoryAccess,
    Rule,
    decide,
    job_collection_ids,
    readable_collection_ids,
    readable_repository_ids,
)
from cograph_grpc import shown


def parse_id(value: str, what: str) -> str:
    """Ids are UUIDs; the canonical form is what the services store, so lookups compare equal."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise Problem(400, f"{shown(value)} is not a {what} id: {what} ids are UUIDs") from None


def _sign_in(operation: Operation) -> str:
    return f"sign in to use {operation.value}: send 'Authorization: Bearer <token>'"


class Access:
    """Authorization of one request's resources; raises the refusal as a problem."""

    def __init__(
        self, backends: Backends, *, hide_collection_existence: bool, lookup_seconds: float | None = None
    ) -> None:
        self._backends = backends
        self._hide = hide_collection_existence
        # The access lists are small reads: a store that cannot give one this fast is down or
        # stuck, and a search must go on without it rather than wait out the whole gRPC deadline.
        self._lookup_seconds = lookup_seconds

    def require(self, principal: Principal, operation: Operation) -> None:
        """Operations on no particular resource (create, register, list jobs)."""
        assert operation.rule in (Rule.SCOPED, Rule.SIGNED_IN, Rule.ADMIN)
        outcome = decide(principal, operation)
        if outcome is Outcome.UNAUTHENTICATED:
            raise Problem(401, _sign_in(operation))
        if outcome is Outcome.FORBIDDEN:
            raise Problem(403, f"only an administrator may use {operation.value}")

    # Collections.

    async def _collections(self) -> dict[str, CollectionAccess]:
        with naming_the_service("collections"):
            response = await self._backends.collections.ListCollectionAccess(
                cpb.ListCollectionAccessRequest(), timeout=self._lookup_seconds
            )
        return {entry.collection_id: access_from_pb(entry) for entry in response.entries}

    async def readable_collections(self, principal: Principal) -> list[str]:
        return readable_collection_ids(principal, (await self._collections()).values())

    async def job_collections(self, principal: Principal) -> list[str]:
        return job_collection_ids(principal, (await self._collections()).values())

    async def collection(
        self, principal: Principal, operation: Operation, collection_id: str
    ) -> CollectionAccess:
        """The collection's access facts, if `principal` may do `operation` on it."""
        collection_id = parse_id(collection_id, "collection")
        access = (await self._collections()).get(collection_id)
        outcome = decide(principal, operation, access, hide_collection_existence=self._hide)
        if outcome is Outcome.ALLOW:
            assert access is not None
            return access
        raise self._collection_refusal(outcome, operation, collection_id)

    def _collection_refusal(self, outcome: Outcome, operation: Operation, collection_id: str) -> Problem:
        if outcome is Outcome.NOT_FOUND:
            return Problem(404, f"collection {collection_id} does not exist")
        if outcome is Outcome.UNAUTHENTICATED:
            return Problem(401, _sign_in(operation))
        rule = operation.rule
        if rule is Rule.READ_COLLECTION:
            detail = (
                f"you may not read collection {collection_id}: it is not public, not yours,"
                " and not granted to any of your groups"
            )
        elif rule is Rule.COLLECTION_JOBS:
            detail = f"the jobs of collection {collection_id} are listed to its owner only (it is not public)"
        elif rule is Rule.RETRY_JOB:
            detail = f"only the owner of collection {collection_id} or an administrator may retry its jobs"
        else:
            detail = f"only the owner or an administrator may change collection {collection_id}"
        return Problem(403, detail)

    async def job(self, principal: Principal, operation: Operation, job_id: str) -> cpb.Job:
        """A job the caller may act on (retry): ownership of its collection or the admin role."""
        job_id = parse_id(job_id, "job")
        if not principal.subject:
            raise Problem(401, _sign_in(operation))
        try:
            job = (await self._backends.collections.GetJob(cpb.GetJobRequest(job_id=job_id))).job
        except aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise
            job = None
        access = None if job is None else (await self._collections()).get(job.collection_id)
        outcome = decide(principal, operation, access, hide_collection_existence=self._hide)
        if outcome is Outcome.ALLOW:
            assert job is not None
            return job
        if outcome is Outcome.NOT_FOUND:
            raise Problem(404, f"job {job_id} does not exist")
        assert job is not None
        raise self._collection_refusal(outcome, operation, job.collection_id)

    # Repositories.

    async def _repositories(self) -> list[RepositoryAccess]:
        with naming_the_service("repodocs"):
            response = await self._backends.repodocs.ListRepositoryAccess(
                rpb.ListRepositoryAccessRequest(), timeout=self._lookup_seconds
            )
        return [repository_access_from_pb(entry) for entry in response.entries]

    async def readable_repositories(self, principal: Principal) -> list[str]:
        return readable_repository_ids(principal, await self._repositories())

    async def readable_repository_slugs(self, principal: Principal) -> dict[str, str]:
        """Readable repository ids to their host/owner/name, for citing search hits."""
        entries = await self._repositories()
        readable = set(readable_repository_ids(principal, entries))
        return {e.repository_id: e.slug for e in entries if e.repository_id in readable}

    async def repository(
        self, principal: Principal, operation: Operation, host: str, owner: str, name: str
    ) -> RepositoryAccess:
        """The repository's access facts, if `principal` may do `operation` on it.

        Unreadable and missing answer the same 404, built from the request alone, after the same
        work: the whole access list is fetched and scanned either way, then the policy decides.
        """
        found = _the_repository(await self._repositories(), host, owner, name)
        outcome = decide(principal, operation, found)
        if outcome is Outcome.ALLOW:
            assert found is not None
            return found
        if outcome is Outcome.UNAUTHENTICATED:
            raise Problem(401, _sign_in(operation))
        if outcome is Outcome.FORBIDDEN:
            raise Problem(
                403, f"only the owner or an administrator may change repository {host}/{owner}/{name}"
            )
        raise repository_not_found(host, owner, name)

    async def repository_by_slug(
        self, principal: Principal, operation: Operation, slug: str
    ) -> RepositoryAccess:
        """The same, for a repository named `host/owner/name` (MCP tools take one string)."""
        parts = slug.strip().strip("/").split("/")
        if len(parts) != 3 or not all(parts):
            raise Problem(
                400,
                f"{shown(slug)} is not a repository: name it as host/owner/name, e.g. github.com/acme/api",
            )
        return await self.repository(principal, operation, *parts)


def _the_repository(
    entries: list[RepositoryAccess], host: str, owner: str, name: str
) -> RepositoryAccess | None:
    """The entry named host/owner/name in any letter case, as git hosts name repositories (the
    store keeps one per name whatever the case); should two ever match, only the exact spelling
    does, so a request never lands on a repository it did not name."""
    wanted = (host.lower(), owner.lower(), name.lower())
    matches = [e for e in entries if (e.host.lower(), e.owner.lower(), e.name.lower()) == wanted]
    if len(matches) > 1:
        matches = [e for e in matches if (e.host, e.owner, e.name) == (host, owner, name)]
    return matches[0] if len(matches) == 1 else None


def repository_not_found(host: str, owner: str, name: str) -> Problem:
    return Problem(404, f"repository {shown(f'{host}/{owner}/{name}')} does not exist")
