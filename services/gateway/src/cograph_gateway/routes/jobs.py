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

from cograph_gateway import schemas as s
from cograph_gateway.errors import problem_responses
from cograph_gateway.operations import Operations
from cograph_gateway.operations.paging import PageRequest
from cograph_gateway.routes.common import CollectionId, JobId

StatusFilter = Annotated[s.JobStatusName | None, QueryParameter(description="Only jobs in this status")]
KindFilter = Annotated[s.JobKindName | None, QueryParameter(description="Only jobs of this kind")]


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
        ops: NamedDependency[Operations],
        page: NamedDependency[PageRequest],
        status: StatusFilter = None,
        kind: KindFilter = None,
    ) -> s.Page[s.Job]:
        return await ops.jobs.visible(status, kind, page)

    @get(
        "/{collection_id:str}/jobs",
        summary="Jobs of one collection (public, or yours)",
        responses=problem_responses(403, 404),
    )
    async def list_collection_jobs(
        self,
        collection_id: CollectionId,
        ops: NamedDependency[Operations],
        page: NamedDependency[PageRequest],
        status: StatusFilter = None,
        kind: KindFilter = None,
    ) -> s.Page[s.Job]:
        return await ops.jobs.of_collection(collection_id, status, kind, page)

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
        ops: NamedDependency[Operations],
    ) -> s.Job:
        return await ops.jobs.retry(job_id)
