"""A running collections service, as the integration tests use it."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_collections.domain.documents import wiki_key
from cograph_db import Connection
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


async def insert_stored_documents(
    connection: Connection, *source_keys: str
) -> tuple[uuid.UUID, dict[str, uuid.UUID]]:
    """A collection and empty documents written straight into the collections schema (on the
    connection's search path), as an earlier release stored them: for tests of a migration.
    Answers the collection id and each key's document id."""
    collection_id: uuid.UUID = await connection.fetchval(
        "INSERT INTO md_collections (name, visibility, owner) VALUES ('Old', 'public', 'alice') RETURNING id"
    )
    documents = {}
    for key in source_keys:
        documents[key] = await connection.fetchval(
            "INSERT INTO md_documents (collection_id, source_key, normalised_key, wiki_key, content,"
            " content_hash, size_bytes) VALUES ($1, $2, $2, $3, '', 'h', 0) RETURNING id",
            collection_id,
            key,
            wiki_key(key),
        )
    return collection_id, documents


async def insert_stored_link(
    connection: Connection,
    document_id: uuid.UUID,
    collection_id: uuid.UUID,
    ordinal: int,
    href: str,
    link_type: str,
    target_key: str | None,
    bound_to: uuid.UUID | None,
) -> None:
    """A link as an earlier release stored and bound it, beside insert_stored_documents."""
    await connection.execute(
        "INSERT INTO md_links (document_id, collection_id, ordinal, text, href, line, link_type,"
        " target_key, target_document_id) VALUES ($1, $2, $3, '', $4, 3, $5, $6, $7)",
        document_id,
        collection_id,
        ordinal,
        href,
        link_type,
        target_key,
        bound_to,
    )
