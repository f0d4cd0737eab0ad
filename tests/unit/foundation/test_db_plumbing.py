"""Named queries and page tokens."""

from __future__ import annotations

import pytest

from cograph_db import Queries
from cograph_grpc import InvalidArgument, next_page_token, page_window


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


def test_pages_follow_one_another() -> None:
    size, offset = page_window(10, "")
    assert (size, offset) == (10, 0)
    token = next_page_token(offset, size, fetched=11)
    assert page_window(10, token) == (10, 10)
    assert next_page_token(10, 10, fetched=4) == ""


def test_page_size_is_capped_and_defaulted() -> None:
    assert page_window(0, "")[0] == 50
    assert page_window(10_000, "")[0] == 500


@pytest.mark.parametrize("token", ["not-base64!", "LTU=", "YWJj", "OTk5OTk5OTk5OTk5OTk5OTk5OTk5"])
def test_foreign_page_tokens_are_refused(token: str) -> None:
    with pytest.raises(InvalidArgument, match="page_token"):
        page_window(10, token)
