"""The fault suite: what an outside probe of the running system found, kept found.

Each module drives a real `cograph up` (tests/support/cograph_process.py) or the real services
in-process, breaks something on purpose (a SIGKILL, a stopped database, a hostile request) and
checks what a user would see. Every loop is bounded in count and time; only loopback addresses.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cograph_settings import ApiToken
from support.cograph_process import RunningCograph, cograph_up_running

FAULT_TOKENS = [
    ApiToken(token="fault-admin-token", sub="admin", roles=["admin"]),
    ApiToken(token="fault-alice-token", sub="alice", groups=["research"]),
]


@pytest.fixture(scope="module")
def cograph_up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCograph]:
    """One real `cograph up` for a module, on the embedded defaults, stopped with Ctrl-C after it."""
    with cograph_up_running(tmp_path_factory.mktemp("faults"), FAULT_TOKENS) as running:
        yield running
