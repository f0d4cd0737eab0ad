"""gRPC clients of the services behind the gateway."""

from __future__ import annotations

from grpc import aio

from cograph.collections.v1 import collections_service_pb2_grpc as collections_grpc
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as repodocs_grpc
from cograph.search.v1 import search_service_pb2_grpc as search_grpc
from cograph_grpc import open_channel
from cograph_settings import Settings


class Backends:
    # Attributes are annotated in __init__ only: the async stub types exist in the
    # type stubs alone, and Litestar resolves class-level annotations at run time.
    def __init__(self, channels: dict[str, aio.Channel]) -> None:
        self.channels = channels
        self.collections: collections_grpc.CollectionsServiceAsyncStub = (
            collections_grpc.CollectionsServiceStub(channels["collections"])
        )
        self.repodocs: repodocs_grpc.RepoDocsServiceAsyncStub = repodocs_grpc.RepoDocsServiceStub(
            channels["repodocs"]
        )
        self.search: search_grpc.SearchServiceAsyncStub = search_grpc.SearchServiceStub(channels["search"])

    @classmethod
    def connect(cls, settings: Settings) -> Backends:
        return cls(
            {
                "collections": open_channel(settings.collections.target, settings.grpc),
                "repodocs": open_channel(settings.repodocs.target, settings.grpc),
                "search": open_channel(settings.search.target, settings.grpc),
            }
        )

    async def close(self) -> None:
        for channel in self.channels.values():
            await channel.close(None)
