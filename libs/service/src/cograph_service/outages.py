"""The outages a store service answers UNAVAILABLE: its database stopped, restarting or cut off.

A caller may try again shortly (the gateway answers 503 with Retry-After), which is not what an
INTERNAL error says; see cograph_db.outage for which errors count.
"""

from __future__ import annotations

from cograph_db.outage import database_unreachable
from cograph_grpc import Outage

DATABASE_OUTAGE = Outage(database_unreachable, "its database cannot be reached")
