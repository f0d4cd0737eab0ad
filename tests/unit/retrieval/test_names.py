"""Which query words are names that full text splits, and which queries are nothing but names."""

from __future__ import annotations

import pytest

from cograph_retrieval.hybrid import compound_names, names_only


def test_compound_names_are_the_words_with_an_underscore_inside() -> None:
    text = "set COGRAPH_SEARCH__RRF_K, call parse_config() or os.path.join; __init__ and _private are not"
    assert compound_names(text) == ["COGRAPH_SEARCH__RRF_K", "parse_config"]
    assert compound_names("parse_config and parse_config again, café_crème") == ["parse_config", "café_crème"]
    assert compound_names("plain words, snake-case, a.b.c, 3_000") == ["3_000"]


@pytest.mark.parametrize(
    ("query", "lookup"),
    [
        ("COGRAPH_SEARCH__RRF_K", True),
        ("`parse_config()`", True),
        ("parse_config, read_config", True),
        ("  MAX_BATCH_DOCUMENTS\n", True),
        ("how do I set COGRAPH_SEARCH__RRF_K", False),
        ("COGRAPH_SEARCH__RRF_K=10", False),
        ("parse_config(path)", False),
        ("zorblax", False),
        ("", False),
        ("()", False),
    ],
)
def test_a_query_of_names_alone_is_a_lookup(query: str, lookup: bool) -> None:
    assert names_only(query) is lookup
