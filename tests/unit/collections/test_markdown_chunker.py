"""MarkdownChunker: worked examples, and its invariants as properties over generated documents."""

from __future__ import annotations

from textwrap import dedent

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cograph_collections.markdown import ChunkerParams, parse_markdown
from cograph_collections.markdown.chunker import MarkdownChunker, TooManyChunksError
from cograph_collections.markdown.invariants import chunk_violations


def md(source: str) -> str:
    return dedent(source).lstrip("\n")


def chunk(text: str, **limits: int) -> list[tuple[int, int, tuple[str, ...], str]]:
    """(start_line, end_line, heading_path, first line) of each chunk, invariants checked."""
    chunker = MarkdownChunker(**limits)
    parsed = parse_markdown(text)
    chunks = chunker.chunk(parsed)
    assert chunk_violations(parsed, chunks, chunker.params) == []
    return [(c.start_line, c.end_line, c.heading_path, c.content.split("\n")[0]) for c in chunks]


def paragraph(words: int, seed: str = "word") -> str:
    return " ".join(f"{seed}{index}" for index in range(words))


def sized(length: int, seed: str) -> str:
    """A one-line paragraph of exactly `length` characters."""
    text = " ".join(f"{seed}{index}" for index in range(length))[:length]
    return text[:-1] + "." if text.endswith(" ") else text


# --- worked examples -------------------------------------------------------------------


def test_defaults_are_recorded_on_every_chunk() -> None:
    chunker = MarkdownChunker()
    assert chunker.params == ChunkerParams(max_chars=4000, min_chars=400, max_chunks=512)
    parsed = parse_markdown("---\ntitle: T\n---\n# Title\n\nBody.\n")
    [only] = chunker.chunk(parsed)
    assert only.params == chunker.params
    assert (only.chunk_index, only.start_line, only.end_line) == (0, 4, 6)
    assert only.content == "# Title\n\nBody."
    assert (only.heading_path, only.heading_level, only.section_anchor) == (("Title",), 1, "title")


def test_empty_or_frontmatter_only_documents_have_no_chunks() -> None:
    assert MarkdownChunker().chunk(parse_markdown("")) == []
    assert MarkdownChunker().chunk(parse_markdown("---\ntitle: x\n---\n\n  \n")) == []


def test_sections_merge_while_they_fit_and_the_path_is_their_common_prefix() -> None:
    text = md(
        f"""
        # Guide
        ## Install
        {sized(200, "i")}
        ## Configure
        {sized(200, "c")}
        ### Advanced
        {sized(200, "a")}
        # Reference
        {sized(200, "r")}
        """
    )
    # Guide..Advanced is 646 characters: one chunk; adding Reference would make 859.
    assert chunk(text, max_chars=800, min_chars=50) == [
        (1, 7, ("Guide",), "# Guide"),
        (8, 9, ("Reference",), "# Reference"),
    ]
    # sharing nothing, a merged chunk takes its first section's path
    assert chunk(text, max_chars=5000, min_chars=50) == [(1, 9, ("Guide",), "# Guide")]


def test_a_section_is_split_between_blocks_only_when_it_alone_is_too_big() -> None:
    text = md(
        f"""
        # Small
        {sized(100, "s")}

        # Big
        {sized(200, "a")}

        {sized(200, "b")}

        {sized(200, "c")}
        """
    )
    # Small (108) fits whole; Big (610) is split after its first paragraph, heading attached.
    assert chunk(text, max_chars=500, min_chars=100) == [
        (1, 5, ("Small",), "# Small"),
        (7, 9, ("Big",), sized(200, "b")),
    ]
    # with room for Big alone it stays whole
    assert chunk(text, max_chars=700, min_chars=100) == [
        (1, 2, ("Small",), "# Small"),
        (4, 9, ("Big",), "# Big"),
    ]


def test_oversized_table_and_fence_stay_whole_with_their_heading() -> None:
    rows = "\n".join(f"| {index} | {paragraph(8)} |" for index in range(40))
    text = (
        f"# Intro\n{paragraph(20)}\n\n## Table\n| n | text |\n|---|---|\n{rows}\n\n## Code\n```py\n"
        + "\n".join(f"print({index})" for index in range(200))
        + "\n```\n"
    )
    chunker = MarkdownChunker(max_chars=800, min_chars=100)
    parsed = parse_markdown(text)
    chunks = chunker.chunk(parsed)
    assert chunk_violations(parsed, chunks, chunker.params) == []
    assert [(c.heading_path, len(c.content) > 800) for c in chunks] == [
        (("Intro",), False),
        (("Intro", "Table"), True),
        (("Intro", "Code"), True),
    ]
    assert chunks[1].content.startswith("## Table\n| n | text |")
    assert chunks[2].content.endswith("print(199)\n```")


def test_a_row_above_a_table_is_never_cut_from_it() -> None:
    # CommonMark reads the first row as a paragraph: the table starts at its delimiter row's header.
    rows = "\n".join(f"| plan {index} | {paragraph(8)} |" for index in range(40))
    text = f"# Pricing\n\n| Plan | Limits (group) |\n| Plan | Limit |\n|---|---|\n{rows}\n"
    chunker = MarkdownChunker(max_chars=800, min_chars=100)
    parsed = parse_markdown(text)
    assert [block.kind for block in parsed.blocks] == ["heading", "paragraph", "table"]
    chunks = chunker.chunk(parsed)
    assert chunk_violations(parsed, chunks, chunker.params) == []
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 45)]


def test_a_short_tail_that_fits_is_packed_into_the_previous_chunk() -> None:
    text = f"# A\n{sized(250, 'a')}\n\n# B\n{sized(250, 'b')}\n\n# C\ntail\n"
    assert chunk(text, max_chars=600, min_chars=100) == [(1, 8, ("A",), "# A")]


def test_a_short_tail_that_cannot_merge_takes_units_from_the_previous_chunk() -> None:
    text = f"# A\n{sized(150, 'a')}\n\n# B\n{sized(150, 'b')}\n\n# C\n{sized(150, 'c')}\n\n# D\ntail\n"
    # A+B+C (466) fill a chunk, D (9) is left alone: C moves over to join it.
    assert chunk(text, max_chars=470, min_chars=150) == [
        (1, 5, ("A",), "# A"),
        (7, 11, ("C",), "# C"),
    ]


def test_a_short_tail_after_an_oversized_block_stays_on_its_own() -> None:
    fence = "```\n" + "\n".join("x" * 60 for _ in range(30)) + "\n```"
    text = f"# Code\n{fence}\n\n## Copyright\nCC0.\n"
    assert [(start, end) for start, end, _, _ in chunk(text, max_chars=1000, min_chars=200)] == [
        (1, 33),
        (35, 36),
    ]


def test_too_many_chunks_is_refused_with_a_clear_error() -> None:
    text = "\n\n".join(f"# H{index}\n{paragraph(30)}" for index in range(12))
    parsed = parse_markdown(text)
    needed = len(MarkdownChunker(max_chars=300, min_chars=10, max_chunks=1000).chunk(parsed))
    assert needed == 12
    assert len(MarkdownChunker(max_chars=300, min_chars=10, max_chunks=12).chunk(parsed)) == 12
    with pytest.raises(TooManyChunksError, match="would need 12 chunks, more than the limit of 11") as raised:
        MarkdownChunker(max_chars=300, min_chars=10, max_chunks=11).chunk(parsed)
    assert (raised.value.count, raised.value.cap) == (12, 11)


def test_headings_nested_in_lists_or_quotes_do_not_start_sections() -> None:
    text = "# Top\n\n- item\n\n  ## In a list\n\n> ## In a quote\n"
    parsed = parse_markdown(text)
    assert [h.text for h in parsed.heading_tree] == ["Top", "In a list", "In a quote"]
    [only] = MarkdownChunker().chunk(parsed)
    assert only.heading_path == ("Top",)


def test_invalid_limits_are_rejected() -> None:
    with pytest.raises(ValueError, match="min_chars"):
        MarkdownChunker(max_chars=100, min_chars=200)
    with pytest.raises(ValueError, match="max_chunks"):
        MarkdownChunker(max_chunks=0)


# --- properties ------------------------------------------------------------------------

_WORDS = st.sampled_from(
    [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "`code`",
        "**bold**",
        "[link](a.md)",
        "[[Wiki]]",
        "a|b",
        "#tag",
        "é",
        "x" * 30,
    ]
)


@st.composite
def _paragraph(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.lists(_WORDS, min_size=1, max_size=12), min_size=1, max_size=4))
    return "\n".join(" ".join(words) for words in lines)


@st.composite
def _heading(draw: st.DrawFn) -> str:
    text = " ".join(draw(st.lists(_WORDS, min_size=1, max_size=4)))
    if draw(st.booleans()):
        return "#" * draw(st.integers(1, 4)) + " " + text
    return text + "\n" + draw(st.sampled_from(["===", "---"]))


@st.composite
def _fence(draw: st.DrawFn) -> str:
    body = draw(
        st.lists(
            st.sampled_from(["# not a heading", "| not | a | row |", "x = 1", "", "    indented"]),
            max_size=30,
        )
    )
    return "```" + draw(st.sampled_from(["", "py", "sh"])) + "\n" + "\n".join(body) + "\n```"


@st.composite
def _table(draw: st.DrawFn) -> str:
    width = draw(st.integers(1, 3))
    rows = draw(st.lists(st.lists(_WORDS, min_size=width, max_size=width), max_size=25))
    header = "| " + " | ".join(f"h{index}" for index in range(width)) + " |"
    delimiter = "|" + "---|" * width
    return "\n".join(
        [header, delimiter, *("| " + " | ".join(r).replace("a|b", "a\\|b") + " |" for r in rows)]
    )


@st.composite
def _list(draw: st.DrawFn) -> str:
    items = []
    for _ in range(draw(st.integers(1, 5))):
        item = "- " + draw(_paragraph()).replace("\n", "\n  ")
        if draw(st.booleans()):
            item += "\n\n  " + draw(_fence()).replace("\n", "\n  ")
        items.append(item)
    return "\n".join(items)


_BLOCK = st.one_of(
    _paragraph(),
    _heading(),
    _fence(),
    _table(),
    _table().map(lambda table: "| group header above the header |\n" + table),  # a paragraph to CommonMark
    _list(),
    _paragraph().map(lambda text: "> " + text.replace("\n", "\n> ")),
    st.just("    indented code\n    more"),
    st.just("<div>\nhtml *block*\n</div>"),
    st.just("---"),
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(_BLOCK, max_size=25))
    separators = draw(
        st.lists(st.sampled_from(["\n\n", "\n\n\n", "\n"]), min_size=len(blocks), max_size=len(blocks))
    )
    body = "".join(block + separator for block, separator in zip(blocks, separators, strict=True))
    if draw(st.booleans()):
        body = "---\ntitle: Generated\n---\n" + body
    return body


_LIMITS = st.tuples(st.sampled_from([60, 200, 500, 1500]), st.sampled_from([0, 20, 100, 400])).filter(
    lambda limits: limits[1] <= limits[0]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), _LIMITS)
def test_invariants_hold_on_generated_documents(text: str, limits: tuple[int, int]) -> None:
    chunker = MarkdownChunker(max_chars=limits[0], min_chars=limits[1], max_chunks=10_000)
    parsed = parse_markdown(text)
    assert chunk_violations(parsed, chunker.chunk(parsed), chunker.params) == []


_MARKDOWN_NOISE = st.text(alphabet=st.sampled_from(list("#>-*+|`~=_[]()!<>:\\ \t\n1.aé")), max_size=400)


@settings(max_examples=300, deadline=None)
@given(_MARKDOWN_NOISE, _LIMITS)
def test_invariants_hold_on_arbitrary_markdown_noise(text: str, limits: tuple[int, int]) -> None:
    chunker = MarkdownChunker(max_chars=limits[0], min_chars=limits[1], max_chunks=10_000)
    parsed = parse_markdown(text)
    assert chunk_violations(parsed, chunker.chunk(parsed), chunker.params) == []


@settings(max_examples=100, deadline=None)
@given(documents(), st.integers(1, 6))
def test_max_chunks_refuses_exactly_when_more_chunks_are_needed(text: str, cap: int) -> None:
    parsed = parse_markdown(text)
    needed = len(MarkdownChunker(max_chars=200, min_chars=20, max_chunks=10_000).chunk(parsed))
    capped = MarkdownChunker(max_chars=200, min_chars=20, max_chunks=cap)
    if needed <= cap:
        assert len(capped.chunk(parsed)) == needed
    else:
        with pytest.raises(TooManyChunksError):
            capped.chunk(parsed)
