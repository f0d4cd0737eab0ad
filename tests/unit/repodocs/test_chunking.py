"""Heading split plus word window: exact windows, kept text, heading paths and the overlap guarantee."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cograph_repodocs.domain.chunking import Chunk, WordWindowChunker

CHUNKER = WordWindowChunker()


def words(start: int, stop: int) -> list[str]:
    return [f"w{i}" for i in range(start, stop)]


def test_defaults_are_the_spec_values() -> None:
    assert (CHUNKER.max_words, CHUNKER.overlap_words) == (512, 64)
    assert (CHUNKER.max_chars, CHUNKER.overlap_chars) == (8000, 800)


def test_a_1200_word_section_gives_windows_at_0_448_896() -> None:
    # Indentation and blank lines are lost once a section needs more than one window.
    text = "\n\n".join("    " + " ".join(words(i, i + 10)) for i in range(0, 1200, 10))

    chunks = CHUNKER.chunk("notes.txt", text).chunks

    assert [c.text for c in chunks] == [
        " ".join(words(0, 512)),
        " ".join(words(448, 960)),
        " ".join(words(896, 1200)),
    ]
    assert [c.chunk_index for c in chunks] == [0, 1, 2]


@pytest.mark.parametrize(
    ("count", "starts"),
    [(512, [0]), (513, [0, 448]), (960, [0, 448]), (961, [0, 448, 896]), (1408, [0, 448, 896])],
)
def test_window_starts_at_the_edges(count: int, starts: list[int]) -> None:
    windows = CHUNKER.windows(" ".join(words(0, count)))
    assert [w.split()[0] for w in windows] == [f"w{s}" for s in starts]
    assert windows[-1].split()[-1] == f"w{count - 1}"


def test_a_section_that_fits_keeps_its_original_text() -> None:
    text = "# Title\n\n```python\ndef f():\n    return 1\n```\n\n\n- item\n  - nested\n"
    [chunk] = CHUNKER.chunk("README.md", text).chunks
    assert chunk.text == text.strip()


def test_sections_carry_heading_path_anchor_and_a_document_wide_index() -> None:
    text = """\
Preamble before any heading.

# Guide

Welcome.

## Install

pip install it.

### Linux

apt.

## Usage

Use it.

## Install

Again.

# Appendix
"""
    document = CHUNKER.chunk("docs/guide.md", text)

    assert document.title == "Guide"
    assert document.chunks == [
        Chunk(chunk_index=0, heading_path=[], heading_anchor="", text="Preamble before any heading."),
        Chunk(chunk_index=1, heading_path=["Guide"], heading_anchor="guide", text="# Guide\n\nWelcome."),
        Chunk(
            chunk_index=2,
            heading_path=["Guide", "Install"],
            heading_anchor="install",
            text="## Install\n\npip install it.",
        ),
        Chunk(
            chunk_index=3,
            heading_path=["Guide", "Install", "Linux"],
            heading_anchor="linux",
            text="### Linux\n\napt.",
        ),
        Chunk(
            chunk_index=4, heading_path=["Guide", "Usage"], heading_anchor="usage", text="## Usage\n\nUse it."
        ),
        Chunk(
            chunk_index=5,
            heading_path=["Guide", "Install"],
            heading_anchor="install-1",
            text="## Install\n\nAgain.",
        ),
        Chunk(chunk_index=6, heading_path=["Appendix"], heading_anchor="appendix", text="# Appendix"),
    ]


def test_an_oversized_section_keeps_its_heading_path_in_every_window() -> None:
    text = "# Big\n\n" + " ".join(words(0, 600)) + "\n\n# Small\n\nend"
    chunks = CHUNKER.chunk("a.md", text).chunks
    assert [(c.chunk_index, c.heading_path, c.text.split()[:3]) for c in chunks] == [
        (0, ["Big"], ["#", "Big", "w0"]),
        (1, ["Big"], ["w446", "w447", "w448"]),
        (2, ["Small"], ["#", "Small", "end"]),
    ]


def test_a_setext_heading_of_several_lines_is_one_title_with_its_spaces() -> None:
    text = "Config parser\nand validator\n===\n\nIntro.\n\nHow it\nworks\n---\n\nBody.\n"
    chunked = CHUNKER.chunk("README.md", text)
    assert chunked.title == "Config parser and validator"
    assert [(c.heading_path, c.heading_anchor) for c in chunked.chunks] == [
        (["Config parser and validator"], "config-parserand-validator"),
        (["Config parser and validator", "How it works"], "how-itworks"),
    ]


def test_a_deeper_heading_skipping_levels_still_nests() -> None:
    chunks = CHUNKER.chunk("a.md", "### Deep\n\nx\n\n# Top\n\ny\n\n#### Deeper\n\nz").chunks
    assert [c.heading_path for c in chunks] == [["Deep"], ["Top"], ["Top", "Deeper"]]


def test_a_dockerfile_goes_through_the_readme_chunker_its_comments_are_headings() -> None:
    """The spec: "split by the same heading-and-word-window chunker as a README. There is no
    language-aware handling"; titles come from the first # heading."""
    text = (
        '# build stage\nFROM python:3.11\n\n# run stage\nCMD ["app"]\n    # indented: code, not a heading\n'
    )
    document = CHUNKER.chunk("Dockerfile", text)
    assert document.title == "build stage"
    assert [(h.level, h.text, h.line) for h in document.headings] == [
        (1, "build stage", 1),
        (1, "run stage", 4),
    ]
    assert document.chunks == [
        Chunk(
            chunk_index=0,
            heading_path=["build stage"],
            heading_anchor="build-stage",
            text="# build stage\nFROM python:3.11",
        ),
        Chunk(
            chunk_index=1,
            heading_path=["run stage"],
            heading_anchor="run-stage",
            text='# run stage\nCMD ["app"]\n    # indented: code, not a heading',
        ),
    ]


def test_a_multi_document_yaml_file_is_cut_at_its_comment_lines_only() -> None:
    """The `---` between the documents made the Deployment above it a setext heading: the chunk's
    heading path, anchor and so its citation held the whole object."""
    text = (
        "# The gateway\napiVersion: apps/v1\nkind: Deployment\nspec:\n  strategy:\n"
        "    type: RollingUpdate\n---\napiVersion: v1\nkind: Service\n"
        "---\n# Its policy\nkind: NetworkPolicy\n"
    )
    document = CHUNKER.chunk("deploy/k8s/gateway.yaml", text)
    assert document.title == "The gateway"
    assert [(c.heading_path, c.heading_anchor, c.text.splitlines()[-1]) for c in document.chunks] == [
        (["The gateway"], "the-gateway", "---"),
        (["Its policy"], "its-policy", "kind: NetworkPolicy"),
    ]


@pytest.mark.parametrize(
    ("path", "text", "title"),
    [
        ("docs/guide.md", "## Only level two\n\n# First\n\n# Second\n", "First"),
        ("docs/guide.md", "## Only level two\n", "guide.md"),
        ("docs/guide.md", "#\n\n# Real\n", "Real"),
        ("docs/empty.md", "", "empty.md"),
        ("docs/index.rst", "Intro\n\nSection\n-------\n\nSub\n~~~\n", "Section"),
        ("helm/values.yaml", "# Title-looking comment\nkey: 1\n", "Title-looking comment"),
        ("helm/values.yaml", "key: 1\n", "values.yaml"),
    ],
)
def test_title(path: str, text: str, title: str) -> None:
    assert CHUNKER.chunk(path, text).title == title


def test_rst_sections_split_at_titles() -> None:
    text = "Project\n=======\n\nIntro.\n\nInstall\n-------\n\nSteps.\n"
    chunks = CHUNKER.chunk("README.rst", text).chunks
    assert [(c.heading_path, c.heading_anchor, c.text) for c in chunks] == [
        (["Project"], "project", "Project\n=======\n\nIntro."),
        (["Project", "Install"], "install", "Install\n-------\n\nSteps."),
    ]


def test_blank_documents_have_no_chunks() -> None:
    assert CHUNKER.chunk("a.md", "  \n\n\t\n").chunks == []


def test_smaller_parameters() -> None:
    chunker = WordWindowChunker(max_words=4, overlap_words=1)
    assert chunker.windows("a b c d e f g h i j") == ["a b c d", "d e f g", "g h i j"]


def test_minified_json_is_cut_into_bounded_overlapping_windows_that_cover_it() -> None:
    # One 900 KB "word": as a single chunk its tsvector would pass PostgreSQL's 1 MiB limit.
    text = "[" + ",".join(f'{{"id":"{i:08d}","name":"user-{i}"}}' for i in range(25_000)) + "]"

    chunks = CHUNKER.chunk("examples/users.json", text).chunks

    assert [len(c.text) for c in chunks[:-1]] == [8000] * (len(chunks) - 1)
    assert 800 < len(chunks[-1].text) <= 8000
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    # Each window repeats the previous one's last 800 characters, and together they are the text.
    assert all(a.text[-800:] == b.text[:800] for a, b in itertools.pairwise(chunks))
    assert chunks[0].text + "".join(c.text[800:] for c in chunks[1:]) == text


def test_an_over_long_word_among_many_is_cut_inside_its_word_window() -> None:
    chunker = WordWindowChunker(max_words=4, overlap_words=1, max_chars=10, overlap_chars=2)
    assert chunker.windows("a b c d e ABCDEFGHIJKLMNOP f") == [
        "a b c d",
        "d e ABCDEF",
        "EFGHIJKLMN",
        "MNOP f",
    ]


def test_a_section_that_fits_in_words_but_not_in_characters_is_cut_too() -> None:
    chunker = WordWindowChunker(max_chars=10, overlap_chars=3)
    assert chunker.windows("0123456789abcdef") == ["0123456789", "789abcdef"]


def test_a_heading_that_is_a_whole_minified_line_is_cut_in_the_heading_path() -> None:
    # Every chunk of the section repeats the heading path, and PostgreSQL indexes it with the text.
    heading = ",".join(f"{i:04d}" for i in range(20_000))
    chunks = CHUNKER.chunk("docs/data.md", f"# {heading}\n\ntext\n").chunks

    assert len(chunks) > 10
    assert {tuple(c.heading_path) for c in chunks} == {(heading[:199] + "…",)}


@pytest.mark.parametrize(("max_chars", "overlap_chars"), [(0, 0), (10, 10), (10, -1)])
def test_invalid_character_parameters_are_rejected(max_chars: int, overlap_chars: int) -> None:
    with pytest.raises(ValueError, match="max_chars"):
        WordWindowChunker(max_chars=max_chars, overlap_chars=overlap_chars)


@pytest.mark.parametrize(("max_words", "overlap_words"), [(0, 0), (10, 10), (10, -1)])
def test_invalid_parameters_are_rejected(max_words: int, overlap_words: int) -> None:
    with pytest.raises(ValueError, match="max_words"):
        WordWindowChunker(max_words=max_words, overlap_words=overlap_words)


SEPARATORS = [" ", "  ", "\n", "\n\n", "\t", " \n    "]


@settings(max_examples=100, deadline=None)
@given(
    data=st.data(),
    word_count=st.integers(min_value=513, max_value=2000),
    sentence_length=st.integers(min_value=2, max_value=64),
)
def test_a_sentence_straddling_a_window_boundary_appears_whole_in_one_of_the_two_chunks(
    data: st.DataObject, word_count: int, sentence_length: int
) -> None:
    tokens = words(0, word_count)
    rng = data.draw(st.randoms(use_true_random=False))
    separators = [rng.choice(SEPARATORS) for _ in range(word_count - 1)]
    text = tokens[0] + "".join(sep + token for sep, token in zip(separators, tokens[1:], strict=True))
    windows = CHUNKER.windows(text)
    # Window i ends after word 448*i + 512; pick a boundary that a sentence can cross.
    boundaries = [448 * i + 512 for i in range(len(windows) - 1)]
    window = data.draw(st.integers(min_value=0, max_value=len(boundaries) - 1))
    cut = data.draw(st.integers(min_value=1, max_value=sentence_length - 1))
    start = boundaries[window] - cut
    sentence = tokens[start : start + sentence_length]
    if len(sentence) < sentence_length:
        return  # the document ends inside the sentence, so it straddles nothing

    # Tokens are unique, so a padded substring test is an exact contiguous-word test.
    padded = f" {' '.join(sentence)} "
    assert padded in f" {windows[window]} " or padded in f" {windows[window + 1]} "
