"""The gateway's one request shape, under every face (REST controllers, MCP tools, web pages).

Each operation judges its input, authorizes its resource through `Access` (the policy, with that
resource's access facts) once, calls the backends, and shapes the result into the REST schema types.
A face only reads its transport (path, body, tool arguments), names the policy entry it serves,
and renders what the operation answers: REST returns it as is, MCP projects it for agents.
"""

from __future__ import annotations

from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.operations.collections import CollectionOperations
from cograph_gateway.operations.documents import DocumentOperations
from cograph_gateway.operations.jobs import JobOperations
from cograph_gateway.operations.repositories import RepositoryOperations
from cograph_gateway.operations.search import SearchOperations


class Operations:
    """Every operation, by the aggregate it acts on."""

    def __init__(self, backends: Backends, access: Access) -> None:
        self.collections = CollectionOperations(backends, access)
        self.documents = DocumentOperations(backends, access)
        self.jobs = JobOperations(backends, access)
        self.repositories = RepositoryOperations(backends, access)
        self.search = SearchOperations(backends, access)


__all__ = ["Operations"]
