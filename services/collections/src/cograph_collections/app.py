"""Wiring: migrations -> pool -> servicer -> gRPC server + ops HTTP."""

from __future__ import annotations

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_collections.rpc import CollectionsServicer
from cograph_collections.service import Collections
from cograph_collections.worker import Worker
from cograph_db import Migrations, open_service_pool
from cograph_embeddings import EmbeddingProvider
from cograph_grpc import GrpcServer
from cograph_service import Readiness, ServiceHost, database_check
from cograph_settings import Settings

NAME = "collections"
MIGRATIONS = Migrations(schema="collections", package="cograph_collections")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["CollectionsService"].full_name


async def create_service(
    settings: Settings, dsn: str, embedder: EmbeddingProvider, *, with_worker: bool = False
) -> ServiceHost:
    """The gRPC service; `with_worker` also runs a job worker in this process (as `cograph up` does)."""
    pool = await open_service_pool(dsn, settings.database, MIGRATIONS)
    collections = Collections(
        pool,
        embedder,
        max_document_bytes=settings.collections.max_document_bytes,
        heartbeat_seconds=settings.collections.heartbeat_seconds,
    )
    servicer = CollectionsServicer(pool, collections, settings.collections.max_batch_documents)
    server = GrpcServer(
        NAME,
        settings.grpc,
        service_names=[SERVICE_NAME],
        register=[lambda s: pb_grpc.add_CollectionsServiceServicer_to_server(servicer, s)],
    )
    readiness = Readiness(NAME, {"database": database_check(pool, MIGRATIONS)})
    closers = [pool.close]
    if with_worker:
        worker = Worker(pool, dsn, collections.handlers(), settings.collections)
        await worker.start()
        closers.insert(0, worker.stop)
    return ServiceHost(NAME, server, readiness, closers=closers)


async def create_worker(settings: Settings, dsn: str, embedder: EmbeddingProvider) -> ServiceHost:
    """A worker process (`cograph worker`): no collections RPCs, only jobs, health and metrics."""
    pool = await open_service_pool(dsn, settings.database, MIGRATIONS)
    collections = Collections(
        pool,
        embedder,
        max_document_bytes=settings.collections.max_document_bytes,
        heartbeat_seconds=settings.collections.heartbeat_seconds,
    )
    worker = Worker(pool, dsn, collections.handlers(), settings.collections)
    await worker.start()
    server = GrpcServer("collections-worker", settings.grpc)
    readiness = Readiness("collections-worker", {"database": database_check(pool, MIGRATIONS)})
    return ServiceHost("collections-worker", server, readiness, closers=[worker.stop, pool.close])
