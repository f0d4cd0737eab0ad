"""Each link from a docs chunk to a symbol says why it points there, through the real gRPC server:
an explicit reference to its stated target, a name the document imports, the only public
definition of a name, the definition nearest the document; a reference is the most deliberate
mention, listed first. A docs page says, for each symbol it links to, which of its mentions does
and why."""

from __future__ import annotations

from pathlib import Path

from integration.repodocs.helpers import ACME_GUIDE, ACME_PACKAGE, GitRepo, Running

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph_db import connect

FILES = {
    **ACME_PACKAGE,
    "docs/reference.md": "# Reference\n\nEvery input is a [`Field`][acme.fields.Field].\n",
    "docs/usage.md": (
        "# Usage\n\n```python\nfrom acme import Field\n```\n\nDeclare each input as a `Field`.\n"
    ),
    "docs/helpers.md": "# Helpers\n\n`describe_field` prints a field for a log line.\n",
    # Two services define the same name: each one's README means its own.
    "services/orders/limits.py": "ORDER_LIMIT_SECONDS = 30\n",
    "services/billing/limits.py": "ORDER_LIMIT_SECONDS = 60\n",
    "services/orders/README.md": "# Orders\n\nAn order waits `ORDER_LIMIT_SECONDS` for payment.\n",
}


async def test_each_link_carries_its_reason_and_references_come_first(
    service: Running, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", FILES)
    repository = await service.register("reasons", clone_url=str(origin.root))
    sync = await service.sync(repository.id)
    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error

    nodes = await service.stub.SearchCode(
        pb.SearchCodeRequest(
            repository_ids=[repository.id],
            query="Field describe_field",
            limit=10,
            text_weight=1,
            symbol_weight=1,
        )
    )
    by_name = {hit.node.qualified_name: hit.node.id for hit in nodes.hits}
    field, describe = by_name["acme.fields.Field"], by_name["acme.fields.describe_field"]
    related = await service.stub.GetRelatedDocChunks(
        pb.GetRelatedDocChunksRequest(repository_ids=[repository.id], code_node_ids=[field, describe])
    )
    links = {
        entry.code_node_id: [(c.chunk.path, c.form, c.reason) for c in entry.chunks]
        for entry in related.related
    }
    assert links[field] == [
        ("docs/reference.md", pb.MENTION_FORM_REFERENCE, pb.MENTION_REASON_EXPLICIT_TARGET),
        ("docs/usage.md", pb.MENTION_FORM_BACKTICK, pb.MENTION_REASON_DOCUMENT_IMPORT),
    ]
    assert links[describe] == [
        ("docs/helpers.md", pb.MENTION_FORM_BACKTICK, pb.MENTION_REASON_UNIQUE_PUBLIC),
    ]

    limits = await service.stub.SearchCode(
        pb.SearchCodeRequest(
            repository_ids=[repository.id], query="ORDER_LIMIT_SECONDS", limit=10, symbol_weight=1
        )
    )
    by_path = {hit.node.path: hit.node.id for hit in limits.hits}
    cited = await citations(service, repository.id, list(by_path.values()))
    assert cited[by_path["services/orders/limits.py"]] == [
        ("services/orders/README.md", pb.MENTION_REASON_NEAREST_DEFINITION)
    ]
    assert cited[by_path["services/billing/limits.py"]] == []


async def citations(
    service: Running, repository_id: str, node_ids: list[str]
) -> dict[str, list[tuple[str, pb.MentionReason]]]:
    """Each node's citing chunks, as (document path, reason), in the order repodocs lists them."""
    related = await service.stub.GetRelatedDocChunks(
        pb.GetRelatedDocChunksRequest(repository_ids=[repository_id], code_node_ids=node_ids)
    )
    return {entry.code_node_id: [(c.chunk.path, c.reason) for c in entry.chunks] for entry in related.related}


# Go and TypeScript name their public API their own way: an index module re-exports a package's
# classes; a Go name is exported when capitalised, and `internal/` and `_test.go` are not the API.
API_FILES = {
    "web/src/ui/grid.ts": "export class DataGrid {\n  render(): void {}\n}\n",
    "web/src/ui/index.ts": "export { DataGrid } from './grid';\n",
    "web/README.md": "# Web\n\nEvery table on the site is a `ui.DataGrid`.\n",
    "store/store.go": "package store\n\nfunc Open(path string) error { return nil }\n",
    "internal/db/db.go": "package db\n\nfunc Open(path string) error { return nil }\n",
    "store/store_test.go": "package store_test\n\nfunc Open(path string) error { return nil }\n",
    "docs/storage.md": "# Storage\n\n`Open` a store before the first write.\n",
}


async def test_go_and_typescript_mentions_resolve_to_the_public_api(service: Running, tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", API_FILES)
    repository = await service.register("api", clone_url=str(origin.root))
    sync = await service.sync(repository.id)
    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error

    hits = await service.stub.SearchCode(
        pb.SearchCodeRequest(repository_ids=[repository.id], query="Open DataGrid", limit=20, symbol_weight=1)
    )
    by_path = {(hit.node.path, hit.node.name): hit.node.id for hit in hits.hits}
    cited = await citations(service, repository.id, list(by_path.values()))
    assert cited[by_path["web/src/ui/grid.ts", "DataGrid"]] == [
        ("web/README.md", pb.MENTION_REASON_QUALIFIED_NAME)
    ]
    assert cited[by_path["store/store.go", "Open"]] == [("docs/storage.md", pb.MENTION_REASON_UNIQUE_PUBLIC)]
    assert cited[by_path["internal/db/db.go", "Open"]] == []
    assert cited[by_path["store/store_test.go", "Open"]] == []


async def test_a_docs_page_says_how_it_mentions_each_symbol_and_why(
    service: Running, database: str, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("first", {**FILES, "docs/guide.md": ACME_GUIDE})
    repository = await service.register("page-reasons", clone_url=str(origin.root))
    sync = await service.sync(repository.id)
    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error

    async def page() -> pb.GetDocsPageResponse:
        request = pb.GetDocsPageRequest(repository_id=repository.id, slug="guide")
        return await service.stub.GetDocsPage(request)

    shown = await page()
    # related_code stays as old clients read it: in the order the page first mentions each node.
    assert [n.qualified_name for n in shown.related_code] == [
        "acme.fields.describe_field",
        "acme.fields.Field",
        "acme.fields.Field.validate",
    ]
    assert [m.code_node_id for m in shown.related_code_mentions] == [n.id for n in shown.related_code]
    assert [(m.mention, m.form, m.reason) for m in shown.related_code_mentions] == [
        ("describe_field", pb.MENTION_FORM_CALL, pb.MENTION_REASON_UNIQUE_PUBLIC),
        # `Field` (imported by the page's code) comes first, but the reference is more deliberate.
        ("Field", pb.MENTION_FORM_REFERENCE, pb.MENTION_REASON_EXPLICIT_TARGET),
        ("validate", pb.MENTION_FORM_BACKTICK, pb.MENTION_REASON_HEADING_CONTEXT),
    ]

    # Links stored before reasons were say so (unspecified) until their chunks are linked again.
    connection = await connect(database)
    try:
        await connection.execute("UPDATE repodocs.repo_document_chunk_mentions SET reason = NULL")
    finally:
        await connection.close()
    before = await page()
    assert [n.id for n in before.related_code] == [n.id for n in shown.related_code]
    assert {m.reason for m in before.related_code_mentions} == {pb.MENTION_REASON_UNSPECIFIED}
    assert (await service.sync(repository.id, force_relink=True)).status == pb.SYNC_STATUS_SUCCESS
    assert list((await page()).related_code_mentions) == list(shown.related_code_mentions)
