"""The chunker's guarantees as a checkable function, for tests and the benchmark.

Each check is written from the definitions (lines, root blocks, sections), not from the
chunker's internals, so that it can catch the chunker out.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from cograph_collections.markdown.model import ChunkDraft, ChunkerParams, ParsedDocument


def _is_blank(line: str) -> bool:
    return not line.strip(" \t")


class _Text:
    def __init__(self, parsed: ParsedDocument) -> None:
        self.lines = parsed.text.split("\n")
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def slice(self, first_line: int, last_line: int) -> str:
        """Exact text of lines first_line..last_line (1-based, inclusive), no final newline."""
        return "\n".join(self.lines[first_line - 1 : last_line])

    def span(self, first_line: int, last_line: int) -> int:
        return self.starts[last_line] - 1 - self.starts[first_line - 1]


def chunk_violations(
    parsed: ParsedDocument, chunks: Sequence[ChunkDraft], params: ChunkerParams
) -> list[str]:
    """Every way in which chunks break a guarantee; empty when all hold."""
    text = _Text(parsed)
    problems: list[str] = []
    problems += _coverage(parsed, chunks, text)
    if problems:
        return problems  # the other checks assume well-formed line ranges
    problems += _bookkeeping(chunks, params)
    problems += _atomic_blocks(parsed, chunks, text)
    problems += _ceiling(parsed, chunks, params, text)
    problems += _tail(chunks, params, text)
    problems += _sections_whole(parsed, chunks, params, text)
    problems += _heading_paths(parsed, chunks)
    return problems


def _coverage(parsed: ParsedDocument, chunks: Sequence[ChunkDraft], text: _Text) -> list[str]:
    """Chunks are exact line slices, in order, separated and surrounded by blank lines only."""
    problems: list[str] = []
    body_lines = text.lines[parsed.body_start_line - 1 : parsed.line_count]
    next_line = parsed.body_start_line
    for chunk in chunks:
        if chunk.start_line < next_line or chunk.end_line < chunk.start_line:
            return [f"chunk {chunk.chunk_index} lines {chunk.start_line}-{chunk.end_line} overlap or go back"]
        if chunk.content != text.slice(chunk.start_line, chunk.end_line):
            problems.append(
                f"chunk {chunk.chunk_index} content is not lines {chunk.start_line}-{chunk.end_line}"
            )
        if _is_blank(text.lines[chunk.start_line - 1]) or _is_blank(text.lines[chunk.end_line - 1]):
            problems.append(f"chunk {chunk.chunk_index} starts or ends on a blank line")
        gap = text.lines[next_line - 1 : chunk.start_line - 1]
        if not all(_is_blank(line) for line in gap):
            problems.append(f"text before line {chunk.start_line} is in no chunk")
        next_line = chunk.end_line + 1
    if chunks and chunks[-1].end_line > parsed.line_count:
        problems.append("the last chunk ends after the document")
    if not all(_is_blank(line) for line in text.lines[next_line - 1 : parsed.line_count]):
        problems.append("text after the last chunk is in no chunk")
    joined = "".join("".join(chunk.content.split()) for chunk in chunks)
    if joined != "".join("".join(line.split()) for line in body_lines):
        problems.append("chunks joined do not equal the body (ignoring whitespace)")
    return problems


def _bookkeeping(chunks: Sequence[ChunkDraft], params: ChunkerParams) -> list[str]:
    problems: list[str] = []
    if len(chunks) > params.max_chunks:
        problems.append(f"{len(chunks)} chunks exceed max_chunks {params.max_chunks}")
    for index, chunk in enumerate(chunks):
        if chunk.chunk_index != index:
            problems.append(f"chunk {index} has chunk_index {chunk.chunk_index}")
        if chunk.params != params:
            problems.append(f"chunk {index} records {chunk.params}, not {params}")
    return problems


def _boundaries(chunks: Sequence[ChunkDraft]) -> list[tuple[int, int]]:
    """(last line of a chunk, first line of the next) for each pair of neighbours."""
    return [(before.end_line, after.start_line) for before, after in pairwise(chunks)]


def _atomic_blocks(parsed: ParsedDocument, chunks: Sequence[ChunkDraft], text: _Text) -> list[str]:
    """No chunk boundary falls inside a root block, a table, a code block, or a run of
    adjacent lines starting with '|'."""
    problems: list[str] = []
    ranges = [
        (f"table at line {table.start_line}", table.start_line, table.end_line) for table in parsed.tables
    ]
    ranges += [
        (f"code block at line {code.start_line}", code.start_line, code.end_line)
        for code in parsed.code_blocks
    ]
    ranges += [
        (f"{block.kind} at line {block.start_line}", block.start_line, block.end_line)
        for block in parsed.blocks
    ]
    for before_end, after_start in _boundaries(chunks):
        for name, start, end in ranges:
            if start <= before_end and end >= after_start:
                problems.append(f"{name} is cut between lines {before_end} and {after_start}")
        if _touch_with_rows(before_end, after_start, text):
            problems.append(f"consecutive '|' rows cut between lines {before_end} and {after_start}")
    return problems


def _ceiling(
    parsed: ParsedDocument, chunks: Sequence[ChunkDraft], params: ChunkerParams, text: _Text
) -> list[str]:
    """A chunk over max_chars holds one block that is not a heading (plus headings before it);
    blocks touching with '|' rows count as one, since those rows are never cut."""
    problems: list[str] = []
    for chunk in chunks:
        if len(chunk.content) <= params.max_chars:
            continue
        inside = [b for b in parsed.blocks if chunk.start_line <= b.start_line <= chunk.end_line]
        inside = [
            b
            for b, previous in zip(inside, [None, *inside], strict=False)
            if not (previous and _touch_with_rows(previous.end_line, b.start_line, text))
        ]
        content = [b for b in inside if b.kind != "heading"]
        if len(content) > 1 or (content and any(b.start_line > content[0].start_line for b in inside)):
            problems.append(
                f"chunk {chunk.chunk_index} has {len(chunk.content)} chars over {params.max_chars} "
                f"but holds {len(content)} non-heading blocks"
            )
    return problems


def _touch_with_rows(before_end: int, after_start: int, text: _Text) -> bool:
    """Whether two line ranges are adjacent and meet at two '|' rows."""
    return (
        after_start == before_end + 1
        and text.lines[before_end - 1].lstrip().startswith("|")
        and text.lines[after_start - 1].lstrip().startswith("|")
    )


def _tail(chunks: Sequence[ChunkDraft], params: ChunkerParams, text: _Text) -> list[str]:
    """A last chunk under min_chars is the only one, or could not merge within max_chars."""
    if len(chunks) < 2 or len(chunks[-1].content) >= params.min_chars:
        return []
    merged = text.span(chunks[-2].start_line, chunks[-1].end_line)
    if merged <= params.max_chars:
        return [f"trailing chunk of {len(chunks[-1].content)} chars could merge into a {merged}-char chunk"]
    return []


def _root_sections(parsed: ParsedDocument) -> list[tuple[int, int, int]]:
    """(first line, last line, heading index or -1) of each root section."""
    sections: list[list[int]] = []
    for block in parsed.blocks:
        if block.heading is not None or not sections:
            heading = -1 if block.heading is None else block.heading
            sections.append([block.start_line, block.end_line, heading])
        else:
            sections[-1][1] = block.end_line
    return [(first, last, heading) for first, last, heading in sections]


def _sections_whole(
    parsed: ParsedDocument, chunks: Sequence[ChunkDraft], params: ChunkerParams, text: _Text
) -> list[str]:
    """A section that fits in max_chars is never split."""
    problems: list[str] = []
    for first, last, _ in _root_sections(parsed):
        if text.span(first, last) > params.max_chars:
            continue
        for before_end, after_start in _boundaries(chunks):
            if first <= before_end and last >= after_start:
                problems.append(
                    f"section at line {first} fits in max_chars but is split at line {after_start}"
                )
    return problems


def _heading_paths(parsed: ParsedDocument, chunks: Sequence[ChunkDraft]) -> list[str]:
    """heading_path is the common prefix of the paths of the sections a chunk touches
    (the first one's when they share nothing); level and anchor are its deepest heading's."""
    headings = parsed.heading_tree
    sections = _root_sections(parsed)
    paths: list[tuple[int, ...]] = []
    stack: list[int] = []
    for _, _, heading in sections:
        if heading >= 0:
            while stack and headings[stack[-1]].level >= headings[heading].level:
                stack.pop()
            stack.append(heading)
        paths.append(tuple(stack))
    problems: list[str] = []
    for chunk in chunks:
        touched = [
            path
            for (first, last, _), path in zip(sections, paths, strict=True)
            if first <= chunk.end_line and last >= chunk.start_line
        ]
        expected = touched[0]
        for path in touched[1:]:
            common = 0
            while common < min(len(expected), len(path)) and expected[common] == path[common]:
                common += 1
            expected = expected[:common]
        if not expected:
            expected = touched[0]
        texts = tuple(headings[index].text for index in expected)
        level = headings[expected[-1]].level if expected else 0
        anchor = headings[expected[-1]].anchor if expected else None
        if (chunk.heading_path, chunk.heading_level, chunk.section_anchor) != (texts, level, anchor):
            problems.append(
                f"chunk {chunk.chunk_index} heading ({chunk.heading_path}, {chunk.heading_level}, "
                f"{chunk.section_anchor}) should be ({texts}, {level}, {anchor})"
            )
    return problems
