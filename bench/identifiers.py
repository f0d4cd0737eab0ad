"""Exact identifiers on real documentation: each snake_case or SCREAMING_SNAKE name that a few
pages write (outside URLs) is a query on its own, and the pages that write it are the relevant
ones. A third relevance benchmark beside SciFact and the descriptions: people paste a setting,
an environment variable or a function name from their code into documentation search, and full
text splits such a name into its parts (COGRAPH_SEARCH__RRF_K is 'cograph', 'search', 'rrf',
'k'), which other pages hold apart.

    .venv/bin/python bench/identifiers.py [--data-dir DIR] [--corpora ../shared/corpora]

Corpora: the English pages of astro-docs and all of obsidian-help-en (../shared/corpora),
uploaded as two collections through the real upload path and embedded by the real worker (the
same collections as bench/descriptions.py). Queries: every name with an underscore between two
letters or digits, at least five characters, written by one to three pages. Prints nDCG@10 and
recall@100 per stream, for each corpus.
"""

from __future__ import annotations

import re
import tarfile
from collections import defaultdict
from pathlib import Path

from relevance import corpora_main, evaluate, running_system, uploaded_collection

CORPORA = {"astro-docs": "astro-docs/src/content/docs/en", "obsidian-help-en": "obsidian-help-en"}
# An underscore between two letters or digits: the names full text splits into their parts.
NAME = re.compile(r"\w*[^\W_]_+[^\W_]\w*")
URL = re.compile(r"https?://\S+")
MOST_PAGES = 3


def pages(root: Path) -> list[tuple[str, str]]:
    return [
        (path.relative_to(root).as_posix(), path.read_text("utf-8"))
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".md", ".mdx"))
    ]


def name_queries(docs: list[tuple[str, str]]) -> dict[str, set[str]]:
    """Each name written by one to three pages, and those pages."""
    writers: dict[str, set[str]] = defaultdict(set)
    for key, text in docs:
        for name in set(NAME.findall(URL.sub(" ", text))):
            if len(name) >= 5 and not name.replace("_", "").isdigit():
                writers[name].add(key)
    return {name: keys for name, keys in sorted(writers.items()) if len(keys) <= MOST_PAGES}


async def run(data_dir: Path, corpora: Path, scratch: Path) -> None:
    async with running_system(data_dir) as bench:
        for name, folder in CORPORA.items():
            with tarfile.open(corpora / f"{name}.tar.gz") as archive:
                archive.extractall(scratch, filter="data")
            docs = pages(scratch / folder)
            relevant = name_queries(docs)
            collection_id = await uploaded_collection(bench, name, docs)
            await evaluate(
                bench,
                f"{name}: {len(relevant)} names as queries, {len(docs)} pages",
                collection_id,
                {query: query for query in relevant},
                relevant,
            )


def main() -> None:
    corpora_main(__doc__, "identifiers", run)


if __name__ == "__main__":
    main()
