"""Upload a real documentation set through the collections service twice and print how long the
unchanged second upload takes as a share of the first (embedding excluded: it runs in workers).

    .venv/bin/python bench/collections_upload.py [astro-docs|eips|obsidian-help-en]
"""

from __future__ import annotations

import argparse
import asyncio
import tarfile
import tempfile
import time
from pathlib import Path

import msgspec

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph.collections.v1 import collections_service_pb2_grpc as pb_grpc
from cograph_collections.app import create_service
from cograph_db import EmbeddedPostgres
from cograph_embeddings import LocalProvider
from cograph_grpc import open_channel
from cograph_settings import Settings

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
BATCH = 500


def read_corpus(name: str) -> list[tuple[str, bytes]]:
    with tarfile.open(CORPORA / f"{name}.tar.gz") as archive:
        files = []
        for member in archive:
            if member.isfile() and member.name.endswith((".md", ".mdx")):
                extracted = archive.extractfile(member)
                assert extracted is not None
                files.append((member.name, extracted.read()))
    return files


async def upload_all(
    stub: pb_grpc.CollectionsServiceAsyncStub, collection_id: str, files: list[tuple[str, bytes]]
) -> tuple[float, pb.UploadCounts]:
    totals = pb.UploadCounts()
    started = time.perf_counter()
    for start in range(0, len(files), BATCH):
        response = await stub.UploadDocuments(
            pb.UploadDocumentsRequest(
                collection_id=collection_id,
                documents=[
                    pb.DocumentContent(source_key=k, content=c) for k, c in files[start : start + BATCH]
                ],
                requested_by="bench",
            ),
            timeout=600,
        )
        for field in ("created", "replaced", "unchanged", "failed"):
            setattr(totals, field, getattr(totals, field) + getattr(response.counts, field))
    return time.perf_counter() - started, totals


async def run(corpus: str, directory: Path) -> None:
    files = read_corpus(corpus)
    size = sum(len(content) for _, content in files)
    embedded = EmbeddedPostgres(directory / "postgres")
    dsn = embedded.start()
    defaults = Settings()
    settings = msgspec.structs.replace(
        defaults, collections=msgspec.structs.replace(defaults.collections, max_batch_documents=BATCH)
    )
    # No worker: embedding is not part of what is measured.
    host = await create_service(settings, dsn, LocalProvider("all-MiniLM-L6-v2", None, 256))
    await host.start("127.0.0.1", 0, 0)
    channel = open_channel(f"127.0.0.1:{host.grpc.port}", settings.grpc)
    try:
        stub = pb_grpc.CollectionsServiceStub(channel)
        collection = (
            await stub.CreateCollection(
                pb.CreateCollectionRequest(name=corpus, visibility=pb.VISIBILITY_PUBLIC, owner="bench")
            )
        ).collection
        first, first_counts = await upload_all(stub, collection.id, files)
        second, second_counts = await upload_all(stub, collection.id, files)
    finally:
        await channel.close(None)
        await host.stop()
        embedded.stop()
    print(f"\n{corpus}: {len(files)} files, {size / 1e6:.1f} MB, batches of {BATCH}")
    print(
        f"first upload      {first:8.2f} s  {size / 1e6 / first:6.2f} MB/s  {first_counts}".replace("\n", " ")
    )
    print(
        f"unchanged again   {second:8.2f} s  {size / 1e6 / second:6.2f} MB/s  {second_counts}".replace(
            "\n", " "
        )
    )
    print(f"unchanged / first {second / first:8.1%}  (target under 5%)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "corpus", nargs="?", default="astro-docs", choices=["astro-docs", "eips", "obsidian-help-en"]
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="upload-bench-") as directory:
        asyncio.run(run(args.corpus, Path(directory)))


if __name__ == "__main__":
    main()
