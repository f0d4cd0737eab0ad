"""GET /api/repos/{slug}/docs/{page}: each code node the page links to comes with the page's mention
of it and why that mention points there, as the OpenAPI document states, through the real services."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx
import jsonschema
from e2e.gateway.test_collections_api import Auth

REPO = "/api/repos/example.com/acme/fields"
FILES = {
    "acme/__init__.py": 'from acme.fields import Field\n\n__all__ = ["Field"]\n',
    "acme/fields.py": (
        "class Field:\n    def validate(self, value):\n        return value\n\n\n"
        "def describe_field(field):\n    return repr(field)\n"
    ),
    "docs/guide.md": (
        "# Guide\n\n```python\nfrom acme import Field\n```\n\n"
        "Log one with describe_field(). Declare each input as a `Field`; the reference says more "
        "about [`Field`][acme.fields.Field].\n\n"
        "## Field\n\nEach `Field` checks its input: call `validate()` before saving.\n"
    ),
}


def _checkout(root: Path) -> Path:
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
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
