"""Wiring: migrations -> pool -> application -> servicer -> gRPC server + ops HTTP."""

from __future__ import annotations

from typing import Any

import asyncpg

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_collections.application.collections import Collections
from cograph_collections.application.documents import Documents
from cograph_collections.application.jobs import Jobs
from cograph_collections.application.search import ChunkSearch
from cograph_collections.application.worker import Worker
from cograph_collections.rpc import CollectionsServicer
from cograph_db import Migrations, open_service_pool
from cograph_embeddings import EmbeddingProvider
from cograph_grpc import GrpcServer
from cograph_service import DATABASE_OUTAGE, Readiness, ServiceHost, database_check
from cograph_settings import Settings

NAME = "collections"
MIGRATIONS = Migrations(schema="collections", package="cograph_collections")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["CollectionsService"].full_name


def _documents(pool: asyncpg.Pool[Any], embedder: EmbeddingProvider, settings: Settings) -> Documents:
    return Documents(
        pool,
        embedder,
        max_document_bytes=settings.collections.max_document_bytes,
        max_batch_documents=settings.collections.max_batch_documents,
        heartbeat_seconds=settings.collections.heartbeat_seconds,
    )


async def create_service(
    settings: Settings, dsn: str, embedder: EmbeddingProvider, *, with_worker: bool = False
) -> ServiceHost:
    """The gRPC service; `with_worker` also runs a job worker in this process (as `cograph up` does)."""
    pool = await open_service_pool(dsn, settings.database, MIGRATIONS)
    documents = _documents(pool, embedder, settings)
    jobs = Jobs(pool, max_attempts=settings.collections.job_max_attempts)
    servicer = CollectionsServicer(Collections(pool), documents, jobs, ChunkSearch(pool))
    server = GrpcServer(
        NAME,
        settings.grpc,
        service_names=[SERVICE_NAME],
        register=[lambda s: pb_grpc.add_CollectionsServiceServicer_to_server(servicer, s)],
        outages=[DATABASE_OUTAGE],
    )
    readiness = Readiness(NAME, {"database": database_check(pool, MIGRATIONS)})
    closers = [pool.close]
    if with_worker:
        worker = Worker(pool, dsn, documents.handlers(), settings.collections)
        await worker.start()
        closers.insert(0, worker.stop)
    return ServiceHost(NAME, server, readiness, closers=closers)


async def create_worker(settings: Settings, dsn: str, embedder: EmbeddingProvider) -> ServiceHost:
    """A worker process (`cograph worker`): no collections RPCs, only jobs, health and metrics."""
    pool = await open_service_pool(dsn, settings.database, MIGRATIONS)
    worker = Worker(pool, dsn, _documents(pool, embedder, settings).handlers(), settings.collections)
    await worker.start()
    server = GrpcServer("collections-worker", settings.grpc)
    readiness = Readiness("collections-worker", {"database": database_check(pool, MIGRATIONS)})
    return ServiceHost("collections-worker", server, readiness, closers=[worker.stop, pool.close])
