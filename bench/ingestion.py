"""The whole time from upload to "all chunks embedded" of a real documentation set, through the
running system (the collections service and its embed worker, as `cograph up` runs them).

    .venv/bin/python bench/ingestion.py [obsidian-help-en|astro-docs|eips]

Prints the documents, the texts the model embedded (a chunk longer than the model's input is
embedded window by window) and the seconds from the first upload request to the last chunk
embedded, on the runtime the settings name (COGRAPH_EMBEDDING__RUNTIME). To compare heads,
run it from a checkout of each, one after the other, on the same corpus.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from collections_upload import read_corpus
from relevance import running_system, uploaded_collection

from cograph_telemetry.metrics import EMBEDDING_BATCH_SIZE


def embedded_texts() -> float:
    """Texts the provider has embedded in this process so far (the batch size histogram's sum)."""
    return sum(
        sample.value
        for metric in EMBEDDING_BATCH_SIZE.collect()
        for sample in metric.samples
        if sample.name.endswith("_sum")
    )


async def run(corpus: str, data_dir: Path) -> None:
    files = read_corpus(corpus)
    docs = [(key, content.decode()) for key, content in files]
    async with running_system(data_dir) as bench:
        before = embedded_texts()
        began = time.perf_counter()
        await uploaded_collection(bench, corpus, docs)
        seconds = time.perf_counter() - began
        texts = embedded_texts() - before
    print(
        f"{corpus}: {len(docs)} documents, {texts:.0f} texts embedded, upload to all embedded {seconds:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "corpus", nargs="?", default="obsidian-help-en", choices=["obsidian-help-en", "astro-docs", "eips"]
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ingestion-bench-") as directory:
        asyncio.run(run(args.corpus, Path(directory)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
