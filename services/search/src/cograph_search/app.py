"""Wiring: embedding provider + channels to the stores -> servicer -> gRPC server + ops HTTP."""

from __future__ import annotations

from cograph.collections.v1 import collections_service_pb2_grpc as collections_grpc
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as repodocs_grpc
from cograph.search.v1 import search_service_pb2 as pb
from cograph.search.v1 import search_service_pb2_grpc as pb_grpc
from cograph_embeddings import EmbeddingProvider
from cograph_grpc import GrpcServer, open_channel
from cograph_search.rpc import SearchServicer
from cograph_service import Check, Readiness, ServiceHost, cached, grpc_health_check
from cograph_settings import Settings

NAME = "search"
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["SearchService"].full_name
# A remote embedding endpoint is asked at most this often, however often readiness is.
EMBEDDING_CHECK_SECONDS = 5.0


async def create_service(settings: Settings, embedder: EmbeddingProvider) -> ServiceHost:
    collections = open_channel(settings.collections.target, settings.grpc)
    repodocs = open_channel(settings.repodocs.target, settings.grpc)
    servicer = SearchServicer(
        embedder,
        collections_grpc.CollectionsServiceStub(collections),
        repodocs_grpc.RepoDocsServiceStub(repodocs),
        settings.search,
    )
    server = GrpcServer(
        NAME,
        settings.grpc,
        service_names=[SERVICE_NAME],
        register=[lambda s: pb_grpc.add_SearchServiceServicer_to_server(servicer, s)],
    )

    async def embedding_check() -> str:
        await embedder.check_alive()
        return "ok"

    # Searches go on without the stores and without a remote model (full text only), so those
    # are reported, never gating. An in-process model is part of this process: until it has
    # loaded, search is not ready (the startup probe waits for it).
    embedding: dict[str, Check] = {"embedding": cached(embedding_check, EMBEDDING_CHECK_SECONDS)}
    readiness = Readiness(
        NAME,
        {} if embedder.remote else embedding,
        dependencies={
            "collections": grpc_health_check(collections),
            "repodocs": grpc_health_check(repodocs),
            **(embedding if embedder.remote else {}),
        },
    )

    async def close_channels() -> None:
        await collections.close(None)
        await repodocs.close(None)

    return ServiceHost(NAME, server, readiness, closers=[close_channels])
