"""Named queries and page tokens."""

from __future__ import annotations

import base64

import pytest

from cograph_db import Queries
from cograph_grpc import InvalidArgument, next_page_token, page_request


def test_named_queries_are_split_by_name() -> None:
    queries = Queries.parse("-- name: first\nSELECT 1;\n\n-- name: second\nSELECT *\nFROM t\nWHERE a = $1;\n")
    assert queries.names() == ["first", "second"]
    assert queries.first == "SELECT 1"
    assert queries.second == "SELECT *\nFROM t\nWHERE a = $1"
    with pytest.raises(AttributeError, match="no query named 'third'"):
        _ = queries.third


def test_a_query_defined_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="defined twice"):
        Queries.parse("-- name: q\nSELECT 1;\n-- name: q\nSELECT 2;")


def test_the_services_sql_files_load() -> None:
    queries = Queries.load("cograph_collections.sql", "collections.sql")
    assert "select_access" in queries.names()


def test_a_page_starts_after_the_last_key_of_the_one_before() -> None:
    first = page_request(2, "", key_parts=2)
    assert (first.size, first.limit, first.after) == (2, 3, [None, None])
    rows = [("alpha", 1), ("beta", 2), ("gamma", 3)]  # asked limit: one more than the page
    token = next_page_token(rows, first, lambda row: row)
    assert page_request(2, token, key_parts=2).after == ["beta", "2"]
    assert next_page_token(rows[:2], first, lambda row: row) == ""  # nothing follows


def test_page_size_is_capped_and_defaulted() -> None:
    assert page_request(0, "", key_parts=1).size == 50
    assert page_request(10_000, "", key_parts=1).size == 500


@pytest.mark.parametrize(
    "token",
    [
        "not-base64!",
        "LTU=",  # an offset token of old
        "YWJj",
        base64.urlsafe_b64encode(b'["a", "b"]').decode(),  # another listing's key
        base64.urlsafe_b64encode(b"[1]").decode(),
    ],
)
def test_foreign_page_tokens_are_refused(token: str) -> None:
    with pytest.raises(InvalidArgument, match="page_token"):
        page_request(10, token, key_parts=1)
