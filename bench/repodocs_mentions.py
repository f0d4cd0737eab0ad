"""Run the repodocs linker over a real checkout and print a random sample of its mentions to judge.

    .venv/bin/python bench/repodocs_mentions.py [CHECKOUT] [--sample 50] [--seed 1]

The same steps a sync runs, without a database: discovery and the 512/64 chunker for
documents, tree-sitter symbols for code, then find_mentions + resolve_mentions per chunk
(cograph_repodocs.application.linking). Each sampled mention is printed with the chunk text around it
and the code node it was resolved to, for a person to mark right or wrong.
"""

from __future__ import annotations

import argparse
import collections
import random
import uuid
from pathlib import Path

from cograph_repodocs.application.code_index import scan_code
from cograph_repodocs.application.doc_index import plan_documents
from cograph_repodocs.application.linking import ChunkText, Symbols, link_chunks
from cograph_repodocs.domain.chunking import WordWindowChunker
from cograph_repodocs.domain.mentions import find_mentions

CONTEXT = 70


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("checkout", nargs="?", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    root = Path(args.checkout).resolve()

    code = scan_code(root, {}, 1 << 20)
    symbols = [s for f in code.parsed for s in f.symbols]
    nodes = {str(uuid.uuid4()): s for s in symbols}
    aliases = [a for f in code.parsed for a in f.aliases]
    index = Symbols(
        ((node_id, s.name, s.qualified_name, s.path, s.kind.value) for node_id, s in nodes.items()), aliases
    )
    docs = plan_documents(root, [], 1 << 20, WordWindowChunker())
    chunks = {uuid.uuid4(): (p.file.path, c) for p in docs.prepared for c in p.chunked.chunks}
    found = sum(len(find_mentions(c.text)) for _, c in chunks.values())
    links = link_chunks(
        (
            ChunkText(chunk_id, path, c.text, c.chunk_index, c.heading_path)
            for chunk_id, (path, c) in chunks.items()
        ),
        index,
    )

    print(f"checkout {root}")
    print(
        f"documents {len(docs.prepared)}, chunks {len(chunks)},"
        f" code files {len(code.parsed)}, symbols {len(nodes)}"
    )
    print(f"identifier mentions found in text {found}; resolved links (chunk, node) {len(links)}")
    print("links by form:", dict(collections.Counter(link.form.value for link in links)))
    sample = random.Random(args.seed).sample(links, min(args.sample, len(links)))
    for number, link in enumerate(sample, 1):
        path, chunk = chunks[link.chunk_id]
        text = chunk.text
        symbol = nodes[str(link.code_node_id)]
        # Where the linking mention is (its first occurrence in that form), for the context shown.
        at = next(m.start for m in find_mentions(text) if m.text == link.mention and m.form == link.form)
        context = text[max(0, at - CONTEXT) : at + len(link.mention) + CONTEXT].replace("\n", " ")
        reason = link.reason.value if link.reason is not None else "-"
        print(f"\n#{number} [{link.form.value}, {reason}] {link.mention!r} in {path}")
        print(f"   -> {symbol.kind.value} {symbol.qualified_name} ({symbol.path}:{symbol.start_line})")
        print(f"   ...{context}...")


if __name__ == "__main__":
    main()
