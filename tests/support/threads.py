"""Making another client act at an exact point of a request or a job under test."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any


def in_another_thread(work: Callable[[], Coroutine[Any, Any, object]]) -> object:
    """Run `work` to completion on its own event loop while the caller's loop is held in sync
    code (a parse, say): whatever `work` does happens at exactly that point."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(asyncio.run(work())))
    thread.start()
    thread.join()
    return result[0] if result else None
