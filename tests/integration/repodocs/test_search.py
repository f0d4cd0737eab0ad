"""Code and docs search through the repodocs gRPC server: the full-text stream over code
identifiers, its term statistics across re-syncs, and queries it refuses."""

from __future__ import annotations

import math
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import pytest
from grpc import aio
from integration.repodocs.helpers import GitRepo, Running

from cograph.repodocs.v1 import repodocs_service_pb2 as pb

SETTINGS_PY = """def parse_config(text):
    return {}


def loadSettingsFile(path):
    return {}


class HTTPServer:
    pass
"""


async def text_hits(service: Running, repository_id: str, query: str) -> list[pb.CodeHit]:
    """The code hits of the full-text stream alone, best first."""
    found = await service.stub.SearchCode(
        pb.SearchCodeRequest(
            repository_ids=[repository_id], query=query, limit=10, dense_weight=0, text_weight=1
        )
    )
    assert all(hit.ranks.text > 0 for hit in found.hits)
    return list(found.hits)


async def synced(service: Running, origin: GitRepo) -> str:
    repository = await service.register("demo", clone_url=str(origin.root))
    sync = await service.sync(repository.id)
    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error
    return repository.id


async def test_identifiers_are_found_as_written_and_by_their_parts(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("code", {"pkg/settings.py": SETTINGS_PY})
    rid = await synced(service, origin)
    for query, expected in [
        ("parse_config", "parse_config"),
        ("parseConfig", "parse_config"),
        ("ParseConfig", "parse_config"),
        ("parse config", "parse_config"),
        ("settings.parse_config", "parse_config"),
        ("pkg.settings.parse_config", "parse_config"),
        ("loadSettingsFile", "loadSettingsFile"),
        ("load_settings_file", "loadSettingsFile"),
        ("load settings file", "loadSettingsFile"),
        ("HTTPServer", "HTTPServer"),
        ("http server", "HTTPServer"),
        ("http_server", "HTTPServer"),
    ]:
        hits = await text_hits(service, rid, query)
        assert [hit.node.name for hit in hits[:1]] == [expected], query


async def code_statistics(dsn: str) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The stored code term statistics, without zero counts, and a recount of them from the rows."""
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute("SET search_path TO repodocs")
        stored = await connection.fetch(
            "SELECT scope_id, lexeme, df FROM code_term_stats WHERE df <> 0 ORDER BY 1, 2"
        )
        recount = await connection.fetch(
            "SELECT k.repository_id, u.lexeme, count(*) FROM code_nodes k, unnest(k.search_text) AS u"
            " GROUP BY 1, 2 ORDER BY 1, 2"
        )
        scopes = await connection.fetch("SELECT scope_id, chunks, lexemes FROM code_scope_stats ORDER BY 1")
        scopes_recount = await connection.fetch(
            "SELECT repository_id, count(*), sum(length(search_text)) FROM code_nodes GROUP BY 1 ORDER BY 1"
        )
    finally:
        await connection.close()
    return (
        [tuple(row) for row in stored] + [tuple(row) for row in scopes],
        [tuple(row) for row in recount] + [tuple(row) for row in scopes_recount],
    )


async def test_a_changed_signature_is_searched_by_its_new_words_only(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {"pkg/config.py": "def parse_config(legacy_source):\n    return {}\n"})
    rid = await synced(service, origin)
    assert [hit.node.name for hit in await text_hits(service, rid, "legacy_source")] == ["parse_config"]

    # The symbol survives the edit (same id): only its signature is rewritten.
    origin.commit("second", {"pkg/config.py": "def parse_config(yaml_document):\n    return {}\n"})
    sync = await service.sync(rid)
    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error
    assert [hit.node.name for hit in await text_hits(service, rid, "yaml_document")] == ["parse_config"]
    assert await text_hits(service, rid, "legacy_source") == []
    # The removed words no longer count in the statistics BM25 weighs by, the new ones do.
    stored, recount = await code_statistics(service.settings.database.dsn)
    assert stored == recount


async def test_a_query_with_a_control_character_is_refused(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("code", {"pkg/settings.py": SETTINGS_PY})
    rid = await synced(service, origin)
    for control in ["\x00", "\x07", "\x1b", "\x7f"]:
        query = f"parse{control}config"
        with pytest.raises(aio.AioRpcError) as refused:
            await service.stub.SearchCode(pb.SearchCodeRequest(repository_ids=[rid], query=query, limit=3))
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "control character" in (refused.value.details() or ""), repr(control)
        with pytest.raises(aio.AioRpcError) as refused:
            await service.stub.SearchDocChunks(
                pb.SearchDocChunksRequest(repository_ids=[rid], query=query, limit=3)
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "control character" in (refused.value.details() or ""), repr(control)
    # Tabs and newlines are ordinary white space in a query.
    hits = await text_hits(service, rid, "parse\tconfig\n")
    assert hits[0].node.name == "parse_config"


@pytest.mark.parametrize(
    ("numbers", "message"),
    [
        ({"rrf_k": -1.0}, "rrf_k must be a positive number"),
        ({"rrf_k": math.inf}, "rrf_k must be a positive number"),
        ({"dense_weight": -0.5}, "stream weights must be finite and not negative"),
        ({"text_weight": math.nan}, "stream weights must be finite and not negative"),
        ({"query_embedding": [0.1, math.nan, 0.2]}, "not a finite number"),
    ],
)
async def test_numbers_the_ranking_cannot_take_are_refused(
    service: Running, numbers: dict[str, Any], message: str
) -> None:
    rid = str(uuid.uuid4())
    calls: list[Awaitable[object]] = [
        service.stub.SearchDocChunks(
            pb.SearchDocChunksRequest(repository_ids=[rid], query="parse config", limit=3, **numbers)
        ),
        service.stub.SearchCode(
            pb.SearchCodeRequest(repository_ids=[rid], query="parse config", limit=3, **numbers)
        ),
    ]
    for call in calls:
        with pytest.raises(aio.AioRpcError) as refused:
            await call
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert message in (refused.value.details() or "")
