"""A collections service on a fresh database, with the real model behind a call counter."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_collections.app import create_service
from cograph_embeddings import EmbeddingProvider
from cograph_grpc import open_channel
from cograph_settings import Settings
from support.collections import Running
from support.embedding import CountingProvider


@pytest.fixture
async def service(settings: Settings, database: str, embedder: EmbeddingProvider) -> AsyncIterator[Running]:
    counter = CountingProvider(embedder)
    host = await create_service(settings, database, counter, with_worker=True)
    await host.start("127.0.0.1", 0, 0)
    channel = open_channel(f"127.0.0.1:{host.grpc.port}", settings.grpc)
    try:
        yield Running(host, pb_grpc.CollectionsServiceStub(channel), counter, settings)
    finally:
        await channel.close(None)
        await host.stop()


@pytest.fixture
async def collection(service: Running) -> pb.Collection:
    response = await service.stub.CreateCollection(
        pb.CreateCollectionRequest(name="Handbook", visibility=pb.VISIBILITY_PRIVATE, owner="alice")
    )
    return response.collection
