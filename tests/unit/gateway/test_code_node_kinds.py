"""Every kind of code node repodocs stores reaches REST under its own name.

Modules, variables, attributes and properties became code nodes without a kind in the gRPC
contract: a code search whose hits held one failed inside repodocs (a KeyError while answering),
and the gateway answered its code pool as "INTERNAL: internal error"; the OpenAPI fuzzing's
search for a symbol of a one-file repository found it."""

from __future__ import annotations

import pytest

from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_gateway.convert import code_node_from_pb
from cograph_repodocs.domain.symbols import SymbolKind
from cograph_repodocs.mapping import NODE_KIND_TO_PB


@pytest.mark.parametrize("kind", list(SymbolKind))
def test_a_code_node_keeps_its_kind_from_repodocs_to_rest(kind: SymbolKind) -> None:
    message = rpb.CodeNode(kind=NODE_KIND_TO_PB[kind])
    assert code_node_from_pb(message).kind == kind.value
