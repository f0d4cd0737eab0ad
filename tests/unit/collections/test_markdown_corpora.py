"""The parser and chunker on the real corpora in ../shared/corpora.

- every chunk invariant holds on every document of every corpus;
- differential: markdown-it-py (commonmark preset + GFM tables) is the oracle for headings,
  code blocks, tables and links; at least 99% of documents agree exactly, and every
  disagreement falls in one of the explained categories below.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from cograph_collections.markdown import ParsedDocument, parse_markdown
from cograph_collections.markdown.chunker import MarkdownChunker, TooManyChunksError
from cograph_collections.markdown.invariants import chunk_violations

REPO_ROOT = Path(__file__).resolve().parents[3]
CORPORA = REPO_ROOT / ".." / "shared" / "corpora"
CORPUS_NAMES = ("astro-docs", "eips", "obsidian-help-en")

Document = tuple[str, ParsedDocument]  # (path inside the corpus, parsed document)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Document]]:
    """Each corpus unpacked once and every .md/.mdx file parsed once."""
    if not CORPORA.is_dir():
        pytest.skip(
            f"real corpora not found at {CORPORA.resolve()} (CI has them at <clone>/../shared/corpora)"
        )
    root = tmp_path_factory.mktemp("corpora")
    parsed: dict[str, list[Document]] = {}
    for name in CORPUS_NAMES:
        with tarfile.open(CORPORA / f"{name}.tar.gz") as archive:
            archive.extractall(root / name, filter="data")
        files = sorted(path for path in (root / name).rglob("*") if path.suffix in (".md", ".mdx"))
        parsed[name] = [
            (str(path.relative_to(root / name)), parse_markdown(path.read_text("utf-8"))) for path in files
        ]
    return parsed


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_every_chunk_invariant_holds_on_every_document(corpora: dict[str, list[Document]], name: str) -> None:
    chunker = MarkdownChunker()
    failures: list[str] = []
    chunk_count = 0
    for path, parsed in corpora[name]:
        try:
            chunks = chunker.chunk(parsed)
        except TooManyChunksError as error:
            failures.append(f"{path}: {error}")
            continue
        chunk_count += len(chunks)
        failures += [f"{path}: {problem}" for problem in chunk_violations(parsed, chunks, chunker.params)]
    assert failures == []
    assert chunk_count >= len(corpora[name])  # every corpus document has a body


# --- differential against markdown-it --------------------------------------------------

_ORACLE = MarkdownIt("commonmark").enable("table")
Structure = dict[str, list[object]]


def _oracle(parsed: ParsedDocument) -> Structure:
    """What markdown-it sees, frontmatter lines blanked so that line numbers stay the same."""
    lines = parsed.text.split("\n")
    body = "\n".join([""] * (parsed.body_start_line - 1) + lines[parsed.body_start_line - 1 :])
    tokens = _ORACLE.parse(body)
    found: Structure = {"headings": [], "fences": [], "indented": [], "tables": [], "links": []}
    for index, token in enumerate(tokens):
        assert token.map is not None or token.type not in (
            "heading_open",
            "fence",
            "code_block",
            "table_open",
        )
        if token.type == "heading_open" and token.map:
            children = tokens[index + 1].children or []
            text = "".join(
                " " if child.type == "softbreak" else child.content
                for child in children
                if child.type in ("text", "code_inline", "image", "softbreak")
            )
            found["headings"].append((int(token.tag[1]), " ".join(text.split()), token.map[0] + 1))
        elif token.type == "fence" and token.map:
            info = token.info.split()
            found["fences"].append((info[0] if info else None, token.map[0] + 1, token.map[1]))
        elif token.type == "code_block" and token.map:
            found["indented"].append((token.map[0] + 1, token.map[1]))
        elif token.type == "table_open" and token.map:
            found["tables"].append((token.map[0] + 1, token.map[1]))
        elif token.type == "inline":
            found["links"] += [
                unquote(str(c.attrs["href"])) for c in token.children or [] if c.type == "link_open"
            ]
    found["links"].sort(key=str)
    return found


def _ours(parsed: ParsedDocument) -> Structure:
    return {
        "headings": [(h.level, " ".join(h.text.split()), h.line) for h in parsed.heading_tree],
        "fences": [(c.language, c.start_line, c.end_line) for c in parsed.code_blocks if c.fenced],
        "indented": [(c.start_line, c.end_line) for c in parsed.code_blocks if not c.fenced],
        "tables": [(t.start_line, t.end_line) for t in parsed.tables],
        "links": sorted((unquote(link.href) for link in parsed.links if link.link_type != "wiki"), key=str),
    }


def _line(parsed: ParsedDocument, number: int) -> str:
    return parsed.text.split("\n")[number - 1]


def _wiki_link_in_heading(
    parsed: ParsedDocument, kind: str, oracle: list[object], ours: list[object]
) -> bool:
    """We read [[wiki links]] in headings and keep their label; CommonMark keeps the brackets."""
    if kind != "headings" or len(oracle) != len(ours):
        return False
    return all(
        mine == theirs or "[[" in _line(parsed, theirs[2])  # type: ignore[index]
        for mine, theirs in zip(ours, oracle, strict=True)
    )


_LABEL_ONLY_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*$")


def _definition_then_indented_lines(
    parsed: ParsedDocument, kind: str, oracle: list[object], ours: list[object]
) -> bool:
    """A '[label]:' line with its destination on the next line, then indented lines: markdown-it
    ends the paragraph after the definition, so the indented lines become code; CommonMark
    (cmark, the reference implementation) keeps them as paragraph continuation, as we do."""
    if kind != "indented":
        return False
    extra = [block for block in oracle if block not in ours]
    return (
        all(block in oracle for block in ours)
        and bool(extra)
        and all(_LABEL_ONLY_DEFINITION.match(_line(parsed, block[0] - 2)) for block in extra)  # type: ignore[index]
    )


_DELIMITER_ROW_WITH_TAB = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)*[ \t]*:?-+:?[ \t]*\|?[ \t]*$")


def _tab_in_delimiter_row(
    parsed: ParsedDocument, kind: str, oracle: list[object], ours: list[object]
) -> bool:
    """A GFM table whose delimiter row holds a tab (after `|:--:`, say): cmark-gfm and markdown-it
    take it as cell whitespace, pulldown-cmark (our parser) does not and reads a paragraph."""
    if kind != "tables":
        return False
    missing = [table for table in oracle if table not in ours]
    return (
        all(table in oracle for table in ours)
        and bool(missing)
        and all(
            "\t" in (row := _line(parsed, table[0] + 1)) and _DELIMITER_ROW_WITH_TAB.match(row)  # type: ignore[index]
            for table in missing
        )
    )


EXPLAINED: dict[str, Callable[[ParsedDocument, str, list[object], list[object]], bool]] = {
    "wiki link in a heading": _wiki_link_in_heading,
    "reference definition on two lines followed by indented lines": _definition_then_indented_lines,
    "tab in a table's delimiter row": _tab_in_delimiter_row,
}


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_parser_agrees_with_markdown_it(corpora: dict[str, list[Document]], name: str) -> None:
    documents = corpora[name]
    disagreeing: set[str] = set()
    unexplained: list[str] = []
    for path, parsed in documents:
        oracle, ours = _oracle(parsed), _ours(parsed)
        for kind in oracle:
            if oracle[kind] == ours[kind]:
                continue
            disagreeing.add(path)
            if not any(explains(parsed, kind, oracle[kind], ours[kind]) for explains in EXPLAINED.values()):
                missing = [item for item in oracle[kind] if item not in ours[kind]][:3]
                extra = [item for item in ours[kind] if item not in oracle[kind]][:3]
                unexplained.append(f"{path} {kind}: markdown-it only {missing}, ours only {extra}")
    assert unexplained == []
    agreement = 1 - len(disagreeing) / len(documents)
    assert agreement >= 0.99, f"{name}: {len(disagreeing)} of {len(documents)} documents disagree"
