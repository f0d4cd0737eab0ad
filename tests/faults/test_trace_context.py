"""A large body does not lend its trace to the requests after it on the same connection.

Found by the probe (issue 31, item 1): after one request with a body over about 64 KiB, every later
request on that keep-alive connection was logged under that request's trace id (one connection
carried 198 requests under one id), and 502 details cited it. Here one keep-alive client against a
real `cograph up` sends large bodies and small requests between them, and each request's access
line in the log must carry a trace id of its own.
"""

from __future__ import annotations

import re
import time
import uuid

import httpx

from support.cograph_process import RunningCograph

# An access line of the text log format: "... trace=<id> <METHOD> <path> <status> <ms> ms".
_ACCESS = re.compile(
    r"cograph_service\.access trace=(?P<trace>\S+) (?P<method>[A-Z]+) (?P<path>\S+) (?P<status>\d+) "
)
LOG_WAIT_SECONDS = 10


def _access_lines(running: RunningCograph, since: int, expected: int) -> list[re.Match[str]]:
    """The access lines written after byte `since` of the log, once there are `expected` of them
    (the log is a file the process writes; a line may land a moment after its answer)."""
    deadline = time.monotonic() + LOG_WAIT_SECONDS
    while True:
        with running.log.open("rb") as log:
            log.seek(since)
            text = log.read().decode(errors="replace")
        found = [match for line in text.splitlines() if (match := _ACCESS.search(line))]
        if len(found) >= expected or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_each_request_after_a_large_body_is_logged_under_its_own_trace(cograph_up: RunningCograph) -> None:
    admin = cograph_up.headers("admin")
    since = cograph_up.log.stat().st_size
    sent: list[tuple[str, str]] = []  # (method, path) in the order sent
    ports: set[int] = set()  # the client's end of each request's connection

    def note(response: httpx.Response, method: str, path: str) -> None:
        sent.append((method, path))
        ports.add(response.extensions["network_stream"].get_extra_info("client_addr")[1])

    with httpx.Client(base_url=cograph_up.url, headers=admin, timeout=30) as client:
        for name_chars in (66_000, 300_000):
            response = client.post("/api/md-collections", json={"name": "n" * name_chars})
            assert response.status_code < 500, response.text[:500]
            note(response, "POST", "/api/md-collections")
            for _ in range(3):
                path = f"/api/md-collections/{uuid.uuid4()}"  # unknown: 404, and a path of its own
                response = client.get(path)
                assert response.status_code == 404, response.text[:500]
                note(response, "GET", path)
    assert len(ports) == 1, f"the requests did not share one connection: client ports {ports}"

    lines = _access_lines(cograph_up, since, len(sent))
    assert [(line["method"], line["path"]) for line in lines] == sent, cograph_up.output()
    traces = [line["trace"] for line in lines]
    assert all(re.fullmatch(r"[0-9a-f]{32}", trace) for trace in traces), traces
    assert len(set(traces)) == len(traces), f"requests logged under one trace id: {traces}"
