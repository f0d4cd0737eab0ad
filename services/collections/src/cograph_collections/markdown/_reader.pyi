"""Types of the compiled _reader module (see _reader.pyx)."""

from collections.abc import Iterable
from typing import Any

from cograph_collections.markdown.model import BlockKind

BlockRecord = tuple[BlockKind, int, int, int | None]  # kind, first line, last line, heading index
HeadingRecord = tuple[int, str, int]  # level, inline text, line
CodeRecord = tuple[str | None, bool, str, int, int]  # language, fenced, content, first and last line
TableRecord = tuple[list[tuple[str, ...]], int, int]  # rows (header first), first and last line
LinkRecord = tuple[int, int, Any, bool, str, int]  # byte range, pyromark's link data, embed, text, line

def read_events(
    events: Iterable[tuple[Any, Any]], data: bytes, first_line: int
) -> tuple[list[BlockRecord], list[HeadingRecord], list[CodeRecord], list[TableRecord], list[LinkRecord]]: ...
def count_words(data: bytes) -> int: ...
