"""GET /api/repos/{slug}/docs/{page}: each code node the page links to comes with the page's mention
of it and why that mention points there, as the OpenAPI document states, through the real services."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import jsonschema
from e2e.gateway.test_collections_api import Auth
from integration.repodocs.helpers import ACME_GUIDE, ACME_PACKAGE, GitRepo

REPO = "/api/repos/example.com/acme/fields"
FILES = {**ACME_PACKAGE, "docs/guide.md": ACME_GUIDE}


def _checkout(root: Path) -> Path:
    GitRepo(root).commit("init", FILES)
    return root


async def test_a_docs_page_names_each_mention_and_its_reason(
    gateway: httpx.AsyncClient, auth: Auth, tmp_path: Path
) -> None:
    admin = auth["admin"]
    body = {
        "host": "example.com",
        "owner": "acme",
        "name": "fields",
        "checkout_path": str(_checkout(tmp_path / "fields")),
        "visibility": "private",
    }
    registered = await gateway.post("/api/repos", json=body, headers=admin)
    assert registered.status_code == 201, registered.text
    synced = await gateway.post(f"{REPO}/sync", params={"wait": "true"}, headers=admin, timeout=300)
    assert synced.status_code == 200, synced.text
    assert synced.json()["status"] == "success", synced.text

    answer = await gateway.get(f"{REPO}/docs/guide", headers=admin)
    assert answer.status_code == 200, answer.text
    page = answer.json()
    # related_code is as it was; related_code_mentions follows it, node for node.
    assert [n["qualified_name"] for n in page["related_code"]] == [
        "acme.fields.describe_field",
        "acme.fields.Field",
        "acme.fields.Field.validate",
    ]
    assert [m["node_id"] for m in page["related_code_mentions"]] == [n["id"] for n in page["related_code"]]
    assert [(m["mention"], m["form"], m["reason"]) for m in page["related_code_mentions"]] == [
        ("describe_field", "call", "unique_public"),
        ("Field", "reference", "explicit_target"),  # the reference, not the earlier `Field`
        ("validate", "backtick", "heading_context"),
    ]

    # The served OpenAPI document describes that answer, reasons by name.
    document: dict[str, Any] = (await gateway.get("/api/schema/openapi.json")).json()
    schemas = document["components"]["schemas"]
    validator = jsonschema.Draft202012Validator(
        {"$ref": "#/components/schemas/DocsPage", "components": document["components"]}
    )
    assert not list(validator.iter_errors(page))
    mention = schemas["PageMention"]
    assert set(mention["required"]) == {"node_id", "mention", "form", "reason"}
    reason = mention["properties"]["reason"]
    assert {"explicit_target", "unique_public", "heading_context", ""} <= set(reason["enum"])
    assert "Why the mention links" in reason["description"]
    bad = {**page["related_code_mentions"][0], "reason": "a guess"}
    assert not jsonschema.Draft202012Validator(
        {"$ref": "#/components/schemas/PageMention", "components": document["components"]}
    ).is_valid(bad)
