"""What a failed sync records as its error: the cause in words, even when the exception has none."""

from __future__ import annotations

import pytest

from cograph_repodocs.runner import describe


def raised(error: Exception) -> Exception:
    """`error`, raised and caught, so it carries a traceback as a sync's failure does."""

    def write_the_index() -> None:
        raise error

    with pytest.raises(type(error)) as caught:
        write_the_index()
    return caught.value


def test_an_error_with_a_message_is_its_type_and_message() -> None:
    assert describe(raised(ValueError("bad chunk"))) == "ValueError: bad chunk"


def test_an_error_without_a_message_names_its_type_and_where_it_struck() -> None:
    # A database command timeout is a bare TimeoutError: "TimeoutError: " alone tells nothing.
    message = describe(raised(TimeoutError()))
    assert message.startswith("TimeoutError (no message) in ")
    assert message.endswith("raised.<locals>.write_the_index")


def test_an_error_never_raised_still_gets_a_description() -> None:
    assert describe(TimeoutError()) == "TimeoutError (no message) in an unknown place"
