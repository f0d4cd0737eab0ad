"""gRPC clients of the services behind the gateway."""

from __future__ import annotations

from dataclasses import dataclass

from grpc import aio

from cograph.collections.v1 import collections_service_pb2_grpc as collections_grpc
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as repodocs_grpc
from cograph.search.v1 import search_service_pb2_grpc as search_grpc
from cograph_grpc import open_channel
from cograph_settings import Settings


@dataclass(frozen=True)
class Backends:
    channels: dict[str, aio.Channel]
    collections: collections_grpc.CollectionsServiceAsyncStub
    repodocs: repodocs_grpc.RepoDocsServiceAsyncStub
    search: search_grpc.SearchServiceAsyncStub

    @classmethod
    def connect(cls, settings: Settings) -> Backends:
        channels = {
            "collections": open_channel(settings.collections.target, settings.grpc),
            "repodocs": open_channel(settings.repodocs.target, settings.grpc),
            "search": open_channel(settings.search.target, settings.grpc),
        }
        return cls(
            channels=channels,
            collections=collections_grpc.CollectionsServiceStub(channels["collections"]),
            repodocs=repodocs_grpc.RepoDocsServiceStub(channels["repodocs"]),
            search=search_grpc.SearchServiceStub(channels["search"]),
        )

    async def close(self) -> None:
        for channel in self.channels.values():
            await channel.close(None)
