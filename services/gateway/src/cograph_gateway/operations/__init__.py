"""The gateway's one request shape, under every face (REST controllers, MCP tools, web pages).

Each operation judges its input, authorizes its resource through `Access` (the policy, with that
resource's access facts) once, calls the backends, and shapes the result into the REST schema types.
A face only reads its transport (path, body, tool arguments), names the policy entry it serves,
and renders what the operation answers: REST returns it as is, MCP projects it for agents.
"""

from __future__ import annotations

from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.identity import Principal
from cograph_gateway.operations.collections import CollectionOperations
from cograph_gateway.operations.documents import DocumentOperations
from cograph_gateway.operations.jobs import JobOperations
from cograph_gateway.operations.repositories import RepositoryOperations
from cograph_gateway.operations.search import SearchOperations


class Operations:
    """Every operation, by the aggregate it acts on, for one caller: a face builds one per request
    (REST through the `ops` dependency, MCP per tool call) for the principal it authenticated."""

    def __init__(self, backends: Backends, access: Access, principal: Principal) -> None:
        self.collections = CollectionOperations(backends, access, principal)
        self.documents = DocumentOperations(backends, access, principal)
        self.jobs = JobOperations(backends, access, principal)
        self.repositories = RepositoryOperations(backends, access, principal)
        self.search = SearchOperations(backends, access, principal)


__all__ = ["Operations"]
