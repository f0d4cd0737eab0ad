"""Clone URLs are no network probe: registered through a real `cograph up`, URLs pointing at a port
listening on loopback (by address, by the name localhost, over http, ssh and git) are refused with
a 400 that says why, and the port never sees a connection.

Private, link-local and the other internal ranges are judged by the unit tests of the address
check (tests/unit/repodocs/test_clone_urls.py), never by connecting to one.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import httpx
import pytest

from support.cograph_process import RunningCograph

SCHEME = "clone URLs must use https or ssh"
LOOPBACK = "internal address (loopback)"


@contextlib.contextmanager
def listening_on_loopback() -> Iterator[tuple[int, list[socket.socket]]]:
    """One port listening on 127.0.0.1, and on ::1 too where the machine has IPv6 (localhost may
    resolve to either); never accepted from unless something connects."""
    sockets: list[socket.socket] = []
    try:
        first = socket.socket(socket.AF_INET)
        sockets.append(first)
        first.bind(("127.0.0.1", 0))
        port = first.getsockname()[1]
        with contextlib.suppress(OSError):
            second = socket.socket(socket.AF_INET6)
            sockets.append(second)
            second.bind(("::1", port))
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.listen(8)
            sock.setblocking(False)
        yield port, sockets
    finally:
        for sock in sockets:
            sock.close()


def connections(sockets: list[socket.socket]) -> int:
    count = 0
    for sock in sockets:
        with contextlib.suppress(OSError):  # BlockingIOError: none; another OSError: never listened
            while count < 100:
                connection, _ = sock.accept()
                connection.close()
                count += 1
    return count


def register(running: RunningCograph, who: str, name: str, clone_url: str) -> httpx.Response:
    body = {
        "host": "example.com",
        "owner": "acme",
        "name": name,
        "clone_url": clone_url,
        "visibility": "private",
    }
    return httpx.post(f"{running.url}/api/repos", json=body, headers=running.headers(who), timeout=60)


def test_clone_urls_to_loopback_are_refused_and_nothing_is_probed(cograph_up: RunningCograph) -> None:
    with listening_on_loopback() as (port, sockets):
        cases = [
            ("alice", f"http://127.0.0.1:{port}/x.git", SCHEME),
            ("alice", f"git://127.0.0.1:{port}/x.git", SCHEME),
            ("alice", f"http://localhost:{port}/x.git", SCHEME),
            ("alice", f"ssh://127.0.0.1:{port}/x.git", f"host 127.0.0.1 is an {LOOPBACK}"),
            ("alice", f"https://127.0.0.1:{port}/x.git", f"host 127.0.0.1 is an {LOOPBACK}"),
            ("alice", f"https://localhost:{port}/x.git", f"host localhost resolves to an {LOOPBACK}"),
            ("alice", f"ssh://git@localhost:{port}/x.git", f"host localhost resolves to an {LOOPBACK}"),
            ("alice", "git@localhost:acme/x.git", f"host localhost resolves to an {LOOPBACK}"),
            ("alice", f"https://[::1]:{port}/x.git", f"host [::1] is an {LOOPBACK}"),
            ("alice", f"https://[::ffff:127.0.0.1]:{port}/x.git", LOOPBACK),
            ("alice", f"https://2130706433:{port}/x.git", LOOPBACK),
            # Forms the gateway leaves to administrators (not plainly remote): repodocs refuses them too.
            ("admin", f"git+ssh://localhost:{port}/x.git", f"host localhost resolves to an {LOOPBACK}"),
            ("admin", f"ext::nc 127.0.0.1 {port}", "names a git remote helper (ext::)"),
        ]
        for number, (who, url, why) in enumerate(cases):
            answer = register(cograph_up, who, f"probe-{number}", url)
            assert answer.status_code == 400, (url, answer.status_code, answer.text)
            assert answer.headers["content-type"].startswith("application/problem+json"), url
            detail = answer.json()["detail"]
            assert why in detail, (url, detail)
            assert "COGRAPH_REPODOCS__CLONE_ALLOWED_" in detail or "remote helper" in detail, detail
            for words in ("refused", "Connection", "Could not read", "fatal"):
                assert words not in detail, (url, detail)
        assert connections(sockets) == 0, "a refused clone URL was connected to"

    listed = httpx.get(f"{cograph_up.url}/api/repos", headers=cograph_up.headers("admin"), timeout=30)
    assert listed.status_code == 200, listed.text
    assert not [r for r in listed.json()["items"] if r["name"].startswith("probe-")]


@pytest.mark.parametrize("who", ["alice", "admin"])
def test_a_name_that_does_not_resolve_answers_the_fixed_words(cograph_up: RunningCograph, who: str) -> None:
    """What to check, and nothing of the resolver's or git's own words."""
    answer = register(cograph_up, who, f"nowhere-{who}", "https://no-such-host.invalid/acme/x.git")
    assert answer.status_code == 400, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith(
        "the repository could not be fetched: check the URL and that the server can reach it"
    ), detail
    assert "Name or service not known" not in detail
    # The resolver's words are in the server log, under the trace the answer names.
    trace = detail.rpartition("trace ")[2].removesuffix(")")
    assert len(trace) == 32, detail
    logged = [line for line in cograph_up.log.read_text().splitlines() if f"trace={trace}" in line]
    assert any(
        "could not resolve the host of https://no-such-host.invalid/acme/x.git" in line for line in logged
    ), logged
