"""SearchServicer: embeds the query once and fans out to the stores.

Retrieval is built with the search issue; until then the generated base class
answers UNIMPLEMENTED.
"""

from __future__ import annotations

from cograph.collections.v1 import collections_service_pb2_grpc as collections_grpc
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as repodocs_grpc
from cograph.search.v1 import search_service_pb2_grpc as pb_grpc
from cograph_embeddings import EmbeddingProvider


class SearchServicer(pb_grpc.SearchServiceServicer):
    def __init__(
        self,
        embedder: EmbeddingProvider,
        collections: collections_grpc.CollectionsServiceAsyncStub,
        repodocs: repodocs_grpc.RepoDocsServiceAsyncStub,
    ) -> None:
        self._embedder = embedder
        self._collections = collections
        self._repodocs = repodocs
