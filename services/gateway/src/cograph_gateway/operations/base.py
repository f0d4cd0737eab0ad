"""What every group of operations holds: the backends it calls, the access it authorizes with, and
the caller it acts for (a group serves one request)."""

from __future__ import annotations

from cograph_gateway.access import Access
from cograph_gateway.backends import Backends
from cograph_gateway.identity import Principal


class OperationGroup:
    def __init__(self, backends: Backends, access: Access, principal: Principal) -> None:
        self._backends = backends
        self._access = access
        self._principal = principal
