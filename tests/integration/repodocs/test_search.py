"""Code and docs search through the repodocs gRPC server: the full-text stream over code identifiers."""

from __future__ import annotations

from pathlib import Path

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
