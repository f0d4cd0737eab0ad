"""Parse + chunk throughput of the collections markdown pipeline against LangChain.

    .venv/bin/python bench/markdown_throughput.py [--runs 5] [--corpora ../shared/corpora]

For each corpus (unpacked to a temporary directory), every .md/.mdx file is read into memory,
then each run times, back to back on the same files:
- ours: parse_markdown + MarkdownChunker().chunk (frontmatter, headings, code, tables, links,
  anchors, chunks with heading paths);
- LangChain: MarkdownHeaderTextSplitter (levels 1-6) then RecursiveCharacterTextSplitter
  (chunk_size=4000), the usual header-aware LangChain pipeline.
Throughput is corpus MB (UTF-8) over the median run time. Before timing, every chunk
invariant is checked on every file, so the figures are for output that keeps them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

from cograph_collections.markdown import parse_markdown
from cograph_collections.markdown.chunker import MarkdownChunker
from cograph_collections.markdown.invariants import chunk_violations

CORPUS_NAMES = ("astro-docs", "eips", "obsidian-help-en")
TARGET_RATIO = 1.5


def load_corpus(archive: Path, scratch: Path) -> list[str]:
    with tarfile.open(archive) as opened:
        opened.extractall(scratch, filter="data")
    files = sorted(path for path in scratch.rglob("*") if path.suffix in (".md", ".mdx"))
    return [path.read_text("utf-8") for path in files]


def ours() -> Callable[[str], int]:
    chunker = MarkdownChunker()
    return lambda text: len(chunker.chunk(parse_markdown(text)))


def langchain() -> Callable[[str], int]:
    levels = [("#" * level, f"h{level}") for level in range(1, 7)]
    headers = MarkdownHeaderTextSplitter(headers_to_split_on=levels)
    characters = RecursiveCharacterTextSplitter(chunk_size=4000)
    return lambda text: len(characters.split_documents(headers.split_text(text)))


def check_invariants(texts: list[str]) -> None:
    chunker = MarkdownChunker()
    for index, text in enumerate(texts):
        parsed = parse_markdown(text)
        problems = chunk_violations(parsed, chunker.chunk(parsed), chunker.params)
        if problems:
            raise SystemExit(f"file {index}: {problems[:3]}")


def timed(pipeline: Callable[[str], int], texts: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    chunks = sum(pipeline(text) for text in texts)
    return time.perf_counter() - started, chunks


def main() -> None:
    default_corpora = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpora"
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--corpora", type=Path, default=default_corpora)
    options = parser.parse_args()
    if not options.corpora.is_dir():
        raise SystemExit(f"no corpora at {options.corpora.resolve()}")

    pipelines = {"ours": ours(), "langchain": langchain()}
    header = f"{'corpus':<18}{'files':>6}{'MB':>7}{'ours MB/s':>11}{'LangChain MB/s':>16}{'ratio':>7}"
    rows = [header + f"{'chunks ours':>13}{'chunks LC':>11}", "-" * (len(header) + 24)]
    ratios = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in CORPUS_NAMES:
            texts = load_corpus(options.corpora / f"{name}.tar.gz", Path(scratch) / name)
            megabytes = sum(len(text.encode("utf-8")) for text in texts) / 1e6
            check_invariants(texts)
            seconds: dict[str, list[float]] = {label: [] for label in pipelines}
            chunks: dict[str, int] = {}
            for _ in range(options.runs):
                for label, pipeline in pipelines.items():
                    elapsed, chunks[label] = timed(pipeline, texts)
                    seconds[label].append(elapsed)
            speed = {label: megabytes / statistics.median(runs) for label, runs in seconds.items()}
            ratios.append(speed["ours"] / speed["langchain"])
            rows.append(
                f"{name:<18}{len(texts):>6}{megabytes:>7.1f}{speed['ours']:>11.1f}{speed['langchain']:>16.1f}"
                f"{ratios[-1]:>6.2f}x{chunks['ours']:>13}{chunks['langchain']:>11}"
            )
            print(rows[-1], file=sys.stderr)
    print("\n".join(rows))
    print(f"median of {options.runs} runs; invariants checked on every file before timing")
    print(f"target {TARGET_RATIO}x on every corpus: {'met' if min(ratios) >= TARGET_RATIO else 'NOT met'}")


if __name__ == "__main__":
    main()
