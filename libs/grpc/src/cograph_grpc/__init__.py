"""grpc.aio server and client helpers: health, reflection, deadlines, interceptors.

The errors services raise, and the argument checks that raise them, are cograph_errors': free of
gRPC, so domain and store code can use them; status_of maps each to its status."""

from cograph_grpc.channels import open_channel
from cograph_grpc.errors import Outage, status_of
from cograph_grpc.health import check_health
from cograph_grpc.interceptors import OUTAGE_KEY
from cograph_grpc.paging import PageRequest, next_page_token, page_request
from cograph_grpc.server import GrpcServer

__all__ = [
    "OUTAGE_KEY",
    "GrpcServer",
    "Outage",
    "PageRequest",
    "check_health",
    "next_page_token",
    "open_channel",
    "page_request",
    "status_of",
]
