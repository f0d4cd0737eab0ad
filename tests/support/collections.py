"""A running collections service, as the integration tests use it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_service import ServiceHost
from cograph_settings import Settings
from support.embedding import CountingProvider


@dataclass
class Running:
    host: ServiceHost
    stub: pb_grpc.CollectionsServiceAsyncStub
    counter: CountingProvider
    settings: Settings

    async def upload(self, collection_id: str, *docs: tuple[str, bytes]) -> pb.UploadDocumentsResponse:
        return await self.stub.UploadDocuments(
            pb.UploadDocumentsRequest(
                collection_id=collection_id,
                documents=[pb.DocumentContent(source_key=key, content=content) for key, content in docs],
                requested_by="alice",
            )
        )

    async def wait_for_jobs(self, collection_id: str, timeout: float = 120.0) -> list[pb.Job]:
        """Until no job of the collection is queued or running; answers them all."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            jobs = (await self.stub.ListJobs(pb.ListJobsRequest(collection_ids=[collection_id]))).jobs
            if all(job.status in (pb.JOB_STATUS_SUCCESS, pb.JOB_STATUS_ERROR) for job in jobs):
                return list(jobs)
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"jobs still pending: {jobs}")
            await asyncio.sleep(0.1)
