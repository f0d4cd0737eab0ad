"""Collection jobs: listed to any signed-in caller (public and owned collections), retried by
the owner of the job's collection or an administrator, since a retry costs money."""

from __future__ import annotations

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph_gateway.convert import JOB_KIND_TO_PB, JOB_STATUS_TO_PB, job_from_pb
from cograph_gateway.operations.base import OperationGroup
from cograph_gateway.operations.paging import PageRequest, page_of
from cograph_gateway.policy import Operation
from cograph_gateway.schemas import Job, JobKindName, JobStatusName, Page


class JobOperations(OperationGroup):
    async def visible(
        self, status: JobStatusName | None, kind: JobKindName | None, page: PageRequest
    ) -> Page[Job]:
        """Jobs of every public collection and every collection the caller owns."""
        self._access.require(self._principal, Operation.LIST_JOBS)
        scope = await self._access.job_collections(self._principal)
        return await self._list(scope, status, kind, page)

    async def monitor(
        self, status: JobStatusName | None, kind: JobKindName | None, page: PageRequest
    ) -> Page[Job]:
        """The job monitor's list: the same jobs, for administrators only."""
        self._access.require(self._principal, Operation.JOB_MONITOR)
        return await self.visible(status, kind, page)

    async def of_collection(
        self,
        collection_id: str,
        status: JobStatusName | None,
        kind: JobKindName | None,
        page: PageRequest,
    ) -> Page[Job]:
        found = await self._access.collection(self._principal, Operation.LIST_COLLECTION_JOBS, collection_id)
        return await self._list([found.collection_id], status, kind, page)

    async def retry(self, job_id: str) -> Job:
        """A new job doing the failed one's work; answers it."""
        job = await self._access.job(self._principal, Operation.RETRY_JOB, job_id)
        response = await self._backends.collections.RetryJob(
            cpb.RetryJobRequest(job_id=job.id, requested_by=self._principal.subject)
        )
        return job_from_pb(response.job)

    async def _list(
        self,
        collection_ids: list[str],
        status: JobStatusName | None,
        kind: JobKindName | None,
        page: PageRequest,
    ) -> Page[Job]:
        response = await self._backends.collections.ListJobs(
            cpb.ListJobsRequest(
                collection_ids=collection_ids,
                status=JOB_STATUS_TO_PB[status] if status else cpb.JOB_STATUS_UNSPECIFIED,
                kind=JOB_KIND_TO_PB[kind] if kind else cpb.JOB_KIND_UNSPECIFIED,
                page=page.collections(),
            )
        )
        return page_of([job_from_pb(j) for j in response.jobs], response.next_page_token)
