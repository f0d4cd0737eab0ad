"""Applies the policy to real resources: fetches the access facts from the owning service, then decides.

One resource's facts are fetched by its id or name (GetCollectionAccess, GetRepositoryAccess), so
authorizing a request costs the same however many collections and repositories there are; the
full listings are read only to scope a list or a search to everything the caller may read. Facts
are fetched on every request and never cached: a removed grant takes effect on the next request,
and the work done is the same whether a resource is missing or merely unreadable.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import NamedTuple

import grpc
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_errors import shown
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


class RepositoryName(NamedTuple):
    """A repository as a request names it: host/owner/name, in any letter case."""

    host: str
    owner: str
    name: str

    @classmethod
    def parse(cls, slug: str) -> RepositoryName:
        """`host/owner/name` as one string (MCP tools take one)."""
        parts = slug.strip().strip("/").split("/")
        if len(parts) != 3 or not all(parts):
            raise Problem(
                400,
                f"{shown(slug)} is not a repository: name it as host/owner/name, e.g. github.com/acme/api",
            )
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.host}/{self.owner}/{self.name}"


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

    async def _collections(self, collection_ids: Iterable[str] = ()) -> list[CollectionAccess]:
        """The access facts of these collections, or of every one."""
        with naming_the_service("collections"):
            response = await self._backends.collections.ListCollectionAccess(
                cpb.ListCollectionAccessRequest(collection_ids=collection_ids), timeout=self._lookup_seconds
            )
        return [access_from_pb(entry) for entry in response.entries]

    async def _collection_access(self, collection_id: str) -> CollectionAccess | None:
        with naming_the_service("collections"):
            response = await self._backends.collections.GetCollectionAccess(
                cpb.GetCollectionAccessRequest(collection_id=collection_id), timeout=self._lookup_seconds
            )
        return access_from_pb(response.access) if response.HasField("access") else None

    async def readable_collections(self, principal: Principal) -> list[str]:
        return readable_collection_ids(principal, await self._collections())

    async def readable_collections_among(
        self, principal: Principal, collection_ids: Iterable[str]
    ) -> set[str]:
        """Which of these collections `principal` may read, from their facts alone."""
        wanted = sorted(set(collection_ids))
        return set(readable_collection_ids(principal, await self._collections(wanted))) if wanted else set()

    async def job_collections(self, principal: Principal) -> list[str]:
        return job_collection_ids(principal, await self._collections())

    async def collection(
        self, principal: Principal, operation: Operation, collection_id: str
    ) -> CollectionAccess:
        """The collection's access facts, if `principal` may do `operation` on it."""
        collection_id = parse_id(collection_id, "collection")
        access = await self._collection_access(collection_id)
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
        access = None if job is None else await self._collection_access(job.collection_id)
        outcome = decide(principal, operation, access, hide_collection_existence=self._hide)
        if outcome is Outcome.ALLOW:
            assert job is not None
            return job
        if outcome is Outcome.NOT_FOUND:
            raise Problem(404, f"job {job_id} does not exist")
        assert job is not None
        raise self._collection_refusal(outcome, operation, job.collection_id)

    # Repositories.

    async def _repositories(self, repository_ids: Iterable[str] = ()) -> list[RepositoryAccess]:
        """The access facts of these repositories, or of every one."""
        with naming_the_service("repodocs"):
            response = await self._backends.repodocs.ListRepositoryAccess(
                rpb.ListRepositoryAccessRequest(repository_ids=repository_ids), timeout=self._lookup_seconds
            )
        return [repository_access_from_pb(entry) for entry in response.entries]

    async def readable_repositories(self, principal: Principal) -> list[str]:
        return readable_repository_ids(principal, await self._repositories())

    async def readable_repositories_among(
        self, principal: Principal, repository_ids: Iterable[str]
    ) -> set[str]:
        """Which of these repositories `principal` may read, from their facts alone."""
        wanted = sorted(set(repository_ids))
        return set(readable_repository_ids(principal, await self._repositories(wanted))) if wanted else set()

    async def readable_repository_slugs(self, principal: Principal) -> dict[str, str]:
        """Readable repository ids to their host/owner/name, for citing search hits."""
        entries = await self._repositories()
        readable = set(readable_repository_ids(principal, entries))
        return {e.repository_id: e.slug for e in entries if e.repository_id in readable}

    async def repository(
        self, principal: Principal, operation: Operation, repository: RepositoryName
    ) -> RepositoryAccess:
        """The repository's access facts, if `principal` may do `operation` on it.

        Unreadable and missing answer the same 404, built from the request alone, after the same
        work: one lookup by name either way, then the policy decides.
        """
        found = await self._repository_access(repository)
        outcome = decide(principal, operation, found)
        if outcome is Outcome.ALLOW:
            assert found is not None
            return found
        if outcome is Outcome.UNAUTHENTICATED:
            raise Problem(401, _sign_in(operation))
        if outcome is Outcome.FORBIDDEN:
            raise Problem(403, f"only the owner or an administrator may change repository {repository}")
        raise repository_not_found(repository)

    async def _repository_access(self, repository: RepositoryName) -> RepositoryAccess | None:
        # Registered names are stored trimmed, and the store trims what it is asked: a name with
        # blanks around it is another name, which no repository has.
        if any(part != part.strip() for part in repository):
            return None
        try:
            with naming_the_service("repodocs"):
                response = await self._backends.repodocs.GetRepositoryAccess(
                    rpb.GetRepositoryAccessRequest(
                        ref=rpb.RepositoryRef(
                            host=repository.host, owner=repository.owner, name=repository.name
                        )
                    ),
                    timeout=self._lookup_seconds,
                )
        except aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                return None  # a name no repository can have, as the store judges names
            raise
        return repository_access_from_pb(response.access) if response.HasField("access") else None


def repository_not_found(repository: RepositoryName) -> Problem:
    return Problem(404, f"repository {shown(str(repository))} does not exist")
