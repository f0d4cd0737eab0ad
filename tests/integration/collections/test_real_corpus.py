"""A few hundred real markdown files (the EIPs, CC0) through the real upload path, then again unchanged."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from cograph.collections.v1 import collections_service_pb2 as pb
from support.collections import Running

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpora" / "eips.tar.gz"
FILES = 300


def real_documents() -> list[tuple[str, bytes]]:
    if not CORPUS.exists():
        pytest.skip(f"the shared corpora are not beside the repository ({CORPUS})")
    documents = []
    with tarfile.open(CORPUS) as archive:
        for member in archive:
            if member.isfile() and member.name.endswith(".md") and member.size < 5000:
                extracted = archive.extractfile(member)
                assert extracted is not None
                documents.append((member.name, extracted.read()))
            if len(documents) == FILES:
                break
    return documents


@pytest.mark.slow
async def test_real_corpus_ingests_and_reingests_for_free(
    service: Running, collection: pb.Collection
) -> None:
    documents = real_documents()
    assert len(documents) == FILES
    first = await service.upload(collection.id, *documents)
    assert first.counts.created == FILES, [r.error.message for r in first.results if r.HasField("error")]
    jobs = await service.wait_for_jobs(collection.id, timeout=600)
    assert all(job.status == pb.JOB_STATUS_SUCCESS for job in jobs), jobs
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert status.total_chunks >= FILES
    assert status.embedded_chunks == status.total_chunks
    # Every EIP has frontmatter with a title (its "title:" field) and links that were classified.
    sample = first.results[0].document_id
    document = (
        await service.stub.GetDocument(pb.GetDocumentRequest(collection_id=collection.id, document_id=sample))
    ).document
    assert document.metadata.title
    assert document.metadata.frontmatter_json.startswith("{")

    calls = service.counter.calls
    again = await service.upload(collection.id, *documents)
    assert again.counts.unchanged == FILES
    assert [r.state for r in again.results] == [pb.DOCUMENT_STATE_UNCHANGED] * FILES
    jobs_after = await service.wait_for_jobs(collection.id)
    assert len(jobs_after) == len(jobs) + 1  # only the upload job of the second batch
    assert service.counter.calls == calls
