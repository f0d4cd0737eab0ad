"""Heading-aware chunking under a character budget, with atomic blocks.

Vocabulary:
- block: a root-level block of the parsed document (paragraph, list item, table, fence, ...),
  never cut;
- section: a root-level heading and the blocks up to the next root-level heading (the blocks
  before the first heading form a section with an empty heading path);
- unit: what the packer moves as a whole. A section that fits in max_chars is one unit, so it
  is never split. A larger section is split into block units, its heading glued to the block
  after it; a section holding only a heading is glued to the unit that follows it when the
  two fit together or that unit holds a single block, so a heading does not end a chunk.

Units are packed greedily while the chunk stays within max_chars, so a trailing buffer that
fits into the previous chunk is already merged into it. A last chunk still shorter than
min_chars is therefore one that would push the previous chunk over max_chars: trailing units
of the previous chunk move into it until it reaches min_chars, as long as it stays within
max_chars. When that is impossible (the previous chunk ends with a block too big to move,
typically an oversized fence or table) the short chunk stays on its own: merging would make
a chunk over max_chars that is not a single block, and text appended to an oversized chunk
is exactly the text an embedding model truncates away.

Blocks that touch with '|' rows (a line of table-like text right above a table, which
CommonMark reads as a paragraph of its own) are one block here, so '|' rows are never cut.

Chunk content is the exact text of lines start_line..end_line; consecutive chunks are
separated only by whitespace, so the chunks cover the whole body in order.
"""

from __future__ import annotations

from itertools import accumulate

import msgspec

from cograph_collections.markdown.model import Block, ChunkDraft, ChunkerParams, Heading, ParsedDocument


class TooManyChunksError(ValueError):
    """The document would need more chunks than the per-document cap."""

    def __init__(self, count: int, cap: int) -> None:
        super().__init__(
            f"document would need {count} chunks, more than the limit of {cap} per document; "
            "split it into smaller documents"
        )
        self.count = count
        self.cap = cap


class _Unit:
    __slots__ = ("content_blocks", "first_block", "first_section", "last_block", "last_section")

    def __init__(self, first_block: int, last_block: int, section: int, content_blocks: int) -> None:
        self.first_block = first_block
        self.last_block = last_block
        self.first_section = section
        self.last_section = section
        self.content_blocks = content_blocks  # blocks that are not headings


class _Layout:
    """Character offsets of the parsed document's blocks."""

    def __init__(self, parsed: ParsedDocument, lines: list[str]) -> None:
        # characters before line n (1-based) excluding newlines: prefix[n - 1]
        prefix = list(accumulate(map(len, lines), initial=0))
        self.starts = [prefix[block.start_line - 1] + block.start_line - 1 for block in parsed.blocks]
        self.ends = [prefix[block.end_line] + block.end_line - 1 for block in parsed.blocks]

    def span(self, first_block: int, last_block: int) -> int:
        """Length of the text from the start of one block to the end of another."""
        return self.ends[last_block] - self.starts[first_block]


class MarkdownChunker:
    """Chunks a ParsedDocument. The limits are constructor defaults, not configuration:
    changing them changes every chunk, so the affected corpus must be re-embedded."""

    def __init__(self, max_chars: int = 4000, min_chars: int = 400, max_chunks: int = 512) -> None:
        if max_chars < 1 or max_chunks < 1 or not 0 <= min_chars <= max_chars:
            raise ValueError("need max_chars >= 1, max_chunks >= 1 and 0 <= min_chars <= max_chars")
        self.params = ChunkerParams(max_chars=max_chars, min_chars=min_chars, max_chunks=max_chunks)

    def chunk(self, parsed: ParsedDocument) -> list[ChunkDraft]:
        """The document's chunks in order; raises TooManyChunksError above max_chunks."""
        if not parsed.blocks:
            return []
        lines = parsed.text.split("\n")
        if len(parsed.text) <= self.params.max_chars:
            # All of it fits, so the packing below would make one chunk of every block: most
            # documents, spared the layout and the packing.
            _, paths = self._sections(parsed)
            first, last = parsed.blocks[0].start_line, parsed.blocks[-1].end_line
            content = "\n".join(lines[first - 1 : last])
            return [self._new_chunk(parsed, 0, content, _common_path(paths), first, last)]
        blocks = glue_table_rows(parsed.blocks, lines)
        if len(blocks) != len(parsed.blocks):
            parsed = msgspec.structs.replace(parsed, blocks=blocks)
        layout = _Layout(parsed, lines)
        sections, paths = self._sections(parsed)
        units = self._units(parsed, layout, sections)
        chunks = self._pack(layout, units)
        self._settle_tail(layout, units, chunks)
        if len(chunks) > self.params.max_chunks:
            raise TooManyChunksError(len(chunks), self.params.max_chunks)
        return [
            self._draft(parsed, layout, units, paths, index, first, last)
            for index, (first, last) in enumerate(chunks)
        ]

    @staticmethod
    def _sections(parsed: ParsedDocument) -> tuple[list[tuple[int, int]], list[tuple[int, ...]]]:
        """(first block, last block) of each section, and each section's heading path."""
        headings = parsed.heading_tree
        starts = [index for index, block in enumerate(parsed.blocks) if block.heading is not None]
        if not starts or starts[0] != 0:
            starts.insert(0, 0)
        sections = [
            (start, end - 1) for start, end in zip(starts, [*starts[1:], len(parsed.blocks)], strict=True)
        ]
        paths: list[tuple[int, ...]] = []
        stack: list[int] = []
        for first, _ in sections:
            heading = parsed.blocks[first].heading
            if heading is not None:
                level = headings[heading].level
                while stack and headings[stack[-1]].level >= level:
                    stack.pop()
                stack.append(heading)
            paths.append(tuple(stack))
        return sections, paths

    def _units(self, parsed: ParsedDocument, layout: _Layout, sections: list[tuple[int, int]]) -> list[_Unit]:
        max_chars = self.params.max_chars
        blocks = parsed.blocks
        units: list[_Unit] = []
        for section, (first, last) in enumerate(sections):
            heading_blocks = 1 if blocks[first].heading is not None else 0
            if layout.span(first, last) <= max_chars:
                pieces = [_Unit(first, last, section, last - first + 1 - heading_blocks)]
            else:
                start = first + heading_blocks
                pieces = [_Unit(first, min(start, last), section, 1 if start <= last else 0)]
                pieces += [_Unit(block, block, section, 1) for block in range(start + 1, last + 1)]
            for piece in pieces:
                previous = units[-1] if units else None
                if (
                    previous is not None
                    and previous.content_blocks == 0
                    and (
                        piece.content_blocks == 1
                        or layout.span(previous.first_block, piece.last_block) <= max_chars
                    )
                ):
                    previous.last_block = piece.last_block
                    previous.last_section = piece.last_section
                    previous.content_blocks = piece.content_blocks
                else:
                    units.append(piece)
        return units

    def _pack(self, layout: _Layout, units: list[_Unit]) -> list[tuple[int, int]]:
        """Greedy: (first unit, last unit) of each chunk."""
        max_chars = self.params.max_chars
        chunks: list[tuple[int, int]] = []
        first = 0
        for index in range(1, len(units)):
            if layout.span(units[first].first_block, units[index].last_block) > max_chars:
                chunks.append((first, index - 1))
                first = index
        chunks.append((first, len(units) - 1))
        return chunks

    def _settle_tail(self, layout: _Layout, units: list[_Unit], chunks: list[tuple[int, int]]) -> None:
        """Refill a last chunk under min_chars from the previous one (see the module docstring)."""
        if len(chunks) < 2:
            return
        params = self.params
        (previous_first, previous_last), (tail_first, tail_last) = chunks[-2], chunks[-1]
        end_block = units[tail_last].last_block
        if layout.span(units[tail_first].first_block, end_block) >= params.min_chars:
            return
        for moved in range(previous_last, previous_first, -1):
            size = layout.span(units[moved].first_block, end_block)
            if size > params.max_chars:
                return
            if size >= params.min_chars:
                chunks[-2:] = [(previous_first, moved - 1), (moved, tail_last)]
                return

    def _draft(
        self,
        parsed: ParsedDocument,
        layout: _Layout,
        units: list[_Unit],
        paths: list[tuple[int, ...]],
        index: int,
        first: int,
        last: int,
    ) -> ChunkDraft:
        first_block, last_block = units[first].first_block, units[last].last_block
        return self._new_chunk(
            parsed,
            index,
            parsed.text[layout.starts[first_block] : layout.ends[last_block]],
            _common_path(paths[units[first].first_section : units[last].last_section + 1]),
            parsed.blocks[first_block].start_line,
            parsed.blocks[last_block].end_line,
        )

    def _new_chunk(
        self, parsed: ParsedDocument, index: int, content: str, path: tuple[int, ...], start: int, end: int
    ) -> ChunkDraft:
        """The chunk of lines start..end (content), under the headings of path."""
        deepest: Heading | None = parsed.heading_tree[path[-1]] if path else None
        return ChunkDraft(
            chunk_index=index,
            content=content,
            heading_path=tuple(parsed.heading_tree[heading].text for heading in path),
            heading_level=deepest.level if deepest else 0,
            section_anchor=deepest.anchor if deepest else None,
            start_line=start,
            end_line=end,
            params=self.params,
        )


def _common_path(paths: list[tuple[int, ...]]) -> tuple[int, ...]:
    """Deepest common prefix of heading paths; the first path when they share nothing."""
    common = paths[0]
    for path in paths[1:]:
        length = 0
        for mine, theirs in zip(common, path, strict=False):
            if mine != theirs:
                break
            length += 1
        common = common[:length]
        if not common:
            return paths[0]
    return common


def glue_table_rows(blocks: tuple[Block, ...], lines: list[str]) -> tuple[Block, ...]:
    """Blocks with each pair that touches with '|' rows (the last line of one and the first
    of the next, adjacent, both starting with '|') made one; headings are never glued."""
    glued: list[Block] = []
    for block in blocks:
        previous = glued[-1] if glued else None
        if (
            previous is not None
            and block.start_line == previous.end_line + 1
            and previous.heading is None
            and block.heading is None
            and lines[previous.end_line - 1].lstrip().startswith("|")
            and lines[block.start_line - 1].lstrip().startswith("|")
        ):
            kind = "table" if "table" in (previous.kind, block.kind) else previous.kind
            glued[-1] = Block(kind, previous.start_line, block.end_line)
        else:
            glued.append(block)
    return tuple(glued) if len(glued) != len(blocks) else blocks
