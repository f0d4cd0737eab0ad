"""What the dense stream embeds for a chunk: windows that cover it, each with its context.

A whitespace tokenizer stands in for the model's (one word, one word piece) so that window
boundaries can be read off the text; the real tokenizer is exercised by the integration tests.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from cograph_embeddings import InputWindows
from cograph_retrieval.passages import CONTEXT_CHARS, MAX_WINDOWS, OVERLAP_TOKENS, Passage, cut


class Words(InputWindows):
    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self.longest_input = 0

    def spans(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        self.longest_input = max([self.longest_input, *(len(text) for text in texts)])
        return [[match.span() for match in re.finditer(r"\S+", text)] for text in texts]


def words(count: int, start: int = 0) -> str:
    return " ".join(f"w{n}" for n in range(start, start + count))


def test_a_chunk_that_fits_is_one_window_with_its_title_and_headings() -> None:
    [windows] = cut(Words(64), [Passage(context=["Guide", "Install"], text=words(20))])
    assert windows == [f"Guide > Install\n\n{words(20)}"]


def test_a_heading_the_text_opens_with_is_not_said_twice_in_the_first_window() -> None:
    text = f"Install\n\n{words(20)}"
    [windows] = cut(Words(64), [Passage(context=["Guide", "Install"], text=text)])
    assert windows == [f"Guide\n\n{text}"]


def test_a_long_chunk_is_covered_whole_by_overlapping_windows_that_each_fit() -> None:
    tokens = Words(256)  # all-MiniLM-L6-v2's input, less its two special tokens
    text = words(1000)
    [windows] = cut(tokens, [Passage(context=["Guide"], text=text)])
    assert 1 < len(windows) < MAX_WINDOWS
    bodies = [window.removeprefix("Guide\n\n").split() for window in windows]
    assert all(len(window.split()) <= tokens.max_tokens for window in windows)
    assert (bodies[0][0], bodies[-1][-1]) == ("w0", "w999")  # from the first word to the last
    for before, after in itertools.pairwise(bodies):
        shared = int(before[-1][1:]) - int(after[0][1:]) + 1
        assert shared >= OVERLAP_TOKENS  # no sentence falls between two windows
    assert all(window.startswith("Guide\n\n") for window in windows)  # each says what it is about


def test_a_chunk_too_long_for_max_windows_is_data_and_its_first_window_stands_for_it() -> None:
    tokens = Words(256)
    covered = MAX_WINDOWS * (tokens.max_tokens - OVERLAP_TOKENS) + OVERLAP_TOKENS  # with overlaps
    [longest_prose] = cut(tokens, [Passage(context=[], text=words(covered))])
    assert len(longest_prose) == MAX_WINDOWS
    [data] = cut(tokens, [Passage(context=["users.json"], text=words(100 * 256))])
    assert data == [f"users.json\n\n{words(255)}"]


def test_a_context_as_long_as_a_minified_file_is_cut_before_it_is_tokenized() -> None:
    tokens = Words(64)
    heading = "x" * 900_000
    [windows] = cut(tokens, [Passage(context=["Users", heading], text=words(10))])
    assert tokens.longest_input <= CONTEXT_CHARS
    assert windows[0].endswith(words(10))
