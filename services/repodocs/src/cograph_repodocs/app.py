"""Wiring: migrations -> pool -> git, clone policy, checkouts -> application (sync pipeline, syncs, schedule,
repositories, documents, code, search) -> servicer -> gRPC server + ops HTTP. Shutdown: servers,
then the schedule, then syncs in progress, then the pool."""

from __future__ import annotations

from pathlib import Path

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as pb_grpc
from cograph_db import Migrations, open_service_pool
from cograph_embeddings import EmbeddingProvider
from cograph_grpc import GrpcServer
from cograph_repodocs.application.code import Code
from cograph_repodocs.application.documents import Documents
from cograph_repodocs.application.pipeline import SyncPipeline
from cograph_repodocs.application.repositories import Repositories
from cograph_repodocs.application.scheduler import Scheduler
from cograph_repodocs.application.search import Search
from cograph_repodocs.application.syncs import Syncs
from cograph_repodocs.application.webhooks import Webhooks
from cograph_repodocs.checkouts import Checkouts
from cograph_repodocs.credentials import Credentials
from cograph_repodocs.domain.clone_urls import ClonePolicy
from cograph_repodocs.git import Git
from cograph_repodocs.remotes import Remotes
from cograph_repodocs.rpc import RepoDocsServicer
from cograph_service import DATABASE_OUTAGE, Readiness, ServiceHost, database_check
from cograph_settings import Settings

NAME = "repodocs"
MIGRATIONS = Migrations(schema="repodocs", package="cograph_repodocs")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["RepoDocsService"].full_name


async def create_service(settings: Settings, dsn: str, embedder: EmbeddingProvider) -> ServiceHost:
    config = settings.repodocs
    pool = await open_service_pool(dsn, settings.database, MIGRATIONS)
    git = Git(config.git_timeout_seconds)
    policy = ClonePolicy.of(config.clone_allowed_schemes, config.clone_allowed_hosts)
    credentials = Credentials(config.credentials_file, git.ssh_command)
    checkouts = Checkouts(git, Path(config.checkout_dir), Remotes(policy, git.ssh_command), credentials)
    pipeline = SyncPipeline(pool, embedder, checkouts, max_file_bytes=config.max_file_bytes)
    syncs = Syncs(pool, pipeline)
    webhooks = Webhooks(pool, syncs, credentials, config.webhook_replay_window_seconds)
    scheduler = Scheduler(
        pool,
        syncs,
        config.sync_interval_seconds,
        webhook_interval_seconds=config.webhook_sync_interval_seconds,
        webhooks_on=lambda: bool(credentials.current().webhooks),
    )
    repositories = Repositories(pool, checkouts, syncs)
    await repositories.prune_checkouts()
    servicer = RepoDocsServicer(
        repositories=repositories,
        syncs=syncs,
        documents=Documents(pool),
        code=Code(pool, checkouts, max_file_bytes=config.max_file_bytes),
        search=Search(pool),
        webhooks=webhooks,
    )
    server = GrpcServer(
        NAME,
        settings.grpc,
        service_names=[SERVICE_NAME],
        register=[lambda s: pb_grpc.add_RepoDocsServiceServicer_to_server(servicer, s)],
        outages=[DATABASE_OUTAGE],
    )
    readiness = Readiness(NAME, {"database": database_check(pool, MIGRATIONS)})
    scheduler.start()
    return ServiceHost(
        NAME, server, readiness, closers=[scheduler.stop, webhooks.stop, syncs.stop, pool.close]
    )
