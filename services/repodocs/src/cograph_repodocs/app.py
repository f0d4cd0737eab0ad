"""Wiring: migrations -> pool -> servicer -> gRPC server + ops HTTP."""

from __future__ import annotations

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as pb_grpc
from cograph_db import Migrations, open_service_pool
from cograph_embeddings import EmbeddingProvider
from cograph_grpc import GrpcServer
from cograph_repodocs.rpc import RepoDocsServicer
from cograph_service import Readiness, ServiceHost, database_check
from cograph_settings import Settings

NAME = "repodocs"
MIGRATIONS = Migrations(schema="repodocs", package="cograph_repodocs")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["RepoDocsService"].full_name


async def create_service(settings: Settings, dsn: str, embedder: EmbeddingProvider) -> ServiceHost:
    pool = await open_service_pool(dsn, settings.database, MIGRATIONS)
    # The RPCs still to build (issue 4) answer UNIMPLEMENTED.
    servicer = RepoDocsServicer(pool)  # type: ignore[abstract]
    server = GrpcServer(
        NAME,
        settings.grpc,
        service_names=[SERVICE_NAME],
        register=[lambda s: pb_grpc.add_RepoDocsServiceServicer_to_server(servicer, s)],
    )
    readiness = Readiness(NAME, {"database": database_check(pool, MIGRATIONS)})
    return ServiceHost(NAME, server, readiness, closers=[pool.close])
