"""The link step reads a document's sections as a reader does: a section headed with a plural
("### Functions") is about that class's fields, for mentions their author marked as symbols."""

from __future__ import annotations

import uuid

from cograph_repodocs.application.linking import ChunkText, Symbols, link_chunks
from cograph_repodocs.domain.symbols import Alias

ROWS = [
    ("function", "Function", "pkg._models.Function", "pkg/_models.py", "class"),
    ("function_decorators", "decorators", "pkg._models.Function.decorators", "pkg/_models.py", "attribute"),
    ("class", "Class", "pkg._models.Class", "pkg/_models.py", "class"),
    ("class_decorators", "decorators", "pkg._models.Class.decorators", "pkg/_models.py", "attribute"),
]
ALIASES = [
    Alias(name="pkg.Function", target="pkg._models.Function", public=True),
    Alias(name="pkg.Class", target="pkg._models.Class", public=True),
]


def links(*sections: tuple[list[str], str]) -> list[tuple[int, str, str]]:
    """(section index, mention, node) for every link of one document made of these sections."""
    ids = {str(uuid.uuid5(uuid.NAMESPACE_URL, key)): key for key, *_ in ROWS}
    rows = [(node_id, *row[1:]) for node_id, row in zip(ids, ROWS, strict=True)]
    chunks = [
        ChunkText(uuid.UUID(int=index + 1), "docs/models.md", text, index, headings)
        for index, (headings, text) in enumerate(sections)
    ]
    found = link_chunks(chunks, Symbols(rows, ALIASES))
    return [(row.chunk_id.int - 1, row.mention, ids[str(row.code_node_id)]) for row in found]


def test_a_plural_heading_names_the_class_of_a_marked_field() -> None:
    assert links(
        (["Models", "Classes"], "- [`decorators`][]: what decorates the class."),
        (["Models", "Functions"], "- [`decorators`][]: what decorates the function."),
    ) == [(0, "decorators", "class_decorators"), (1, "decorators", "function_decorators")]


def test_an_unmarked_word_under_a_plural_heading_stays_prose() -> None:
    assert links((["Models", "Functions"], "Add `decorators` to taste.")) == []
