"""What a failed sync records as its error: the cause in words, even when the exception has none."""

from __future__ import annotations

from pathlib import Path

import pytest

from cograph_repodocs.application.syncs import describe


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


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        (
            "checkout path /srv/repos is not a directory any more",
            "checkout path <checkout> is not a directory any more",
        ),
        (
            "[Errno 13] Permission denied: '/srv/repos/docs/a.md'",
            "[Errno 13] Permission denied: '<checkout>/docs/a.md'",
        ),
        ("/srv/repos-old/x is another directory", "/srv/repos-old/x is another directory"),
    ],
)
def test_the_checkout_path_is_hidden_where_it_is_a_whole_path(message: str, shown: str) -> None:
    """Every reader of a repository sees its syncs' errors; the checkout path is for administrators."""
    assert describe(raised(OSError(message)), Path("/srv/repos")) == f"OSError: {shown}"


def test_a_checkout_at_the_root_hides_nothing_it_cannot_tell_apart() -> None:
    assert (
        describe(raised(ValueError("https://example.com/x")), Path("/"))
        == "ValueError: https://example.com/x"
    )
