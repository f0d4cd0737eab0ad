"""Headings and anchors: what a renderer shows and links to."""

from __future__ import annotations

import time

import pytest

from cograph_repodocs.domain.headings import AnchorRegistry, find_headings, github_anchor
from cograph_repodocs.domain.model import Heading


@pytest.mark.parametrize(
    ("text", "anchor"),
    [
        ("Getting Started", "getting-started"),
        ("What's new in v2.0?", "whats-new-in-v20"),
        ("Foo & Bar", "foo--bar"),  # GitHub keeps one dash per space
        ("snake_case and kebab-case", "snake_case-and-kebab-case"),
        ("Über Café", "über-café"),
        ("🚀 Launch", "-launch"),
        ("C++ / C#", "c--c"),
        ("", ""),
    ],
)
def test_github_anchor(text: str, anchor: str) -> None:
    assert github_anchor(text) == anchor


def test_anchor_registry_numbers_duplicates_like_github() -> None:
    registry = AnchorRegistry()
    texts = ["Usage", "Usage", "Usage 1", "Usage", "Other"]
    assert [registry.unique(t) for t in texts] == ["usage", "usage-1", "usage-1-1", "usage-2", "other"]


def headings(path: str, text: str) -> list[tuple[int, str, str, int]]:
    return [
        (h.heading.level, h.heading.text, h.heading.anchor, h.heading.line) for h in find_headings(path, text)
    ]


MARKDOWN = """\
---
title: front matter
# not a heading
---
# The `Config` *loader*

Intro with a [link](https://example.com).

```bash
# not a heading either
make test
```

    # indented code is not a heading

## Install ##
#hashtag is not a heading

Setext heading
--------------

> ### Quoted heading

## Install
### [Linked](x.md) ![badge](b.svg) &amp; <b>bold</b> __init__
"""


def test_markdown_headings_follow_commonmark() -> None:
    assert headings("docs/guide.md", MARKDOWN) == [
        (1, "The Config loader", "the-config-loader", 5),
        (2, "Install", "install", 16),
        (2, "Setext heading", "setext-heading", 19),
        (3, "Quoted heading", "quoted-heading", 22),
        (2, "Install", "install-1", 24),
        (3, "Linked & bold init", "linked---bold-init", 25),
    ]


def test_a_setext_heading_of_several_lines_keeps_its_words_apart() -> None:
    # GitHub renders the line break as a newline inside the heading, which its slugger drops:
    # the anchor joins "files" and "and", the text shown keeps a space between them.
    text = (
        "This project parses config files\nand validates them.\n---\n\nSoft  \nhard\\\nbreaks `code`\n===\n"
    )
    assert headings("README.md", text) == [
        (
            2,
            "This project parses config files and validates them.",
            "this-project-parses-config-filesand-validates-them",
            1,
        ),
        (1, "Soft hard breaks code", "softhardbreaks-code", 5),
    ]


def test_mdx_and_markdown_extensions_are_markdown() -> None:
    assert headings("a.MDX", "# A\n") == [(1, "A", "a", 1)]
    assert headings("a.markdown", "# A\n") == [(1, "A", "a", 1)]


@pytest.mark.parametrize("path", ["Dockerfile", "values.yaml", "main.py", "notes.txt", "Makefile"])
def test_other_files_have_their_comment_lines_at_the_margin_as_headings(path: str) -> None:
    """No language-aware handling (the spec): a `# ` line at the margin is a heading anywhere,
    a `#!` line or an indented comment is not."""
    text = "#!/bin/sh\n# build stage\nFROM python\n\n    # indented\n# another comment\n"
    assert headings(path, text) == [
        (1, "build stage", "build-stage", 2),
        (1, "another comment", "another-comment", 6),
    ]


MANIFESTS = """\
# The gateway: REST and MCP on :8080.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gateway
spec:
  revisionHistoryLimit: 3
  strategy:
    type: RollingUpdate
    # indented, under a key
    rollingUpdate: {maxSurge: 1}
  template:
    spec:
      containers:
        - name: gateway
          # inside a list item
          image: cograph:dev
---
# Its Service
apiVersion: v1
kind: Service
===
"""


def test_a_multi_document_yaml_file_has_no_setext_headings() -> None:
    """The `---` between YAML documents does not make the object above it a heading (its anchor
    was the whole Deployment), and a comment in a list item is not a heading either."""
    assert headings("deploy/k8s/gateway.yaml", MANIFESTS) == [
        (1, "The gateway: REST and MCP on :8080.", "the-gateway-rest-and-mcp-on-8080", 1),
        (1, "Its Service", "its-service", 19),
    ]


def test_a_leading_document_separator_is_not_front_matter_outside_markdown() -> None:
    text = "---\n# first document\na: 1\n---\n# second document\nb: 2\n"
    assert headings("deploy/values.yaml", text) == [
        (1, "first document", "first-document", 2),
        (1, "second document", "second-document", 5),
    ]


DOCKERFILE = """\
# syntax=docker/dockerfile:1
#
# Build for <release-name> with `uv` and *fast* [mode](x) &amp; __init__
#
FROM python:3.11 AS build
## Stage two ##
### use C#
####### seven is no level
#	after a tab
  # indented
#no space
<!--
# after an HTML comment
```
# after a fence
"""


def test_a_dockerfile_has_its_comment_lines_as_written() -> None:
    """Markdown's reading stays out: no inline markup (an HTML tag vanished from the text), no
    empty headings from `#` spacer lines, no HTML block or code fence hiding the lines after it;
    an ATX closing sequence is dropped, a `#` that ends a word is kept."""
    assert headings("Dockerfile", DOCKERFILE) == [
        (1, "syntax=docker/dockerfile:1", "syntaxdockerdockerfile1", 1),
        (
            1,
            "Build for <release-name> with `uv` and *fast* [mode](x) &amp; __init__",
            "build-for-release-name-with-uv-and-fast-modex-amp-__init__",
            3,
        ),
        (2, "Stage two", "stage-two", 6),
        (3, "use C#", "use-c", 7),
        (1, "after a tab", "after-a-tab", 9),
        (1, "after an HTML comment", "after-an-html-comment", 13),
        (1, "after a fence", "after-a-fence", 15),
    ]


RST = """\
=============
 The Project
=============

Intro paragraph.

Installation
============

From PyPI
---------

Text.
Not a title
-----------

``Config`` objects
==================

-----

Usage
=====
"""


def test_rst_titles_rank_by_first_appearance_of_their_style() -> None:
    # Over+underlined "=" is one style, underlined "=" another, "-" a third.
    assert headings("docs/index.rst", RST) == [
        (1, "The Project", "the-project", 2),
        (2, "Installation", "installation", 7),
        (3, "From PyPI", "from-pypi", 10),
        (2, "Config objects", "config-objects", 17),
        (2, "Usage", "usage", 22),
    ]


def test_rst_title_needs_an_underline_as_long_as_the_text() -> None:
    assert headings("a.rst", "Long title\n===\n\nShort\n=====\n") == [(1, "Short", "short", 4)]


def test_rst_inline_markup_is_removed_from_titles() -> None:
    text = "`Docs <https://x.y>`_ and :class:`Foo` and *emphasis*\n" + "=" * 60 + "\n"
    assert headings("a.rst", text) == [(1, "Docs and Foo and emphasis", "docs-and-foo-and-emphasis", 1)]


def test_crlf_line_endings_count_lines_like_lf() -> None:
    found = find_headings("a.md", "intro\r\n\r\n# Title\r\n")
    assert [h.heading for h in found] == [Heading(level=1, text="Title", anchor="title", line=3)]


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("guide.rst", "Title\n=====\n\n" + "`<" * 150_000 + "\n" + "-" * 300_000 + "\n"),
        ("guide.md", "# Title\n\n" + "".join(f"## {'![' * 140}\n\n" for _ in range(2_000))),
    ],
    ids=["rst-backtick-angle-title", "many-bracket-headings"],
)
def test_hostile_titles_take_a_moment_not_minutes(path: str, text: str) -> None:
    """Heading regexes hold the interpreter and markdown-it's inline pass is quadratic: neither
    may turn one file into minutes of a sync or of a page read."""
    started = time.perf_counter()
    found = find_headings(path, text)
    assert time.perf_counter() - started < 2.0
    assert found[0].heading.text == "Title"
