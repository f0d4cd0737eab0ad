"""Named queries and page tokens."""

from __future__ import annotations

import base64
import datetime as dt
import json
import uuid

import pytest

from cograph_db import Queries
from cograph_errors import InvalidArgument
from cograph_grpc import next_page_token, page_request
from cograph_grpc.paging import INTEGER, TEXT, TIMESTAMP, UUID, KeyPart


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
    first = page_request(2, "", (TEXT, TEXT))
    assert (first.size, first.limit, first.after) == (2, 3, [None, None])
    rows = [("alpha", 1), ("beta", 2), ("gamma", 3)]  # asked limit: one more than the page
    token = next_page_token(rows, first, lambda row: row)
    assert page_request(2, token, (TEXT, TEXT)).after == ["beta", "2"]
    assert next_page_token(rows[:2], first, lambda row: row) == ""  # nothing follows


def test_page_size_is_capped_and_defaulted() -> None:
    assert page_request(0, "", (TEXT,)).size == 50
    assert page_request(10_000, "", (TEXT,)).size == 500


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
        page_request(10, token, (TEXT,))


def _token(*parts: str) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(parts)).encode()).decode()


@pytest.mark.parametrize(
    ("key", "parts"),
    [
        ((TEXT, UUID), ("docs", "not-a-uuid")),
        ((TEXT, UUID), ("docs", "urn:uuid:0eadd640-96b4-448c-abeb-14aea73925dd")),
        ((TEXT, UUID), ("a\x00b", "0eadd640-96b4-448c-abeb-14aea73925dd")),  # PostgreSQL text has no NUL
        ((TEXT,), ("\ud800",)),  # a lone surrogate: not UTF-8
        ((INTEGER,), ("seven",)),
        ((INTEGER,), (str(2**31),)),  # past int4
        ((INTEGER,), ("1_0",)),
        ((TIMESTAMP, UUID), ("yesterday", "0eadd640-96b4-448c-abeb-14aea73925dd")),
    ],
)
def test_tokens_whose_parts_are_not_of_the_key_types_are_refused(
    key: tuple[KeyPart, ...], parts: tuple[str, ...]
) -> None:
    """A forged or damaged token would fail the SQL cast (an internal error): it is bad input."""
    with pytest.raises(InvalidArgument, match="page_token"):
        page_request(10, _token(*parts), key)


def test_tokens_of_every_key_type_round_trip() -> None:
    moment = dt.datetime(2026, 12, 3, 18, 49, 47, 123456, tzinfo=dt.UTC)
    row = ("naïve name", uuid.UUID(int=7), 41, moment)
    first = page_request(1, "", (TEXT, UUID, INTEGER, TIMESTAMP))
    token = next_page_token([row, row], first, lambda r: r)
    assert page_request(1, token, (TEXT, UUID, INTEGER, TIMESTAMP)).after == [
        "naïve name",
        str(uuid.UUID(int=7)),
        "41",
        str(moment),
    ]
