"""Checks on what a caller sends that every service makes alike: ids, content hashes, text a
person typed (names, groups, slugs, queries) and the numbers a search ranks by. Each failure is
InvalidArgument with a message that says what to fix, never a store error."""

from __future__ import annotations

import math
import re
import unicodedata
import uuid
from collections.abc import Iterable, Sequence

from cograph_errors.errors import InvalidArgument

# Control characters other than tab, newline and carriage return: PostgreSQL refuses NUL in
# text, and none of them is anything a person searches for. As the inside of a regex character
# class, which the gateway's OpenAPI document states too.
CONTROL_CHARACTERS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")
MAX_CONTENT_HASHES = 1000  # one batch upload's documents
_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


def parse_id(value: str, what: str) -> uuid.UUID:
    """Ids are UUIDs; anything else is the caller's mistake, not a missing row."""
    try:
        return uuid.UUID(value)
    except ValueError:
        raise InvalidArgument(f"{what} {value!r} is not a valid id") from None


def parse_ids(values: Iterable[str], what: str) -> list[uuid.UUID]:
    return [parse_id(value, what) for value in values]


def is_blank(text: str) -> bool:
    """Nothing to search for: only whitespace and invisible format characters (a zero-width
    space, a byte order mark), which strip() keeps."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)


def check_typed_text(text: str, what: str = "query") -> None:
    """Raise InvalidArgument, naming the character, when text holds a control character (a name,
    a group, a slug or a query: none can be stored or searched with one)."""
    if control := _CONTROL.search(text):
        raise InvalidArgument(
            f"the {what} contains a control character (U+{ord(control.group()):04X}): remove it"
        )


# Related doc chunks per code hit: three unless the caller asks otherwise, and at most this many.
DEFAULT_RELATED_LIMIT = 3
MAX_RELATED_LIMIT = 50

# Most hits one search may ask a store for: pgvector's HNSW scan keeps at most 1000 candidates
# (hnsw.ef_search), and a page beyond that is not a search result a person reads.
MAX_SEARCH_LIMIT = 1000


def check_search(
    query: str, limit: int, rrf_k: float, weights: Iterable[float], embedding: Sequence[float]
) -> None:
    """What a store's search request must be before it runs: a query a person could type, a
    positive limit, and numbers the fusion and pgvector can take (0 stands for the default k)."""
    if not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_SEARCH_LIMIT}")
    if is_blank(query):
        raise InvalidArgument("the query is empty")
    check_typed_text(query)
    if not (math.isfinite(rrf_k) and rrf_k >= 0):
        raise InvalidArgument(f"rrf_k must be a positive number, or 0 for the default (got {rrf_k})")
    if not all(math.isfinite(weight) and weight >= 0 for weight in weights):
        raise InvalidArgument("stream weights must be finite and not negative")
    if not all(math.isfinite(value) for value in embedding):
        raise InvalidArgument("the query embedding holds a value that is not a finite number")


def parse_content_hashes(values: list[str]) -> list[str]:
    """sha256 hex digests of file bytes, at most MAX_CONTENT_HASHES."""
    if len(values) > MAX_CONTENT_HASHES:
        raise InvalidArgument(f"at most {MAX_CONTENT_HASHES} content hashes per request, got {len(values)}")
    for value in values:
        if not _SHA256_HEX.match(value):
            raise InvalidArgument(f"{value!r} is not a sha256 hex digest (64 lowercase hex digits)")
    return values
