"""Many clients uploading the same keys at once: exactly one document per key, each whole.

The probe's 20 clients upserting the same 20 keys ended in exactly 20 consistent documents; this
keeps it so through REST on a real `cograph up`: every answer is a success (created for one
client per key, replaced or unchanged for the others), the collection holds one document per key,
each stored document is one client's version entire, its content hash is the SHA-256 of that
content, and its chunks are cut from that content alone.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from support.cograph_process import RunningCograph

CLIENTS = 20
KEYS = 20


def _version(client: int, key: int) -> str:
    body = " ".join(f"client{client} wrote line {line} of key {key}." for line in range(8 + client))
    return f"# Key {key}, client {client}\n\n{body}\n"


def _upload_all(running: RunningCograph, collection: str, client: int) -> list[dict[str, Any]]:
    """One client: every key, one request each, in an order of its own."""
    order = [(client + step) % KEYS for step in range(KEYS)]
    results = []
    with httpx.Client(base_url=running.url, headers=running.headers("alice"), timeout=120) as http:
        for key in order:
            answer = http.post(
                f"/api/md-collections/{collection}/documents",
                json={"source_key": f"k{key}.md", "content": _version(client, key)},
            )
            assert answer.status_code in (200, 201), answer.text
            results.append(answer.json() | {"key": key})
    return results


def test_concurrent_upserts_of_the_same_keys_leave_one_whole_document_per_key(
    cograph_up: RunningCograph,
) -> None:
    with httpx.Client(base_url=cograph_up.url, headers=cograph_up.headers("alice"), timeout=60) as http:
        created = http.post("/api/md-collections", json={"name": "Race"})
        assert created.status_code == 201, created.text
        collection = created.json()["id"]

        with ThreadPoolExecutor(CLIENTS) as clients:
            done = clients.map(lambda client: _upload_all(cograph_up, collection, client), range(CLIENTS))
            answers = [answer for answered in done for answer in answered]

        assert len(answers) == CLIENTS * KEYS
        for key in range(KEYS):
            mine = [a for a in answers if a["key"] == key]
            assert [a["state"] for a in mine].count("created") == 1, mine
            assert len({a["document_id"] for a in mine}) == 1, "one key, one document"

        listed = http.get(f"/api/md-collections/{collection}/documents", params={"limit": 100})
        assert listed.status_code == 200, listed.text
        documents = listed.json()["items"]
        assert sorted(d["source_key"] for d in documents) == sorted(f"k{key}.md" for key in range(KEYS))

        versions = {_version(client, key) for client in range(CLIENTS) for key in range(KEYS)}
        for document in documents:
            stored = http.get(f"/api/md-collections/{collection}/documents/{document['id']}").json()
            assert stored["content"] in versions, "a document is one client's version, entire"
            assert stored["source_key"] == f"k{stored['content'].split()[2].rstrip(',')}.md"
            assert stored["content_hash"] == hashlib.sha256(stored["content"].encode()).hexdigest()
            chunks = http.get(f"/api/md-collections/{collection}/documents/{document['id']}/chunks").json()
            texts = [c["content"].strip() for c in chunks["items"]]
            assert len(texts) == stored["chunk_count"] > 0
            assert all(text in stored["content"] for text in texts), "chunks of another version"
            last_sentence = stored["content"].split(". ")[-1].strip()
            assert last_sentence in texts[-1]
