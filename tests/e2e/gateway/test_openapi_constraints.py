"""The OpenAPI document states what the server refuses, so a client generated from it knows.

The probe (issue 31, item 7) found requests the server refuses that the document called valid: a
blank query, control characters in names, groups and keys, a PATCH that changes nothing, a
repository with neither clone_url nor checkout_path. Each case here is judged twice: by the served
document's own schema (JSON Schema 2020-12, as OpenAPI 3.1 uses it) and by the server, which must
still answer in its own words, not a schema's.
"""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema
import pytest
from e2e.gateway.helpers import create_collection, is_problem
from e2e.gateway.test_collections_api import Auth

Document = dict[str, Any]


@pytest.fixture
async def document(gateway: httpx.AsyncClient) -> Document:
    answer = await gateway.get("/api/schema/openapi.json")
    assert answer.status_code == 200
    return dict(answer.json())


def valid(document: Document, component: str, body: Any) -> bool:
    """Whether `body` is what the document's schema `component` allows."""
    schema = {"$ref": f"#/components/schemas/{component}", "components": document["components"]}
    return bool(jsonschema.Draft202012Validator(schema).is_valid(body))


async def test_the_document_refuses_what_the_server_refuses_in_its_own_words(
    gateway: httpx.AsyncClient, auth: Auth, document: Document
) -> None:
    admin = auth["admin"]
    collection = (await create_collection(gateway, admin, "Stated"))["id"]
    repo = {"host": "example.org", "owner": "team", "name": "stated"}
    # (schema, method, path, body, what the server answers); each body is refused.
    refused: list[tuple[str, str, str, dict[str, Any], str]] = [
        ("SearchRequest", "POST", "/api/search/route", {"query": " \t "}, "the query is empty"),
        (
            "SearchRequest",
            "POST",
            f"/api/md-collections/{collection}/search",
            {"query": "a\x01b"},
            "the query contains a control character (U+0001): remove it",
        ),
        (
            "CollectionCreate",
            "POST",
            "/api/md-collections",
            {"name": "a\x01"},
            "the collection name contains a control character (U+0001): remove it",
        ),
        ("CollectionCreate", "POST", "/api/md-collections", {"name": "   "}, "a collection needs a name"),
        (
            "CollectionCreate",
            "POST",
            "/api/md-collections",
            {"name": "Bell", "description": "ding\x07"},
            "the description contains a control character (U+0007): remove it",
        ),
        (
            "GrantCreate",
            "POST",
            f"/api/md-collections/{collection}/grants",
            {"group": "g\x01"},
            "the group name contains a control character (U+0001): remove it",
        ),
        *[
            (
                "CollectionUpdate",
                "PATCH",
                f"/api/md-collections/{collection}",
                body,
                "nothing to change: give at least one of name, description and visibility",
            )
            for body in ({}, {"name": None}, {"description": None, "visibility": None})
        ],
        *[
            (
                "RepositoryCreate",
                "POST",
                "/api/repos",
                body,
                "give exactly one of clone_url and checkout_path",
            )
            for body in (repo, {**repo, "clone_url": "https://example.org/x.git", "checkout_path": "/srv/x"})
        ],
        (
            "RepositoryCreate",
            "POST",
            "/api/repos",
            {**repo, "checkout_path": "/srv/\x01x"},
            "checkout_path contains a control character: no checkout's path does",
        ),
    ]
    for component, method, path, body, says in refused:
        assert not valid(document, component, body), (component, body)
        answer = await gateway.request(method, path, json=body, headers=admin)
        assert is_problem(answer, 400)["detail"] == says, (path, body)

    # A group named in a path, as in a body.
    path = "/api/md-collections/{collection_id}/grants/{group}"
    (group,) = [p for p in document["paths"][path]["delete"]["parameters"] if p["name"] == "group"]
    assert not jsonschema.Draft202012Validator(group["schema"]).is_valid("g\x01")
    assert jsonschema.Draft202012Validator(group["schema"]).is_valid("/eng/back end")
    withdrawn = await gateway.delete(f"/api/md-collections/{collection}/grants/g%01", headers=admin)
    assert (
        is_problem(withdrawn, 400)["detail"]
        == "the group name contains a control character (U+0001): remove it"
    )

    # A source key with a control character: the document refuses it; the server refuses that
    # document (in a batch, in its result; alone, as a 422), in its own words too.
    bad_key = {"source_key": "a\x01.md", "content": "# A\n"}
    assert not valid(document, "BatchUpload", {"documents": [bad_key]})
    batch = await gateway.post(
        f"/api/md-collections/{collection}/documents/batch", json={"documents": [bad_key]}, headers=admin
    )
    assert batch.status_code == 201, batch.text
    assert batch.json()["results"][0]["error"] == {
        "reason": "invalid_source_key",
        "message": "source key contains a NUL or control character",
    }
    one = await gateway.post(f"/api/md-collections/{collection}/documents", json=bad_key, headers=admin)
    assert is_problem(one, 422)["reason"] == "invalid_source_key"


async def test_what_the_server_takes_the_document_allows(
    gateway: httpx.AsyncClient, auth: Auth, document: Document
) -> None:
    """The stated constraints are no stricter than the server: tabs, newlines and any script pass."""
    admin = auth["admin"]
    taken: list[tuple[str, str, str, dict[str, Any]]] = [
        ("CollectionCreate", "POST", "/api/md-collections", {"name": " Notes\tété ", "description": "a\nb"}),
        ("SearchRequest", "POST", "/api/search/route", {"query": "how\tdo I\npage", "limit": 3}),
    ]
    for component, method, path, body in taken:
        assert valid(document, component, body), (component, body)
        answer = await gateway.request(method, path, json=body, headers=admin)
        assert answer.status_code in (200, 201), answer.text
    collection = (await create_collection(gateway, admin, "Taken"))["id"]
    for body in ({"name": "Renamed"}, {"description": ""}, {"visibility": "public", "name": None}):
        assert valid(document, "CollectionUpdate", body), body
        answer = await gateway.patch(f"/api/md-collections/{collection}", json=body, headers=admin)
        assert answer.status_code == 200, answer.text
    for source in (
        {"clone_url": "https://example.org/team/x.git"},
        {"checkout_path": "/srv/x", "clone_url": None},
    ):
        assert valid(
            document, "RepositoryCreate", {"host": "example.org", "owner": "team", "name": "x", **source}
        )
