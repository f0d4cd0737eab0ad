"""Known-item retrieval on real documentation: each page's frontmatter `description` is the
query, the page is the one relevant document. A second relevance benchmark beside SciFact,
with other text (product documentation, not biomedical abstracts) and other queries (one-line
summaries written by the docs' authors), so a retrieval default can be checked on both.

    .venv/bin/python bench/descriptions.py [--data-dir DIR] [--corpora ../shared/corpora]

Corpora: the English pages of astro-docs and all of obsidian-help-en (../shared/corpora),
uploaded as two collections through the real upload path and embedded by the real worker.
The frontmatter is not part of any chunk, so a description is never matched word for word
by its own page's chunks. Prints nDCG@10 (here a function of the page's rank) and recall@100
per stream, for each corpus.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from relevance import corpora_main, evaluate, running_system, uploaded_collection

from cograph_collections.markdown import parse_markdown

CORPORA = {"astro-docs": "astro-docs/src/content/docs/en", "obsidian-help-en": "obsidian-help-en"}


def pages(root: Path) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """(source_key, text) of every page, and the description of each page that has one."""
    docs, descriptions = [], {}
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".md", ".mdx")):
        key = path.relative_to(root).as_posix()
        text = path.read_text("utf-8")
        docs.append((key, text))
        description = parse_markdown(text).frontmatter.get("description")
        if isinstance(description, str) and description.strip():
            descriptions[key] = " ".join(description.split())
    return docs, descriptions


async def run(data_dir: Path, corpora: Path, scratch: Path) -> None:
    async with running_system(data_dir) as bench:
        for name, folder in CORPORA.items():
            with tarfile.open(corpora / f"{name}.tar.gz") as archive:
                archive.extractall(scratch, filter="data")
            docs, descriptions = pages(scratch / folder)
            collection_id = await uploaded_collection(bench, name, docs)
            await evaluate(
                bench,
                f"{name}: {len(descriptions)} descriptions as queries, {len(docs)} pages",
                collection_id,
                descriptions,
                {key: {key} for key in descriptions},
            )


def main() -> None:
    corpora_main(__doc__, "descriptions", run)


if __name__ == "__main__":
    main()
