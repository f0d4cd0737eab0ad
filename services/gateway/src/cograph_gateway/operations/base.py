"""What every group of operations holds: the backends it calls and the access it authorizes with."""

from __future__ import annotations

from cograph_gateway.access import Access
from cograph_gateway.backends import Backends


class OperationGroup:
    def __init__(self, backends: Backends, access: Access) -> None:
        self._backends = backends
        self._access = access
