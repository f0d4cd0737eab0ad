"""Collection jobs: per collection, across collections, and retry.

Any signed-in caller lists the jobs of public and owned collections; retrying costs money, so it
needs ownership of the job's collection or the admin role.
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get, post
from litestar.di import NamedDependency
from litestar.params import QueryParameter
from litestar.status_codes import HTTP_202_ACCEPTED

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.convert import JOB_KIND_TO_PB, JOB_STATUS_TO_PB, job_from_pb
from cograph_gateway.errors import problem_responses
from cograph_gateway.identity import Principal
from cograph_gateway.policy import Operation
from cograph_gateway.routes.common import (
    DEFAULT_PAGE_SIZE,
    CollectionId,
    JobId,
    PageSize,
    PageToken,
    next_token,
)
from cograph_gateway.schemas import Job, JobKindName, JobStatusName, Page

StatusFilter = Annotated[JobStatusName | None, QueryParameter(description="Only jobs in this status")]
KindFilter = Annotated[JobKindName | None, QueryParameter(description="Only jobs of this kind")]


async def _list(
    backends: Backends,
    collection_ids: list[str],
    status: JobStatusName | None,
    kind: JobKindName | None,
    page_size: int,
    page_token: str,
) -> Page[Job]:
    response = await backends.collections.ListJobs(
        cpb.ListJobsRequest(
            collection_ids=collection_ids,
            status=JOB_STATUS_TO_PB[status] if status else cpb.JOB_STATUS_UNSPECIFIED,
            kind=JOB_KIND_TO_PB[kind] if kind else cpb.JOB_KIND_UNSPECIFIED,
            page=cpb.Page(page_size=page_size, page_token=page_token),
        )
    )
    return Page(
        items=[job_from_pb(j) for j in response.jobs], next_page_token=next_token(response.next_page_token)
    )


class JobsController(Controller):
    path = "/api/md-collections"
    tags = ("jobs",)

    # Declared as a static path: the router prefers it to /api/md-collections/{collection_id}.
    @get(
        "/jobs",
        summary="Jobs of every public collection and every collection you own",
        responses=problem_responses(),
    )
    async def list_jobs(
        self,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
        status: StatusFilter = None,
        kind: KindFilter = None,
        page_size: PageSize = DEFAULT_PAGE_SIZE,
        page_token: PageToken = "",
    ) -> Page[Job]:
        access.require(principal, Operation.LIST_JOBS)
        scope = await access.job_collections(principal)
        return await _list(backends, scope, status, kind, page_size, page_token)

    @get(
        "/{collection_id:str}/jobs",
        summary="Jobs of one collection (public, or yours)",
        responses=problem_responses(403, 404),
    )
    async def list_collection_jobs(
        self,
        collection_id: CollectionId,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
        status: StatusFilter = None,
        kind: KindFilter = None,
        page_size: PageSize = DEFAULT_PAGE_SIZE,
        page_token: PageToken = "",
    ) -> Page[Job]:
        found = await access.collection(principal, Operation.LIST_COLLECTION_JOBS, collection_id)
        return await _list(backends, [found.collection_id], status, kind, page_size, page_token)

    @post(
        "/jobs/{job_id:str}/retry",
        summary="Retry a job (owner of its collection, or admin); answers the new job",
        description="embed and resolve_links jobs can be retried. An upload job cannot (its content "
        "is not kept): that is a 409 telling you to upload the batch again.",
        status_code=HTTP_202_ACCEPTED,
        responses=problem_responses(403, 404, 409),
    )
    async def retry_job(
        self,
        job_id: JobId,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> Job:
        job = await access.job(principal, Operation.RETRY_JOB, job_id)
        response = await backends.collections.RetryJob(
            cpb.RetryJobRequest(job_id=job.id, requested_by=principal.subject)
        )
        return job_from_pb(response.job)
