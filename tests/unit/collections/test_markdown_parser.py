"""parse_markdown: structure, line numbers, anchors and links, with exact expected values."""

from __future__ import annotations

import time
from textwrap import dedent

import pytest

from cograph_collections.markdown import (
    CodeBlock,
    Heading,
    Link,
    Table,
    TooManyTableCellsError,
    parse_markdown,
)
from cograph_collections.markdown._reader import count_words
from cograph_collections.markdown.anchors import AnchorAllocator, slugify
from cograph_collections.markdown.chunker import MarkdownChunker


def md(source: str) -> str:
    return dedent(source).lstrip("\n")


# --- frontmatter and title -------------------------------------------------------------


def test_frontmatter_title_wins_over_first_h1_and_lines_count_from_the_file_start() -> None:
    doc = parse_markdown(
        md(
            """
            ---
            title: From Frontmatter
            tags: [a, b]
            created: 2021-03-13
            ---
            # From Heading

            Text.
            """
        )
    )
    assert doc.frontmatter == {"title": "From Frontmatter", "tags": ["a", "b"], "created": "2021-03-13"}
    assert doc.title == "From Frontmatter"
    assert doc.body_start_line == 6
    assert doc.heading_tree == (Heading(1, "From Heading", "from-heading", 6),)
    assert doc.warnings == ()


def test_title_falls_back_to_first_level_one_heading_then_none() -> None:
    assert parse_markdown("## Second\n\n# First\n\n# Later\n").title == "First"
    assert parse_markdown("## Only a level two\n").title is None
    assert parse_markdown("---\ndescription: no title\n---\nplain\n").title is None


def test_invalid_yaml_is_read_as_markdown_with_a_warning_never_an_exception() -> None:
    doc = parse_markdown("---\ntitle: [unclosed\n---\n# Heading\n")
    assert doc.frontmatter == {}
    assert len(doc.warnings) == 1
    assert doc.warnings[0].startswith("invalid frontmatter YAML")
    assert doc.title == "Heading"
    assert doc.body_start_line == 1
    assert doc.heading_tree[-1] == Heading(1, "Heading", "heading", 4)


def test_a_block_that_is_not_a_mapping_is_markdown_and_nothing_of_it_is_lost() -> None:
    # '---' also opens a thematic break: the text up to the next '---' is the document's own.
    doc = parse_markdown("---\n# Release notes\n\nImportant text.\n\n---\n\nMore.\n")
    assert doc.frontmatter == {}
    assert doc.warnings == ("frontmatter is a str, not a mapping; the block is read as markdown",)
    assert doc.title == "Release notes"
    assert doc.heading_tree == (Heading(1, "Release notes", "release-notes", 2),)
    chunks = MarkdownChunker().chunk(doc)
    assert "Important text." in "".join(chunk.content for chunk in chunks)
    listing = parse_markdown("---\n- a\n- b\n---\ntext\n")
    assert listing.warnings == ("frontmatter is a list, not a mapping; the block is read as markdown",)
    assert listing.body_start_line == 1


def test_frontmatter_values_jsonb_cannot_hold_are_made_storable() -> None:
    doc = parse_markdown('---\ntitle: "a\\0b"\nratio: .nan\nlimit: -.inf\n---\nbody\n')
    assert doc.frontmatter == {"title": "a\ufffdb", "ratio": "nan", "limit": "-inf"}
    assert doc.warnings == ()


@pytest.mark.parametrize(
    "block",
    [
        "loop: &a [*a]",  # contains itself
        "\n".join(  # nine aliases per level: 9^7 values from 300 bytes
            ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
            + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 7)]
        ),
    ],
)
def test_aliases_that_expand_without_bound_are_refused_quickly(block: str) -> None:
    started = time.perf_counter()
    doc = parse_markdown(f"---\n{block}\n---\nbody\n")
    assert time.perf_counter() - started < 1.0
    assert doc.frontmatter == {}
    assert doc.warnings[0].startswith("frontmatter expands to more than 10,000 values")


def test_unclosed_frontmatter_is_not_frontmatter() -> None:
    doc = parse_markdown("---\ntitle: x\n\ntext\n")
    assert doc.frontmatter == {}
    assert doc.body_start_line == 1


# --- headings and anchors --------------------------------------------------------------


def test_atx_headings_with_repeated_anchors_and_inline_markup_removed() -> None:
    doc = parse_markdown(
        md(
            """
            # Setup
            ## Install `cograph` **now** ##
            ### Setup
            ## Setup
            ## [Linked](other.md) heading
            #hashtag is not a heading
            """
        )
    )
    assert doc.heading_tree == (
        Heading(1, "Setup", "setup", 1),
        Heading(2, "Install cograph now", "install-cograph-now", 2),
        Heading(3, "Setup", "setup-1", 3),
        Heading(2, "Setup", "setup-2", 4),
        Heading(2, "Linked heading", "linked-heading", 5),
    )


def test_setext_headings_use_the_first_text_line() -> None:
    doc = parse_markdown("Title\n=====\n\nSub title\non two lines\n---\n\nnot a heading\n\n---\n")
    assert doc.heading_tree == (
        Heading(1, "Title", "title", 1),
        Heading(2, "Sub title on two lines", "sub-title-on-two-lines", 4),
    )
    assert [block.kind for block in doc.blocks] == ["heading", "heading", "paragraph", "thematic_break"]


def test_hash_lines_inside_fences_are_not_headings() -> None:
    doc = parse_markdown("```sh\n# a shell comment\n```\n\n~~~\n## nor this\n~~~\n# Real\n")
    assert doc.heading_tree == (Heading(1, "Real", "real", 8),)


def test_slugify_is_github_style_with_whitespace_runs_collapsed() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  Usage in Markdown & MDX ") == "usage-in-markdown-mdx"
    assert slugify("snake_case and kebab-case") == "snake_case-and-kebab-case"
    assert slugify("Héllo Wörld — ünïcode 日本語") == "héllo-wörld-ünïcode-日本語"
    assert slugify("C++ / C#") == "c-c"


def test_anchor_allocator_skips_anchors_already_taken() -> None:
    allocator = AnchorAllocator()
    assert [allocator.allocate(text) for text in ("Foo", "Foo", "Foo 1", "Foo")] == [
        "foo",
        "foo-1",
        "foo-1-1",
        "foo-2",
    ]


# --- code ------------------------------------------------------------------------------


def test_fences_record_language_content_and_line_range() -> None:
    doc = parse_markdown("intro\n\n```python title=x\nprint(1)\n\nprint(2)\n```\n\n~~~~\n~~~\n~~~~\n")
    assert doc.code_blocks == (
        CodeBlock("python", "print(1)\n\nprint(2)", 3, 7),
        CodeBlock(None, "~~~", 9, 11),
    )


def test_an_unclosed_fence_runs_to_the_end_of_the_document() -> None:
    doc = parse_markdown("text\n\n```js\nlet a\n\n# not a heading\n")
    assert doc.code_blocks == (CodeBlock("js", "let a\n\n# not a heading", 3, 6),)
    assert doc.heading_tree == ()


def test_a_backtick_in_the_info_string_means_no_fence() -> None:
    doc = parse_markdown("``` a`b\ncode?\n```\n")
    assert [code.start_line for code in doc.code_blocks] == [3]  # the last line opens an empty fence


def test_fences_inside_list_items_are_dedented_and_end_with_the_item() -> None:
    doc = parse_markdown(
        md(
            """
            1. Install:

               ```sh
               npm install
                 --save
               ```
            2. Run
               ```
               # run it
            not indented: ends the item and the fence
            """
        )
    )
    assert doc.code_blocks == (
        CodeBlock("sh", "npm install\n  --save", 3, 6),
        CodeBlock(None, "# run it", 8, 9),
    )
    assert doc.heading_tree == ()
    assert [(block.kind, block.start_line, block.end_line) for block in doc.blocks] == [
        ("list_item", 1, 6),
        ("list_item", 7, 9),
        ("paragraph", 10, 10),
    ]


def test_indented_code_blocks_but_not_after_a_paragraph() -> None:
    doc = parse_markdown("para\n    lazy continuation\n\n    code line\n\n    more\n\nafter\n")
    assert doc.code_blocks == (CodeBlock(None, "code line\n\nmore", 4, 6, fenced=False),)


# --- tables ----------------------------------------------------------------------------


def test_pipe_tables_keep_escaped_pipes_and_pad_rows() -> None:
    doc = parse_markdown(
        md(
            r"""
            | Key | Value \| alt |
            |:----|------:|
            | `a` | x \| y |
            | b |
            | c | d | extra |

            after
            """
        )
    )
    assert doc.tables == (Table(("Key", "Value | alt"), (("`a`", "x | y"), ("b", ""), ("c", "d")), 1, 5),)


def test_a_table_interrupts_a_paragraph_and_needs_matching_columns() -> None:
    doc = parse_markdown("Some text\n| a | b |\n| - | - |\n| 1 | 2 |\n\nx | y\n--|--|--\n")
    assert [(table.start_line, table.end_line, table.header) for table in doc.tables] == [(2, 4, ("a", "b"))]
    assert [(block.kind, block.start_line, block.end_line) for block in doc.blocks] == [
        ("paragraph", 1, 1),
        ("table", 2, 4),
        ("paragraph", 6, 7),
    ]


def test_tables_inside_list_items() -> None:
    doc = parse_markdown("- item\n\n  | a |\n  |---|\n  | 1 |\n")
    assert [(table.start_line, table.end_line, table.rows) for table in doc.tables] == [(3, 5, (("1",),))]


# --- links -----------------------------------------------------------------------------


def test_link_types_and_anchors() -> None:
    doc = parse_markdown(
        md(
            """
            [site](https://example.com/a#frag) [mail](mailto:a@b.c) [ftp](ftp://x)
            [here](#local-heading) [doc](../guide/setup.md#install) [mdx](page.mdx)
            [asset](./img/diagram.png) [route](/en/guides/) [query](doc.md?x=1#y)
            """
        )
    )
    assert [(link.text, link.href, link.link_type, link.anchor, link.line) for link in doc.links] == [
        ("site", "https://example.com/a#frag", "absolute", "frag", 1),
        ("mail", "mailto:a@b.c", "absolute", None, 1),
        ("ftp", "ftp://x", "absolute", None, 1),
        ("here", "#local-heading", "anchor", "local-heading", 2),
        ("doc", "../guide/setup.md#install", "markdown", "install", 2),
        ("mdx", "page.mdx", "markdown", None, 2),
        ("asset", "./img/diagram.png", "relative", None, 3),
        ("route", "/en/guides/", "relative", None, 3),
        ("query", "doc.md?x=1#y", "markdown", "y", 3),
    ]


def test_links_inside_code_are_not_links_and_images_are_not_links() -> None:
    doc = parse_markdown(
        md(
            """
            Use `[not](a-link.md)` or ``[nor](this.md)``, but [yes](yes.md).
            ![an image](pic.png) and [![badge](badge.svg)](https://ci.example)
            \\[escaped](no.md)

            ```
            [inside](fence.md)
            ```

                [indented](code.md)
            """
        )
    )
    assert [(link.text, link.href, link.line) for link in doc.links] == [
        ("yes", "yes.md", 1),
        ("badge", "https://ci.example", 2),
    ]


def test_autolinks_and_reference_links() -> None:
    doc = parse_markdown(
        md(
            """
            See <https://auto.example/x> and <someone@example.com>, not <div>.
            A [full][ref], a [collapsed][], a [shortcut] and an [unknown][nope].

            [ref]: target.md#part
            [collapsed]: <with space.md>
            [shortcut]:
              https://short.example
            """
        )
    )
    assert [(link.text, link.href, link.link_type) for link in doc.links] == [
        ("https://auto.example/x", "https://auto.example/x", "absolute"),
        ("someone@example.com", "mailto:someone@example.com", "absolute"),
        ("full", "target.md#part", "markdown"),
        ("collapsed", "with space.md", "markdown"),
        ("shortcut", "https://short.example", "absolute"),
    ]


def test_wiki_links_in_all_their_forms() -> None:
    doc = parse_markdown(
        md(
            """
            [[Page]] [[Page|Label]] [[Page#Heading]] [[Folder/Page#Heading|Label]] [[#Local]]
            ![[Embedded note]] ![[Note#Part]] ![[diagram.png]] ![[clip.mp4|300]]
            [[brackets]](https://cite.example) is a markdown link
            | table | [[Page\\|Alias]] |
            |---|---|
            """
        )
    )
    assert [
        (link.text, link.href, link.link_type, link.anchor, link.embed, link.line) for link in doc.links
    ] == [
        ("Page", "Page", "wiki", None, False, 1),
        ("Label", "Page", "wiki", None, False, 1),
        ("Page#Heading", "Page#Heading", "wiki", "Heading", False, 1),
        ("Label", "Folder/Page#Heading", "wiki", "Heading", False, 1),
        ("#Local", "#Local", "wiki", "Local", False, 1),
        ("Embedded note", "Embedded note", "wiki", None, True, 2),
        ("Note#Part", "Note#Part", "wiki", "Part", True, 2),
        ("[brackets]", "https://cite.example", "absolute", None, False, 3),
        ("Alias", "Page", "wiki", None, False, 4),
    ]


def test_link_lines_follow_multi_line_paragraphs_headings_and_cells() -> None:
    doc = parse_markdown(
        "intro\n\nfirst line\nsecond [a](a.md)\nthird [b](b.md)\n\n## [c](c.md)\n\n"
        "| [d](d.md) |\n|---|\n| [e](e.md) |\n"
    )
    assert [(link.href, link.line) for link in doc.links] == [
        ("a.md", 4),
        ("b.md", 5),
        ("c.md", 7),
        ("d.md", 9),
        ("e.md", 11),
    ]


def test_link_destinations_decode_escapes_and_entities() -> None:
    doc = parse_markdown("[a](<my doc.md>) [b](x\\_y.md) [c](q?a=1&amp;b=2) [d](https://w.org/A_(b))\n")
    assert [link.href for link in doc.links] == ["my doc.md", "x_y.md", "q?a=1&b=2", "https://w.org/A_(b)"]


def test_line_numbers_count_lines_not_bytes_after_non_ascii_text() -> None:
    doc = parse_markdown(
        "# Été\n\nCafé 日本語 [a](b.md)\n\n| ü | ß |\n|---|---|\n| 二 | [c](d.md) |\n\n## Fin\xa0!\n"
    )
    assert [(h.text, h.line) for h in doc.heading_tree] == [("Été", 1), ("Fin\xa0!", 9)]
    assert [(link.href, link.line) for link in doc.links] == [("b.md", 3), ("d.md", 7)]
    assert [(t.header, t.rows, t.start_line, t.end_line) for t in doc.tables] == [
        (("ü", "ß"), (("二", "[c](d.md)"),), 5, 7)
    ]


def test_reference_definitions_are_blocks_so_that_chunks_cover_them() -> None:
    doc = parse_markdown("See [a].\n\n[a]: a.md\n\n[b]: b.md\n[c]: c.md\n")
    assert [(block.kind, block.start_line, block.end_line) for block in doc.blocks] == [
        ("paragraph", 1, 1),
        ("paragraph", 3, 3),
        ("paragraph", 5, 6),
    ]


# --- sizes and line endings ------------------------------------------------------------


def test_word_and_line_counts() -> None:
    doc = parse_markdown("---\ntitle: t\n---\none two\nthree\n")
    assert (doc.word_count, doc.line_count) == (3, 5)
    assert parse_markdown("no final newline").line_count == 1
    assert parse_markdown("").line_count == 0


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("été  déjà\tvu", 3),
        ("no\u00a0break\u2003em space\u3000ideographic", 5),  # Unicode whitespace separates words
        ("joined\u200bby\u2060format characters", 2),  # format characters are not whitespace
        ("  \n\t\x1c\x1f\u2028 ", 0),
        ("x", 1),
        ("", 0),
    ],
)
def test_words_are_runs_of_non_whitespace_in_the_unicode_sense(body: str, words: int) -> None:
    assert parse_markdown(body).word_count == words == len(body.split())


def test_every_character_separates_words_exactly_when_str_split_says_so() -> None:
    """count_words reads UTF-8 bytes: every code point of every length (1 to 4 bytes), as a
    separator and as a word of its own, against str.split."""
    wrong = [
        hex(code)
        for code in range(0x110000)
        if not 0xD800 <= code <= 0xDFFF  # surrogates cannot be encoded
        for text in (f"a{chr(code)}b", f" {chr(code)}{chr(code)} ")
        if count_words(text.encode()) != len(text.split())
    ]
    assert wrong == []


def test_crlf_and_bom_are_normalised_without_moving_lines() -> None:
    doc = parse_markdown("\ufeff# Title\r\n\r\ntext [x](y.md)\r\n")
    assert doc.text == "# Title\n\ntext [x](y.md)\n"
    assert doc.heading_tree == (Heading(1, "Title", "title", 1),)
    assert doc.links == (Link("x", "y.md", 3, "markdown", None),)


# --- blocks ----------------------------------------------------------------------------


def test_root_blocks_are_what_the_chunker_packs() -> None:
    doc = parse_markdown(
        md(
            """
            # Title
            Intro line
            - one
              continued
            - two

            > quoted
            lazy

            <div>
            html
            </div>

            ***
            """
        )
    )
    assert [(block.kind, block.start_line, block.end_line, block.heading) for block in doc.blocks] == [
        ("heading", 1, 1, 0),
        ("paragraph", 2, 2, None),
        ("list_item", 3, 4, None),
        ("list_item", 5, 5, None),
        ("quote", 7, 8, None),
        ("html", 10, 12, None),
        ("thematic_break", 14, 14, None),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "---\n",
        "---\n---\n",
        "```",
        "> ",
        "- ",
        "|",
        "[",
        "[[",
        "<",
        "\t\t",
        "# ",
        "1.",
        "\x00",
        "* * *",
    ],
)
def test_degenerate_documents_parse(text: str) -> None:
    doc = parse_markdown(text)
    assert doc.line_count == len(doc.text.splitlines())


@pytest.mark.parametrize(
    "document",
    [
        "[[a]](b) " * 8000,
        "[[a]](" * 8000,
        "|a" * 300 + "|\n" + "|-" * 300 + "|\n" + "x\n" * 300,
        "```\ncode\n```" + "\t" * 40_000 + "x\n",
    ],
    ids=["bracketed-link-text", "unclosed-destinations", "ragged-table-under-the-cap", "tabs-after-a-fence"],
)
def test_link_and_table_shapes_that_were_quadratic_parse_in_a_moment(document: str) -> None:
    """Each `[[a]](` re-read the rest of its line: 8,000 on a line took seconds, and minutes
    unclosed. A ragged table under the cap (90,000 cells from 2 KB) is still read."""
    started = time.perf_counter()
    parsed = parse_markdown(document)
    assert time.perf_counter() - started < 2.0
    if document.startswith("[[a]](b)"):
        assert {(link.text, link.href, link.link_type) for link in parsed.links} == {("[a]", "b", "relative")}
        assert len(parsed.links) == 8000


@pytest.mark.parametrize(
    ("source", "href"),
    [
        ("[[a]](\nb.md)", "b.md"),
        ("[[a]](x(y(z))w.md)", "x(y(z))w.md"),
        ("[[a]](<b c.md>)", "b c.md"),
        ("[[a]](<a)b.md>)", "a)b.md"),
        ('[[a]](b.md "x) y")', "b.md"),
    ],
)
def test_a_bracketed_link_text_is_a_markdown_link_whatever_its_destination(source: str, href: str) -> None:
    assert [(link.text, link.href, link.link_type) for link in parse_markdown(source + "\n").links] == [
        ("[a]", href, "markdown")
    ]


@pytest.mark.parametrize("container", ["", "> ", "- item\n\n    "], ids=["root", "quote", "list-item"])
def test_tables_filled_out_far_beyond_the_text_refuse_the_document(container: str) -> None:
    rows = ["|a" * 500 + "|", "|-" * 500 + "|", *["x"] * 500]
    first, _, indent = container.rpartition("\n")
    ragged = (first + "\n" if first else "") + "".join(f"{indent}{row}\n" for row in rows)
    with pytest.raises(TooManyTableCellsError, match=r"about 25\d{4} cells"):
        parse_markdown(ragged)
    # As many cells written out are a document like any other: the cap grows with the text.
    written = "|a" * 400 + "|\n" + "|-" * 400 + "|\n" + ("|" + "x|" * 400 + "\n") * 400
    assert len(parse_markdown(written).tables[0].rows) == 400
    with pytest.raises(TooManyTableCellsError):  # the same shape, its rows left short
        parse_markdown("|a" * 400 + "|\n" + "|-" * 400 + "|\n" + "x\n" * 400)


def test_a_tab_after_a_closing_fence_still_closes_it() -> None:
    """CommonMark lets spaces or tabs follow a closing fence; pulldown-cmark took the tab for text
    and made the rest of the document code."""
    parsed = parse_markdown("```py\ncode\n```\t\n# Next\n\n~~~\nx\n~~~ \t\n## Two\n")
    assert [(h.text, h.line) for h in parsed.heading_tree] == [("Next", 4), ("Two", 9)]
    assert [(c.content, c.start_line, c.end_line) for c in parsed.code_blocks] == [
        ("code", 1, 3),
        ("x", 6, 8),
    ]


def test_text_between_blocks_gets_its_own_lines_however_many_gaps_there_are() -> None:
    """Link reference definitions produce no parser events: each becomes a paragraph block of
    its own lines, counted from the block before it (once from the start: quadratic)."""
    doc = parse_markdown("# T\n\n" + "p\n\n[a]: /b\n\n" * 3000 + "end\n")
    assert len(doc.blocks) == 1 + 2 * 3000 + 1
    for index in range(3000):
        paragraph, definition = doc.blocks[1 + 2 * index], doc.blocks[2 + 2 * index]
        assert (paragraph.start_line, paragraph.end_line) == (3 + 4 * index,) * 2
        assert (definition.kind, definition.start_line, definition.end_line) == (
            "paragraph",
            5 + 4 * index,
            5 + 4 * index,
        )
    assert (doc.blocks[-1].start_line, doc.blocks[-1].end_line) == (3 + 4 * 3000,) * 2
