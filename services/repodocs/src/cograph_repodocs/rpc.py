"""RepoDocsServicer: protobuf in, domain calls, protobuf out.

The repository, sync and retrieval RPCs are built with the repodocs issue; until
then the generated base class answers UNIMPLEMENTED for them.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from cograph.repodocs.v1 import repodocs_service_pb2_grpc as pb_grpc


class RepoDocsServicer(pb_grpc.RepoDocsServiceServicer):
    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool
