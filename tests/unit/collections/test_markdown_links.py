"""Link classification and the pure helpers the link resolver uses."""

from __future__ import annotations

import pytest

from cograph_collections.markdown.links import (
    classify_href,
    link_target_key,
    normalise_source_key,
    validate_source_key,
    wiki_target_matches,
)
from cograph_collections.markdown.model import LinkType


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("https://x.org", "absolute"),
        ("HTTP://X.ORG/a.md", "absolute"),
        ("mailto:a@b.c", "absolute"),
        ("ftp://files/x.md", "absolute"),
        ("#heading", "anchor"),
        ("guide.md", "markdown"),
        ("Guide.MDX#part", "markdown"),
        ("../a/b.md?plain=1", "markdown"),
        ("image.png", "relative"),
        ("/en/guides/", "relative"),
        ("tel:+123", "relative"),
        ("notes.md.bak", "relative"),
    ],
)
def test_classify_href(href: str, expected: LinkType) -> None:
    assert classify_href(href) == expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("./docs/a.md", "docs/a.md"),
        ("/docs//a.md", "docs/a.md"),
        ("docs/./sub/../a.md", "docs/a.md"),
        ("docs\\windows\\a.md", "docs/windows/a.md"),
        ("  Docs/README.md ", "Docs/README.md"),
        ("../../a.md", "a.md"),
    ],
)
def test_normalise_source_key(key: str, expected: str) -> None:
    assert normalise_source_key(key) == expected


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("", "source key is empty"),
        ("   ", "source key is empty"),
        ("a\x00b.md", "source key contains a NUL or control character"),
        ("a\nb.md", "source key contains a NUL or control character"),
        ("../outside.md", "escapes the collection root"),
        ("docs/../../outside.md", "escapes the collection root"),
        ("/../etc/passwd", "escapes the collection root"),
        ("C:\\Windows\\a.md", "absolute path outside the collection"),
        ("//server/share/a.md", "absolute path outside the collection"),
        ("./", "names no document"),
        ("x" * 1025, "longer than 1024 bytes in UTF-8"),
        ("\U0001f600" * 257, "longer than 1024 bytes in UTF-8"),  # 257 characters, 1,028 bytes
    ],
)
def test_validate_source_key_rejects(key: str, reason: str) -> None:
    error = validate_source_key(key)
    assert error is not None
    assert reason in error


@pytest.mark.parametrize(
    "key", ["a.md", "docs/sub/page.mdx", "/docs/a.md", "./a.md", "docs/../a.md", "Ünïcode name.md"]
)
def test_validate_source_key_accepts(key: str) -> None:
    assert validate_source_key(key) is None


@pytest.mark.parametrize(
    ("href", "link_type", "source", "expected"),
    [
        ("https://x.org/a.md#frag", "absolute", "docs/a.md", (None, "frag")),
        ("#Local%20Part", "anchor", "./docs/a.md", ("docs/a.md", "Local Part")),
        ("b.md", "markdown", "docs/guide/a.md", ("docs/guide/b.md", None)),
        ("../ref/c.md#x", "markdown", "docs/guide/a.md", ("docs/ref/c.md", "x")),
        ("/top.md", "markdown", "docs/guide/a.md", ("top.md", None)),
        ("my%20doc.md?raw=1", "markdown", "a.md", ("my doc.md", None)),
        ("../../../out.md", "markdown", "docs/a.md", (None, None)),
        ("./img/p.png", "relative", "docs/a.md", ("docs/img/p.png", None)),
        # A folder keeps its '/': it names the folder's index page, not a file named like it.
        ("/en/guides/", "relative", "docs/a.md", ("en/guides/", None)),
        ("./#top", "relative", "docs/sub/a.md", ("docs/sub/", "top")),
        ("..", "relative", "docs/sub/a.md", ("docs/", None)),
        ("api/.", "relative", "docs/a.md", ("docs/api/", None)),
        # The root folder has a key of its own: it names the root's index or README page.
        ("./", "relative", "a.md", ("/", None)),
        ("../#intro", "relative", "docs/a.md", ("/", "intro")),
        ("/", "relative", "docs/sub/a.md", ("/", None)),
        ("sub/..", "relative", "a.md", ("/", None)),
        ("../..", "relative", "docs/a.md", (None, None)),  # above the root
        ("tel:+123", "relative", "docs/a.md", (None, None)),
        ("//cdn.example/x.js", "relative", "docs/a.md", (None, None)),
        ("?tab=2#top", "relative", "docs/a.md", ("docs/a.md", "top")),
        ("Internal links#Heading", "wiki", "help/a.md", ("Internal links", "Heading")),
        ("Folder/Note.md", "wiki", "help/a.md", ("Folder/Note", None)),
        ("#Local", "wiki", "help/a.md", ("help/a", "Local")),  # a note name, as wiki targets are
        ("Note%20One", "wiki", "a.md", ("Note One", None)),
        # Longer than a source key may be: it names no document (and is not indexed).
        ("/" + "x" * 3000 + "#top", "markdown", "a.md", (None, "top")),
        ("\U0001f600" * 300, "wiki", "a.md", (None, None)),
    ],
)
def test_link_target_key(
    href: str, link_type: LinkType, source: str, expected: tuple[str | None, str | None]
) -> None:
    assert link_target_key(href, link_type, source) == expected


@pytest.mark.parametrize(
    ("target", "source", "matches"),
    [
        ("Internal links", "Linking notes/Internal links.md", True),
        ("internal LINKS", "Internal links.md", True),
        ("Linking notes/Internal links", "help/Linking notes/Internal links.md", True),
        ("Internal links", "Internal links extra.md", False),
        ("links", "Internal links.md", False),
        ("Page", "Page.mdx", True),
    ],
)
def test_wiki_target_matches_by_name_with_or_without_extension(
    target: str, source: str, matches: bool
) -> None:
    assert wiki_target_matches(target, source) is matches
