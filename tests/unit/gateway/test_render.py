"""What the web pages make of text they did not write: documents rendered safe, snippets marked."""

from __future__ import annotations

from cograph_gateway.web.render import highlight, render_page


def test_a_snippet_marks_the_query_words_and_escapes_everything_else() -> None:
    shown = highlight("<b>Greet</b> greeting & greet", "greet the world")
    assert str(shown) == (
        "&lt;b&gt;<mark>Greet</mark>&lt;/b&gt; <mark>greet</mark>ing &amp; <mark>greet</mark>"
    )
    assert str(highlight("a < b", "")) == "a &lt; b"


def test_a_page_keeps_its_markup_and_loses_what_could_run() -> None:
    html = render_page(
        "# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n"
        "[bad](javascript:alert(3)) [good](https://example.com)\n\n<svg onload=alert(4)></svg>\n",
        [],
    )
    assert "<h1>Title</h1>" in html
    assert '<a href="https://example.com" rel="noopener noreferrer nofollow">good</a>' in html
    for inert in ("<script", "onerror", 'href="javascript:', "<svg", "onload"):
        assert inert not in html, inert
    assert "[bad](javascript:alert(3))" in html  # not a link: CommonMark refuses the scheme, shown as text
