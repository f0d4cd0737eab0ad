"""/api/md-collections end to end: CRUD, uploads, documents with metadata, chunks, embedding, jobs."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import uuid

import httpx
from e2e.gateway.helpers import create_collection, is_problem, skip_if_unimplemented, wait_for_jobs

Auth = dict[str, dict[str, str]]

GUIDE = b"""---
title: On-call guide
owner: platform
tags: [ops, pager]
---
# Paging

Acknowledge a page within five minutes. See [escalation](escalation.md#levels) and [[Glossary]].

| severity | response |
|----------|----------|
| sev1     | 5 min    |
| sev2     | 30 min   |

```bash
pager ack --incident 42
```

## Handover

Write the handover in the incident channel ([handover](https://example.com/handover)).
"""

ESCALATION = b"# Escalation\n\n## Levels\n\nLevel one is the on-call engineer; level two the team lead.\n"


async def test_documents_round_trip_with_metadata_chunks_and_jobs(
    gateway: httpx.AsyncClient, auth: Auth
) -> None:
    alice = auth["alice"]
    collection = await create_collection(gateway, alice, "On-call")
    cid = collection["id"]
    base = f"/api/md-collections/{cid}"

    # A single JSON upload answers the document id and its state.
    created = await gateway.post(
        f"{base}/documents", json={"source_key": "guide.md", "content": GUIDE.decode()}, headers=alice
    )
    assert created.status_code == 201, created.text
    first = created.json()
    assert first["state"] == "created"
    assert first["source_key"] == "guide.md"
    assert str(uuid.UUID(first["document_id"])) == first["document_id"]
    assert str(uuid.UUID(first["job_id"])) == first["job_id"]
    again = await gateway.post(
        f"{base}/documents", json={"source_key": "guide.md", "content": GUIDE.decode()}, headers=alice
    )
    assert again.json()["state"] == "unchanged"
    assert again.json()["document_id"] == first["document_id"]

    # Multipart: the file name is the source key, unless a source_key field is given.
    uploaded = await gateway.post(
        f"{base}/documents", files={"file": ("escalation.md", ESCALATION, "text/markdown")}, headers=alice
    )
    assert uploaded.status_code == 201, uploaded.text
    assert uploaded.json()["source_key"] == "escalation.md"
    renamed = await gateway.post(
        f"{base}/documents",
        files={"file": ("whatever.md", b"# Glossary\n\nSev: severity.\n", "text/markdown")},
        data={"source_key": "Glossary.md"},
        headers=alice,
    )
    assert renamed.json()["source_key"] == "Glossary.md"
    replaced = await gateway.post(
        f"{base}/documents",
        files={"file": ("escalation.md", ESCALATION + b"\nLevel three is the director.\n", "text/markdown")},
        headers=alice,
    )
    assert replaced.json()["state"] == "replaced"

    # A refused document is a 4xx problem naming the reason.
    binary = await gateway.post(
        f"{base}/documents",
        files={"file": ("logo.md", b"\x89PNG\r\n\x1a\n\x00\x00", "image/png")},
        headers=alice,
    )
    assert is_problem(binary, 422)["reason"] in ("not_utf8", "binary")
    bad_key = await gateway.post(
        f"{base}/documents", json={"source_key": "../etc/passwd", "content": "x"}, headers=alice
    )
    assert is_problem(bad_key, 422)["reason"] == "invalid_source_key"
    no_key = await gateway.post(f"{base}/documents", json={"source_key": "", "content": "x"}, headers=alice)
    assert is_problem(no_key, 422)["reason"] == "invalid_source_key"

    # A batch answers per-document results (a failure among them) and the counts.
    batch = await gateway.post(
        f"{base}/documents/batch",
        json={
            "documents": [
                {"source_key": "guide.md", "content": GUIDE.decode()},
                {"source_key": "adr/0001.md", "content": "# ADR 1\n\nWe use PostgreSQL.\n"},
                {"source_key": "adr/0001.md", "content": "# twice"},
                {"source_key": "", "content": "# no key"},
                {"source_key": "k" * 2000, "content": "# long key"},
            ]
        },
        headers=alice,
    )
    assert batch.status_code == 201, batch.text
    result = batch.json()
    assert [r["state"] for r in result["results"]] == ["unchanged", "created", None, None, None]
    assert [r["error"]["reason"] for r in result["results"][2:]] == [
        "duplicate_in_batch",
        "invalid_source_key",
        "invalid_source_key",
    ]
    assert "empty" in result["results"][3]["error"]["message"]
    assert result["counts"] == {"created": 1, "replaced": 0, "unchanged": 1, "failed": 3}

    # Listing pages with page_size and page_token.
    seen: list[str] = []
    token = None
    while True:
        params = {"page_size": 2, **({"page_token": token} if token else {})}
        page = (await gateway.get(f"{base}/documents", params=params, headers=alice)).json()
        assert len(page["items"]) <= 2
        seen += [d["source_key"] for d in page["items"]]
        token = page["next_page_token"]
        if token is None:
            break
    assert sorted(seen) == ["Glossary.md", "adr/0001.md", "escalation.md", "guide.md"]

    await wait_for_jobs(gateway, cid, alice)

    # The full document with its parsed metadata; links resolved within the collection.
    document = (await gateway.get(f"{base}/documents/{first['document_id']}", headers=alice)).json()
    assert document["content"] == GUIDE.decode()
    meta = document["metadata"]
    assert meta["frontmatter"] == {"title": "On-call guide", "owner": "platform", "tags": ["ops", "pager"]}
    assert meta["title"] == "On-call guide"
    # Line numbers are the file's, frontmatter included.
    assert [(h["level"], h["text"], h["anchor"], h["line"]) for h in meta["heading_tree"]] == [
        (1, "Paging", "paging", 6),
        (2, "Handover", "handover", 19),
    ]
    code = meta["code_blocks"][0]
    assert (code["language"], code["start_line"], code["end_line"]) == ("bash", 15, 17)
    assert (meta["tables"][0]["start_line"], meta["tables"][0]["end_line"]) == (10, 13)
    assert meta["tables"][0]["header"] == ["severity", "response"]
    assert meta["tables"][0]["rows"] == [["sev1", "5 min"], ["sev2", "30 min"]]
    links = {link["href"]: link for link in meta["links"]}
    assert links["escalation.md#levels"]["link_type"] == "markdown"
    assert links["escalation.md#levels"]["target_document_id"] == uploaded.json()["document_id"]
    assert links["https://example.com/handover"]["link_type"] == "absolute"
    assert links["https://example.com/handover"]["target_document_id"] is None
    assert [link["line"] for link in meta["links"]] == [8, 8, 21]
    assert meta["word_count"] == 46  # whitespace-separated, the body's only
    assert meta["line_count"] == GUIDE.decode().count("\n")

    # Chunks: what was embedded, each citable as collection/<id>#<anchor>.
    chunks = (await gateway.get(f"{base}/documents/{first['document_id']}/chunks", headers=alice)).json()[
        "items"
    ]
    assert chunks
    chunk = chunks[0]
    assert chunk["citation"] == f"collection/{cid}#{chunk['section_anchor']}"
    assert chunk["embedding_model"] == "all-MiniLM-L6-v2"
    # The file's lines the chunk was cut from: the whole body here, after the frontmatter.
    assert (chunk["start_line"], chunk["end_line"]) == (6, GUIDE.decode().count("\n"))
    single = await gateway.get(f"{base}/chunks/{chunk['id']}", headers=alice)
    assert single.json() == chunk

    status = (await gateway.get(f"{base}/embed-status", headers=alice)).json()
    assert status["total_chunks"] == status["embedded_chunks"] > 0
    assert status["pending_chunks"] == status["stale_chunks"] == 0

    # Re-embedding queues a job; the job lists show it, per collection and globally.
    job = await gateway.post(f"{base}/re-embed", headers=alice)
    assert job.status_code == 202, job.text
    assert job.json()["kind"] == "embed"
    jobs = await wait_for_jobs(gateway, cid, alice)
    assert job.json()["id"] in {j["id"] for j in jobs}
    everywhere = (
        await gateway.get("/api/md-collections/jobs", params={"kind": "embed"}, headers=alice)
    ).json()
    assert job.json()["id"] in {j["id"] for j in everywhere["items"]}
    assert all(j["kind"] == "embed" for j in everywhere["items"])

    # Retry: embed jobs can be; upload jobs cannot (a 409 telling you to re-upload).
    retried = await gateway.post(f"/api/md-collections/jobs/{job.json()['id']}/retry", headers=alice)
    assert retried.status_code == 202, retried.text
    assert retried.json()["retry_of"] == job.json()["id"]
    upload_job = await gateway.post(f"/api/md-collections/jobs/{first['job_id']}/retry", headers=alice)
    assert "re-upload" in is_problem(upload_job, 409)["detail"]
    await wait_for_jobs(gateway, cid, alice)

    # Deleting a document; then it is gone.
    deleted = await gateway.delete(f"{base}/documents/{first['document_id']}", headers=alice)
    assert deleted.status_code == 204
    is_problem(await gateway.get(f"{base}/documents/{first['document_id']}", headers=alice), 404)
    is_problem(await gateway.delete(f"{base}/documents/{first['document_id']}", headers=alice), 404)


async def test_update_and_delete_a_collection(gateway: httpx.AsyncClient, auth: Auth) -> None:
    collection = await create_collection(gateway, auth["alice"], "Drafts")
    url = f"/api/md-collections/{collection['id']}"
    patched = await gateway.patch(url, json={"name": "ADRs", "visibility": "public"}, headers=auth["alice"])
    assert patched.status_code == 200, patched.text
    assert (patched.json()["name"], patched.json()["visibility"]) == ("ADRs", "public")
    assert patched.json()["description"] == collection["description"]
    is_problem(await gateway.patch(url, json={}, headers=auth["alice"]), 400)
    is_problem(await gateway.patch(url, json={"owner": "bob"}, headers=auth["alice"]), 400)
    # Public now: bob reads it, but may not change it.
    assert (await gateway.get(url, headers=auth["bob"])).status_code == 200
    is_problem(await gateway.patch(url, json={"name": "Mine"}, headers=auth["bob"]), 403)
    is_problem(await gateway.delete(url, headers=auth["bob"]), 403)
    # An administrator may delete what they do not own.
    assert (await gateway.delete(url, headers=auth["admin"])).status_code == 204
    is_problem(await gateway.get(url, headers=auth["alice"]), 404)


async def test_a_group_grant_gives_read_access_until_removed(gateway: httpx.AsyncClient, auth: Auth) -> None:
    alice, bob = auth["alice"], auth["bob"]
    collection = await create_collection(gateway, alice, "Support runbooks", visibility="admin_only")
    url = f"/api/md-collections/{collection['id']}"
    await gateway.post(
        f"{url}/documents", json={"source_key": "a.md", "content": "# A\n\ntext\n"}, headers=alice
    )

    is_problem(await gateway.get(url, headers=bob), 403)
    assert collection["id"] not in {
        c["id"] for c in (await gateway.get("/api/md-collections", headers=bob)).json()["items"]
    }

    granted = await gateway.post(f"{url}/grants", json={"group": "support"}, headers=alice)
    assert granted.status_code == 201, granted.text
    assert granted.json()["group_grants"] == ["support"]
    assert (await gateway.get(url, headers=bob)).status_code == 200
    assert (await gateway.get(f"{url}/documents", headers=bob)).json()["items"][0]["source_key"] == "a.md"
    assert collection["id"] in {
        c["id"] for c in (await gateway.get("/api/md-collections", headers=bob)).json()["items"]
    }
    # Reading is not writing, and a grant does not show the jobs.
    is_problem(await gateway.post(f"{url}/grants", json={"group": "everyone"}, headers=bob), 403)
    is_problem(await gateway.get(f"{url}/jobs", headers=bob), 403)

    removed = await gateway.delete(f"{url}/grants/support", headers=alice)
    assert removed.status_code == 204
    is_problem(await gateway.get(url, headers=bob), 403)
    # An identity provider's group path holds '/': sent percent-encoded, it is withdrawn exactly.
    for group in ("/eng/backend", "eng/backend"):
        assert (await gateway.post(f"{url}/grants", json={"group": group}, headers=alice)).status_code == 201
    encoded = await gateway.delete(f"{url}/grants/%2Feng%2Fbackend", headers=alice)
    assert encoded.status_code == 204, encoded.text
    assert (await gateway.get(url, headers=alice)).json()["group_grants"] == ["eng/backend"]
    assert (await gateway.delete(f"{url}/grants/eng%2Fbackend", headers=alice)).status_code == 204
    assert (await gateway.get(url, headers=alice)).json()["group_grants"] == []
    assert (await gateway.post(f"{url}/grants", json={"group": "ops"}, headers=alice)).status_code == 201
    assert (await gateway.delete(f"{url}/grants/ops/", headers=alice)).status_code == 204  # a URL's own '/'
    assert (await gateway.get(url, headers=alice)).json()["group_grants"] == []
    # A name holding '/grants/', written with plain slashes, is that name: not "oncall".
    for group in ("ops/grants/oncall", "oncall"):
        assert (await gateway.post(f"{url}/grants", json={"group": group}, headers=alice)).status_code == 201
    assert (await gateway.delete(f"{url}/grants/ops/grants/oncall", headers=alice)).status_code == 204
    assert (await gateway.get(url, headers=alice)).json()["group_grants"] == ["oncall"]
    assert (await gateway.delete(f"{url}//grants/oncall", headers=alice)).status_code == 204
    assert (await gateway.get(url, headers=alice)).json()["group_grants"] == []
    is_problem(await gateway.get(f"{url}/documents", headers=bob), 403)
    assert (await gateway.get("/api/md-collections", headers=bob)).json()["items"] == []


async def test_a_problem_does_not_repeat_a_long_bad_value_whole(
    gateway: httpx.AsyncClient, auth: Auth
) -> None:
    """An id, a path, a repository name or an enum value of kilobytes came back whole in the
    detail (and again in `errors`): the answer quotes the start of it, and still says what is wrong."""
    alice = auth["alice"]
    long = "x" * 6000
    collection = await create_collection(gateway, alice, "Long values")
    answers = {
        "is not a collection id": await gateway.get(f"/api/md-collections/{long}", headers=alice),
        "is not a document id": await gateway.get(
            f"/api/md-collections/{collection['id']}/documents/{long}", headers=alice
        ),
        "is not a file path": await gateway.get(
            f"/api/repos/example.com/a/b/files/..%2F{long}", headers=alice
        ),
        "does not exist": await gateway.get(f"/api/repos/example.com/{long}/b", headers=alice),
        "visibility": await gateway.post(
            "/api/md-collections", json={"name": "n", "visibility": long}, headers=alice
        ),
        "Validation failed for GET /api/md-collections": await gateway.get(
            f"/api/md-collections?page_size=0&pad={long}", headers=alice
        ),
        "unknown field": await gateway.post(
            "/api/md-collections", json={"name": "n", "visibility": "public", f"$.{long}": 1}, headers=alice
        ),
        "the upload is not valid": await gateway.post(
            f"/api/md-collections/{collection['id']}/documents",
            json={"source_key": "a.md", "content": "# A", long: 1},
            headers=alice,
        ),
        "cannot upload a": await gateway.post(
            f"/api/md-collections/{collection['id']}/documents",
            content=b"# A",
            headers={**alice, "content-type": f"text/{long}"},
        ),
    }
    statuses = {"does not exist": 404, "cannot upload a": 415}
    for says, answer in answers.items():
        body = is_problem(answer, statuses.get(says, 400))
        assert says in body["detail"], body["detail"][:300]
        assert "x" * 6000 not in answer.text, body["detail"][:300]
        assert len(answer.text) < 1500, answer.text[:300]


async def test_bad_input_is_a_clear_problem_never_a_500(gateway: httpx.AsyncClient, auth: Auth) -> None:
    alice = auth["alice"]
    collection = await create_collection(gateway, alice)
    base = f"/api/md-collections/{collection['id']}"
    assert (
        "not a collection id"
        in is_problem(await gateway.get("/api/md-collections/nope", headers=alice), 400)["detail"]
    )
    is_problem(await gateway.get(f"{base}/documents/nope", headers=alice), 400)
    is_problem(await gateway.get(f"{base}/chunks/12", headers=alice), 400)
    is_problem(await gateway.post("/api/md-collections/jobs/xyz/retry", headers=alice), 400)
    is_problem(await gateway.get(f"{base}/documents/{uuid.uuid4()}", headers=alice), 404)
    is_problem(await gateway.post(f"/api/md-collections/jobs/{uuid.uuid4()}/retry", headers=alice), 404)
    is_problem(await gateway.get("/api/md-collections", params={"page_size": 0}, headers=alice), 400)
    is_problem(await gateway.get("/api/md-collections", params={"page_size": "many"}, headers=alice), 400)
    is_problem(await gateway.get("/api/md-collections", params={"page_token": "!!"}, headers=alice), 400)
    # Tokens of the right shape whose parts are not of the listing's key types (forged, damaged).
    document_url = f"{base}/documents/{uuid.uuid4()}/chunks"
    for url, parts in (
        ("/api/md-collections", ["docs", "not-a-uuid"]),
        ("/api/md-collections", ["a\x00b", str(uuid.uuid4())]),
        (f"{base}/documents", ["\ud800"]),
        ("/api/md-collections/jobs", ["yesterday", str(uuid.uuid4())]),
        (f"{base}/jobs", [str(uuid.uuid4()), str(uuid.uuid4())]),
        (document_url, ["seven"]),
    ):
        forged = base64.urlsafe_b64encode(json.dumps(parts).encode()).decode()
        refused = is_problem(await gateway.get(url, params={"page_token": forged}, headers=alice), 400)
        assert "page_token" in refused["detail"], url
    is_problem(await gateway.get("/api/md-collections/jobs", params={"status": "done"}, headers=alice), 400)
    is_problem(
        await gateway.post(
            f"{base}/documents", content=b"{", headers={**alice, "content-type": "application/json"}
        ),
        400,
    )
    is_problem(
        await gateway.post(
            f"{base}/documents", content=b"x", headers={**alice, "content-type": "text/plain"}
        ),
        415,
    )
    is_problem(await gateway.post(f"{base}/documents", json={"source_key": "a.md"}, headers=alice), 400)
    # What is wrong with a body that is no JSON object, in words a person can act on.
    as_json = {**alice, "content-type": "application/json"}
    for url, body, says in (
        ("/api/md-collections", b"", "the request body is empty: send a JSON object"),
        (f"{base}/documents/batch", b"", "the request body is empty: send a JSON object"),
        ("/api/md-collections", b'{"name": "x", ', "the body is not valid JSON: "),
        (
            "/api/search/route",
            b'{"query": "a", "limit": 1e309}',
            "Validation failed for POST /api/search/route: limit: Number out of range",
        ),
        (  # a number in a string is no number: the body is read as strictly as MCP reads arguments
            "/api/search/route",
            b'{"query": "a", "limit": "10"}',
            "Validation failed for POST /api/search/route: limit: Expected `int | null`, got `str`",
        ),
        (
            f"{base}/documents/batch",
            b'{"documents": [{"source_key": "a.md", "content": 1}]}',
            "Validation failed for POST "
            f"{base}/documents/batch: documents[0].content: Expected `str`, got `int`",
        ),
        ("/api/md-collections", b'{"name": "x", "visibility": true}', "Validation failed for POST"),
        (f"{base}/documents", b'{"source_key": "s.md", "content": "caf\xe9"}', "the body is not UTF-8"),
        (
            f"{base}/documents",
            b'{"source_key": "s.md"',
            "the body is not valid JSON (Input data was truncated)",
        ),
    ):
        assert is_problem(await gateway.post(url, content=body, headers=as_json), 400)["detail"].startswith(
            says
        )
    form = await gateway.post("/api/md-collections", files={"name": (None, b"x")}, headers=alice)
    assert is_problem(form, 400)["detail"] == (
        "the body is multipart/form-data, not JSON: send a JSON object as application/json"
    )
    is_problem(await gateway.post(f"{base}/documents", files={"other": ("a.md", b"x")}, headers=alice), 400)
    two_files = [("file", ("one.md", b"# One\n")), ("file", ("two.md", b"# Two\n"))]
    several = is_problem(await gateway.post(f"{base}/documents", files=two_files, headers=alice), 400)
    assert "/documents/batch" in several["detail"]  # not the first kept and the others dropped
    # Parts without a filename are read as text: bytes that are not text in their charset are a 400.
    multipart = {**alice, "content-type": "multipart/form-data; boundary=B"}
    file_part = b'--B\r\nContent-Disposition: form-data; name="file"; filename="x.md"\r\n\r\n# X\r\n'
    for field in (
        b'--B\r\nContent-Disposition: form-data; name="source_key"\r\n\r\n\xff\xfe\r\n--B--\r\n',
        b'--B\r\nContent-Disposition: form-data; name="note"\r\nContent-Type: text/plain; charset=nope\r\n'
        b"\r\nabc\r\n--B--\r\n",
        b'--B\r\nContent-Disposition: form-data; name="file"\r\n\r\n# caf\xe9 in Latin-1\r\n--B--\r\n',
        # codecs whose refusal is a UnicodeError, not a UnicodeDecodeError
        b'--B\r\nContent-Disposition: form-data; name="note"\r\n'
        b"Content-Type: text/plain; charset=undefined\r\n\r\nabc\r\n--B--\r\n",
        b'--B\r\nContent-Disposition: form-data; name="note"\r\n'
        b"Content-Type: text/plain; charset=punycode\r\n\r\n\\x\r\n--B--\r\n",
    ):
        unreadable = await gateway.post(f"{base}/documents", content=file_part + field, headers=multipart)
        assert "not valid text" in is_problem(unreadable, 400)["detail"]
    crowd = b"".join(
        b'--B\r\nContent-Disposition: form-data; name="f%d"\r\n\r\nx\r\n' % n for n in range(1100)
    )
    crowded = await gateway.post(
        f"{base}/documents", content=file_part + crowd + b"--B--\r\n", headers=multipart
    )
    assert "1,000 parts" in is_problem(crowded, 400)["detail"]
    headers = b"".join(b"X-Note-%d: x\r\n" % n for n in range(9))
    over_headed = await gateway.post(
        f"{base}/documents",
        content=b'--B\r\nContent-Disposition: form-data; name="file"; filename="x.md"\r\n'
        + headers
        + b"\r\n# X\r\n--B--\r\n",
        headers=multipart,
    )
    assert "8 headers to a part" in is_problem(over_headed, 400)["detail"]
    nameless = await gateway.post(f"{base}/documents", files={"file": (None, b"# X\n")}, headers=alice)
    assert "`source_key` field" in is_problem(nameless, 400)["detail"]
    assert (await gateway.get(f"{base}/documents", headers=alice)).json()["items"] == []
    # A `file` part without a filename is the document when a `source_key` field names it.
    as_text = await gateway.post(
        f"{base}/documents",
        files={"file": (None, b"# Text part\n")},
        data={"source_key": "t.md"},
        headers=alice,
    )
    assert as_text.status_code == 201, as_text.text
    assert as_text.json()["source_key"] == "t.md"
    is_problem(await gateway.post(f"{base}/documents/batch", json={"documents": []}, headers=alice), 400)
    for blank in ("", "  "):
        empty = await gateway.post(f"{base}/search", json={"query": blank}, headers=alice)
        assert is_problem(empty, 400)["detail"] == "the query is empty"
    is_problem(await gateway.post(f"{base}/search", json={"query": "x", "limit": 1000}, headers=alice), 400)
    no_group = is_problem(await gateway.post(f"{base}/grants", json={"group": ""}, headers=alice), 400)
    assert "group: Expected `str` of length >= 1" in no_group["detail"]  # names the field, says why
    is_problem(
        await gateway.post(
            "/api/md-collections", content=b"[]", headers={**alice, "content-type": "application/json"}
        ),
        400,
    )
    # JSON nested 5,000 levels: read against the body's type, it is refused at its first level
    # (and in a field, at the field), without the decoder recursing through it.
    deep = b"[" * 5000 + b"]" * 5000
    for url, body, says in (
        ("/api/md-collections", deep, "data: Expected `object`, got `array`"),
        (f"{base}/documents/batch", deep, "data: Expected `object`, got `array`"),
        ("/api/search/route", b'{"query": ' + deep + b"}", "query: Expected `str`, got `array`"),
    ):
        too_deep = await gateway.post(
            url, content=body, headers={**alice, "content-type": "application/json"}
        )
        assert is_problem(too_deep, 400)["detail"].endswith(says), url


async def test_requests_http_cannot_read_are_problems_too(gateway: httpx.AsyncClient) -> None:
    """Refused by the HTTP parser before the application sees them, and still problem+json."""
    url = httpx.URL(str(gateway.base_url))

    async def answer_to(request: bytes) -> tuple[bytes, dict[str, object]]:
        reader, writer = await asyncio.open_connection(url.host, url.port)
        writer.write(request)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=10)  # answered, then closed
        writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 "), head
        assert b"content-type: application/problem+json" in head.lower(), head
        problem: dict[str, object] = json.loads(body)
        assert problem["status"] == 400
        return head, problem

    await answer_to(b"GET /api/md-collections\x01 HTTP/1.1\r\nHost: x\r\n\r\n")
    # A request line still unfinished past 16 KiB (the rest would follow): refused, and told why.
    _, problem = await answer_to(b"GET /api/md-collections?page_token=" + b"A" * 20_000)
    assert "16 KiB" in str(problem["detail"])


async def test_collection_search_is_scoped_and_cites(gateway: httpx.AsyncClient, auth: Auth) -> None:
    alice = auth["alice"]
    collection = await create_collection(gateway, alice, "Glossary")
    base = f"/api/md-collections/{collection['id']}"
    await gateway.post(
        f"{base}/documents",
        json={"source_key": "glossary.md", "content": "# Glossary\n\n## SLO\n\nA service level objective.\n"},
        headers=alice,
    )
    await wait_for_jobs(gateway, collection["id"], alice)
    is_problem(await gateway.post(f"{base}/search", json={"query": "objective"}, headers=auth["bob"]), 403)
    response = await gateway.post(
        f"{base}/search", json={"query": "service level objective", "limit": 3}, headers=alice
    )
    skip_if_unimplemented(response, "search SearchCollection")
    assert response.status_code == 200, response.text
    hits = response.json()["hits"]
    assert hits
    assert hits[0]["chunk"]["citation"].startswith(f"collection/{collection['id']}#")


async def test_the_parser_warnings_reach_the_uploader_and_the_document(
    gateway: httpx.AsyncClient, auth: Auth
) -> None:
    alice = auth["alice"]
    collection = await create_collection(gateway, alice, "Release notes")
    base = f"/api/md-collections/{collection['id']}/documents"
    notes = "---\n# Release notes\n\nImportant text.\n\n---\n\nMore.\n"  # '---' is a thematic break here
    uploaded = await gateway.post(base, json={"source_key": "notes.md", "content": notes}, headers=alice)
    assert uploaded.status_code == 201, uploaded.text
    expected = ["frontmatter is a str, not a mapping; the block is read as markdown"]
    assert uploaded.json()["warnings"] == expected
    document = (await gateway.get(f"{base}/{uploaded.json()['document_id']}", headers=alice)).json()
    assert document["metadata"]["warnings"] == expected
    assert document["title"] == "Release notes"


async def test_pages_follow_tokens_of_long_sort_keys(gateway: httpx.AsyncClient, auth: Auth) -> None:
    """A token holds the last row's sort key: long names and source keys make long tokens, and
    the gateway takes back every token the services issue."""
    alice = auth["alice"]
    marker = uuid.uuid4().hex[:8]  # only this test's collections match it
    names = [f"{letter * 190} {marker}" for letter in "abc"]
    for name in names:
        await create_collection(gateway, alice, name)
    listed: list[str] = []
    token = None
    while True:
        params: dict[str, str | int] = {"page_size": 1, "query": marker}
        if token:
            params["page_token"] = token
        page = await gateway.get("/api/md-collections", params=params, headers=alice)
        assert page.status_code == 200, page.text
        listed += [c["name"] for c in page.json()["items"]]
        token = page.json()["next_page_token"]
        if token is None:
            break
        assert len(token) > 200
    assert listed == names

    base = f"/api/md-collections/{(await create_collection(gateway, alice, 'Deep'))['id']}/documents"
    keys = [f"{'n' * 600}/{index}.md" for index in range(3)]
    batch = [{"source_key": key, "content": f"# Page {index}\n"} for index, key in enumerate(keys)]
    assert (await gateway.post(f"{base}/batch", json={"documents": batch}, headers=alice)).status_code == 201
    seen: list[str] = []
    token = None
    while True:
        params = {"page_size": 1, **({"page_token": token} if token else {})}
        page = await gateway.get(base, params=params, headers=alice)
        assert page.status_code == 200, page.text
        seen += [d["source_key"] for d in page.json()["items"]]
        token = page.json()["next_page_token"]
        if token is None:
            break
    assert seen == keys


async def test_the_batch_limit_is_the_services_setting_and_size_limits_are_413(
    gateway: httpx.AsyncClient, auth: Auth
) -> None:
    alice = auth["alice"]
    base = f"/api/md-collections/{(await create_collection(gateway, alice))['id']}/documents"
    documents = [{"source_key": f"{index}.md", "content": "# A\n"} for index in range(1001)]
    over = is_problem(await gateway.post(f"{base}/batch", json={"documents": documents}, headers=alice), 400)
    assert over["detail"] == "a batch holds at most 1000 documents; this one has 1001"  # the configured limit

    # Over the gateway's request size limit: 413 whichever way the body is sent.
    huge = b"x" * (64 * 2**20 + 1024)
    as_json = await gateway.post(
        base,
        content=b'{"source_key": "a.md", "content": "' + huge + b'"}',
        headers={**alice, "content-type": "application/json"},
    )
    is_problem(as_json, 413)
    as_file = await gateway.post(base, files={"file": ("a.md", huge, "text/markdown")}, headers=alice)
    assert "too large" in is_problem(as_file, 413)["detail"]
    assert (await gateway.get(base, headers=alice)).json()["items"] == []


async def test_head_is_a_get_without_its_body_and_a_405_says_what_is_allowed(
    gateway: httpx.AsyncClient, auth: Auth
) -> None:
    """Every GET endpoint answers HEAD (RFC 9110: a general-purpose server supports both), under
    the same policy; a method a path does not serve is a 405 naming the ones it does."""
    alice = auth["alice"]
    listed = await gateway.get("/api/md-collections", headers=alice)
    head = await gateway.head("/api/md-collections", headers=alice)
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == listed.headers["content-type"]
    assert head.headers["content-length"] == listed.headers["content-length"]
    refused = await gateway.head("/api/md-collections")
    assert refused.status_code == 401
    assert refused.content == b""
    assert (await gateway.head("/readyz")).status_code == 200

    wrong = await gateway.put("/api/md-collections", json={}, headers=alice)
    is_problem(wrong, 405)
    assert set(wrong.headers["allow"].split(", ")) == {"GET", "HEAD", "OPTIONS", "POST"}


async def test_options_names_every_method_a_path_serves(gateway: httpx.AsyncClient, auth: Auth) -> None:
    """OPTIONS answered "OPTIONS, POST" for /api/md-collections and "DELETE, OPTIONS" for a
    collection: Litestar kept the methods of the path's first handler only. Its Allow must name
    every method the OpenAPI document gives the path, HEAD wherever GET is, and OPTIONS."""
    document = (await gateway.get("/api/schema/openapi.json")).json()
    checked = 0
    for template, operations in document["paths"].items():
        path = re.sub(r"\{[^}]+\}", lambda _: str(uuid.uuid4()), template)
        answer = await gateway.options(path, headers=auth["alice"])
        assert answer.status_code == 204, (template, answer.status_code, answer.text[:300])
        served = {method.upper() for method in operations if method != "parameters"}
        expected = served | {"OPTIONS"} | ({"HEAD"} if "GET" in served else set())
        assert set(answer.headers["allow"].split(", ")) == expected, template
        checked += 1
    assert checked >= 20  # the document's paths, not an empty walk


async def test_the_openapi_document_lists_the_409_a_grant_can_answer(
    gateway: httpx.AsyncClient, auth: Auth
) -> None:
    """A collection or repository holds at most 100 grants: the 101st is a 409, which clients
    generated from the OpenAPI document must know of."""
    alice = auth["alice"]
    collection = await create_collection(gateway, alice, "Granted", "private")
    url = f"/api/md-collections/{collection['id']}/grants"
    for number in range(100):
        assert (await gateway.post(url, json={"group": f"g{number}"}, headers=alice)).status_code == 201
    assert (
        "at most 100 group grants"
        in is_problem(await gateway.post(url, json={"group": "one-too-many"}, headers=alice), 409)["detail"]
    )
    paths = (await gateway.get("/api/schema/openapi.json")).json()["paths"]
    for grants in ("/api/md-collections/{collection_id}/grants", "/api/repos/{host}/{owner}/{name}/grants"):
        assert "409" in paths[grants]["post"]["responses"], grants
