"""Wiring: migrations -> pool -> servicer -> gRPC server + ops HTTP."""

from __future__ import annotations

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_collections.rpc import CollectionsServicer
from cograph_db import Migrations, open_service_pool
from cograph_embeddings import EmbeddingProvider
from cograph_grpc import GrpcServer
from cograph_service import Readiness, ServiceHost, database_check
from cograph_settings import Settings

NAME = "collections"
MIGRATIONS = Migrations(schema="collections", package="cograph_collections")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["CollectionsService"].full_name


async def create_service(settings: Settings, dsn: str, embedder: EmbeddingProvider) -> ServiceHost:
    pool = await open_service_pool(dsn, settings.database, MIGRATIONS)
    # The RPCs still to build (issue 3) answer UNIMPLEMENTED.
    servicer = CollectionsServicer(pool)  # type: ignore[abstract]
    server = GrpcServer(
        NAME,
        settings.grpc,
        service_names=[SERVICE_NAME],
        register=[lambda s: pb_grpc.add_CollectionsServiceServicer_to_server(servicer, s)],
    )
    readiness = Readiness(NAME, {"database": database_check(pool, MIGRATIONS)})
    return ServiceHost(NAME, server, readiness, closers=[pool.close])
