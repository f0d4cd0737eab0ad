"""Clone URLs may carry a token: it never leaves the service, in the URL or in git's messages."""

from __future__ import annotations

import pytest

from cograph_repodocs.domain.rules import redact_credentials


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://x-access-token:ghp_abc123@github.com/acme/api.git", "https://github.com/acme/api.git"),
        ("https://ghp_abc123@github.com/acme/api.git", "https://github.com/acme/api.git"),
        ("ssh://git@example.com:2222/acme/api.git", "ssh://example.com:2222/acme/api.git"),
        ("HTTP://u:p@host/x", "HTTP://host/x"),
        (
            "fatal: repository 'https://u:p%40ss@host/x.git/' not found; tried https://v:w@mirror/x",
            "fatal: repository 'https://host/x.git/' not found; tried https://mirror/x",
        ),
        # Nothing secret: left as written.
        ("git@github.com:acme/api.git", "git@github.com:acme/api.git"),  # scp-like: a user name only
        ("https://github.com/acme/api.git", "https://github.com/acme/api.git"),
        ("https://github.com/acme/api@v2.git", "https://github.com/acme/api@v2.git"),
        ("mail alice@example.com about /srv/repo", "mail alice@example.com about /srv/repo"),
    ],
)
def test_credentials_of_urls_are_removed(text: str, shown: str) -> None:
    assert redact_credentials(text) == shown
