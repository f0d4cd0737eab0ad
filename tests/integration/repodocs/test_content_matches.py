"""FindDocumentsByContent: repository docs found by the hash of their bytes, within the scope."""

from __future__ import annotations

import hashlib
from pathlib import Path

import grpc
import pytest
from grpc import aio
from integration.repodocs.helpers import GitRepo, Running

from cograph.repodocs.v1 import repodocs_service_pb2 as pb

GLOSSARY = "# Glossary\n\nA zorblax is the billing reconciliation batch.\n"
GLOSSARY_HASH = hashlib.sha256(GLOSSARY.encode()).hexdigest()


def sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


async def test_documents_are_found_by_their_bytes_only_in_the_repositories_passed(
    service: Running, tmp_path: Path
) -> None:
    ids = []
    for name in ("alpha", "beta"):
        origin = GitRepo(tmp_path / name)
        origin.commit("docs", {"docs/glossary.md": GLOSSARY, "README.md": f"# {name}\n"})
        repository = await service.register(name, clone_url=str(origin.root))
        assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
        ids.append(repository.id)
    other = sha256(b"# Not indexed anywhere\n")

    found = await service.stub.FindDocumentsByContent(
        pb.FindDocumentsByContentRequest(content_hashes=[GLOSSARY_HASH, other], repository_ids=ids)
    )
    assert [(m.repository_id, m.path, m.content_hash) for m in found.matches] == [
        (ids[0], "docs/glossary.md", GLOSSARY_HASH),
        (ids[1], "docs/glossary.md", GLOSSARY_HASH),
    ]
    assert all(m.repository.endswith(("/alpha", "/beta")) and m.document_id for m in found.matches)

    only_beta = await service.stub.FindDocumentsByContent(
        pb.FindDocumentsByContentRequest(content_hashes=[GLOSSARY_HASH], repository_ids=ids[1:])
    )
    assert [m.repository_id for m in only_beta.matches] == [ids[1]]
    nothing = await service.stub.FindDocumentsByContent(
        pb.FindDocumentsByContentRequest(content_hashes=[GLOSSARY_HASH], repository_ids=[])
    )
    assert list(nothing.matches) == []

    # Every repository, for a caller that authorizes each match itself: it costs what the
    # matches cost, not what a readable scope of every repository would.
    everywhere = await service.stub.FindDocumentsByContent(
        pb.FindDocumentsByContentRequest(content_hashes=[GLOSSARY_HASH, other], every_repository=True)
    )
    assert [m.repository_id for m in everywhere.matches] == ids
    access = await service.stub.ListRepositoryAccess(pb.ListRepositoryAccessRequest(repository_ids=ids[1:]))
    assert [entry.repository_id for entry in access.entries] == ids[1:]
    every = await service.stub.ListRepositoryAccess(pb.ListRepositoryAccessRequest())
    assert sorted(entry.repository_id for entry in every.entries) == sorted(ids)


@pytest.mark.parametrize(
    ("hashes", "message"),
    [
        (["not-a-hash"], "is not a sha256 hex digest"),
        (["A" * 64], "is not a sha256 hex digest"),
        ([sha256(str(n).encode()) for n in range(1001)], "at most 1000 content hashes"),
    ],
)
async def test_malformed_hashes_are_a_clear_error(service: Running, hashes: list[str], message: str) -> None:
    with pytest.raises(aio.AioRpcError) as refused:
        await service.stub.FindDocumentsByContent(pb.FindDocumentsByContentRequest(content_hashes=hashes))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (refused.value.details() or "")
