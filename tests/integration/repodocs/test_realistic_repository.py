"""One realistic repository, registered by checkout path: docs and code in the four languages, a
workflow, examples, tests, configs and a node_modules to leave out. Everything a reader and an
agent ask of it, through the real gRPC server, the real database and the real model."""

from __future__ import annotations

import uuid
from pathlib import Path

import asyncpg
import grpc
import pytest
from grpc import aio
from integration.repodocs.helpers import GitRepo, Running, counters

from cograph.repodocs.v1 import repodocs_service_pb2 as pb

FILES = {
    "README.md": (
        "# Acme Shop\n\n"
        "Acme Shop serves a catalogue over HTTP. Start it with `app.server.serve` and\n"
        "configure it through `load_settings`.\n\n"
        "## Layout\n\n"
        "- `cmd/api` holds the Go entry point; `internal.store.Store` keeps the data.\n"
        "- The web client calls fetchProducts() from `web/src/client.ts`.\n"
    ),
    "docs/index.md": "# Documentation\n\nStart with the [install guide](guide/install.md).\n",
    "docs/guide/install.md": (
        "# Install\n\n## Requirements\n\nGo 1.22 and Python 3.11.\n\n"
        "## Steps\n\nRun `make build`, then call `load_settings` to check the configuration.\n"
    ),
    "docs/guide/usage.md": "# Usage\n\nCall `Store.Get` to read a product and `ProductCard` to render it.\n",
    "docs/architecture.rst": (
        "Architecture\n============\n\n"
        "The API server\n--------------\n\nRequests reach ``app.server.serve`` first.\n"
    ),
    ".github/workflows/ci.yml": (
        "name: ci\non: [push]\njobs:\n  test:\n"
        "    runs-on: ubuntu-latest\n    steps:\n      - run: make test\n"
    ),
    "examples/README.md": "# Examples\n\nSmall programs that use the shop.\n",
    "examples/quickstart.py": (
        "from app.settings import load_settings\n\n\ndef main():\n    print(load_settings())\n"
    ),
    "tests/test_server.py": "def test_serve():\n    assert True\n",
    "Dockerfile": 'FROM python:3.11\nCOPY . /app\nCMD ["python", "-m", "app.server"]\n',
    "deploy/values.yaml": "replicas: 2\nimage: acme/shop\n",
    "package.json": '{"name": "web", "private": true}\n',
    "node_modules/left-pad/README.md": "# left-pad\n\nVendored: never indexed.\n",
    "node_modules/left-pad/index.js": "export function leftPad(s) {\n  return s\n}\n",
    "src/app/server.py": (
        "def serve(port: int = 8080) -> None:\n"
        '    """Serve the catalogue."""\n\n\n'
        "class Handler:\n"
        "    def dispatch(self, request):\n"
        "        return request\n"
    ),
    "src/app/settings.py": "def load_settings():\n    return {}\n",
    "cmd/api/main.go": "package main\n\nfunc main() {}\n",
    "internal/store/store.go": (
        "package store\n\n// Store keeps products.\ntype Store struct{}\n\n"
        "func (s *Store) Get(id string) string {\n\treturn id\n}\n"
    ),
    "web/src/client.ts": "export async function fetchProducts(): Promise<string[]> {\n  return []\n}\n",
    "web/src/ProductCard.js": "export function ProductCard(props) {\n  return props.name\n}\n",
}

KINDS = {
    "README.md": pb.DOCUMENT_KIND_REPO_DOC,
    "docs/index.md": pb.DOCUMENT_KIND_REPO_DOC,
    "docs/guide/install.md": pb.DOCUMENT_KIND_REPO_DOC,
    "docs/guide/usage.md": pb.DOCUMENT_KIND_REPO_DOC,
    "docs/architecture.rst": pb.DOCUMENT_KIND_REPO_DOC,
    "examples/README.md": pb.DOCUMENT_KIND_REPO_DOC,
    ".github/workflows/ci.yml": pb.DOCUMENT_KIND_WORKFLOW,
    "examples/quickstart.py": pb.DOCUMENT_KIND_EXAMPLE,
    "tests/test_server.py": pb.DOCUMENT_KIND_TEST,
    "Dockerfile": pb.DOCUMENT_KIND_CONFIG,
    "deploy/values.yaml": pb.DOCUMENT_KIND_CONFIG,
    "package.json": pb.DOCUMENT_KIND_CONFIG,
}
SLUGS = {
    "README.md": "readme",
    "docs/index.md": "index",
    "docs/guide/install.md": "guide-install",
    "docs/guide/usage.md": "guide-usage",
    "docs/architecture.rst": "architecture",
    "examples/README.md": "examples-readme",
    ".github/workflows/ci.yml": "-github-workflows-ci-yml",
    "examples/quickstart.py": "examples-quickstart-py",
    "tests/test_server.py": "tests-test-server-py",
    "Dockerfile": "dockerfile",
    "deploy/values.yaml": "deploy-values-yaml",
    "package.json": "package-json",
}
CODE_NODES = {
    # A Python file is a symbol of its own, a module named by its import path.
    "app.server",
    "app.settings",
    "examples.quickstart",
    "tests.test_server",
    "app.server.serve",
    "app.server.Handler",
    "app.server.Handler.dispatch",
    "app.settings.load_settings",
    "cmd.api.main.main",
    "internal.store.Store",
    "internal.store.Store.Get",
    "client.fetchProducts",
    "ProductCard.ProductCard",
    "examples.quickstart.main",
    "tests.test_server.test_serve",
}


def tree(nodes: list[pb.DocsTreeNode]) -> list[object]:
    return [(n.title, n.slug, tree(list(n.children))) if n.children else (n.title, n.slug) for n in nodes]


def link(page_link: pb.PageLink) -> str:
    return page_link.slug


async def test_a_realistic_repository_end_to_end(service: Running, tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "shop")
    head = repo.commit("shop", FILES)
    # A symlink that leads out of the checkout: never parsed, never readable.
    (tmp_path / "secret.py").write_text("TOKEN = 'do not read'\n")
    (repo.root / "src/app/leak.py").symlink_to(tmp_path / "secret.py")
    registered = await service.register("shop", checkout_path=str(repo.root), visibility=pb.VISIBILITY_PUBLIC)
    rid = registered.id
    assert registered.checkout_path == str(repo.root)

    sync = await service.sync(rid)
    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error
    assert sync.commit_sha == head
    documents = await service.documents(rid)
    chunks = sum(d.chunk_count for d in documents.values())
    assert counters(sync) == (12, 12, chunks, 0, 0, 0)
    assert {path: d.kind for path, d in documents.items()} == KINDS
    assert {path: d.slug for path, d in documents.items()} == SLUGS
    assert documents["docs/guide/install.md"].title == "Install"
    assert documents["docs/architecture.rst"].title == "Architecture"
    assert documents["Dockerfile"].title == "Dockerfile"
    assert [(s.path, s.reason) for s in sync.skipped] == [
        ("src/app/leak.py", "not parsed for symbols: a symlink")
    ]

    # Kind filter and pages.
    configs = await service.stub.ListDocuments(
        pb.ListDocumentsRequest(repository_id=rid, kinds=[pb.DOCUMENT_KIND_CONFIG])
    )
    assert [d.path for d in configs.documents] == ["Dockerfile", "deploy/values.yaml", "package.json"]
    paths: list[str] = []
    token = ""
    while True:
        page = await service.stub.ListDocuments(
            pb.ListDocumentsRequest(repository_id=rid, page=pb.Page(page_size=5, page_token=token))
        )
        paths += [d.path for d in page.documents]
        token = page.next_page_token
        if not token:
            break
    assert paths == sorted(KINDS)

    # The reader's tree: prose only, a directory's index/README is its page.
    roots = (await service.stub.GetDocsTree(pb.GetDocsTreeRequest(repository_id=rid))).roots
    assert tree(list(roots)) == [
        ("Acme Shop", "readme"),
        (
            "Documentation",
            "index",
            [
                ("Architecture", "architecture"),
                ("guide", "", [("Install", "guide-install"), ("Usage", "guide-usage")]),
            ],
        ),
        ("Examples", "examples-readme"),
    ]
    # The root README is a page leaf like any other: its own path, not the root's empty one.
    assert [(n.path, n.slug) for n in roots] == [
        ("README.md", "readme"),
        ("docs", "index"),
        ("examples", "examples-readme"),
    ]
    install = await service.stub.GetDocsPage(pb.GetDocsPageRequest(repository_id=rid, slug="guide-install"))
    assert install.document.summary.path == "docs/guide/install.md"
    assert install.document.content == FILES["docs/guide/install.md"]
    assert [(t.level, t.text, t.anchor) for t in install.toc] == [
        (2, "Requirements", "requirements"),
        (2, "Steps", "steps"),
    ]
    assert [link(s) for s in install.siblings] == ["guide-usage"]
    assert (link(install.previous), link(install.next)) == ("architecture", "guide-usage")
    assert [n.qualified_name for n in install.related_code] == ["app.settings.load_settings"]
    readme = await service.stub.GetDocsPage(pb.GetDocsPageRequest(repository_id=rid, slug="readme"))
    assert not readme.HasField("previous")
    assert link(readme.next) == "index"
    assert [n.qualified_name for n in readme.related_code] == [  # in the order the page names them
        "app.server.serve",
        "app.settings.load_settings",
        "internal.store.Store",
        "client.fetchProducts",
    ]
    serve = readme.related_code[0]
    assert (serve.path, serve.start_line, serve.end_line) == ("src/app/server.py", 1, 2)
    assert (serve.kind, serve.language) == (pb.CODE_NODE_KIND_FUNCTION, pb.LANGUAGE_PYTHON)
    assert serve.signature == "def serve(port: int = 8080) -> None:"
    # Any document opens as a page; outside the tree it has no navigation.
    docker = await service.stub.GetDocsPage(pb.GetDocsPageRequest(repository_id=rid, slug="dockerfile"))
    assert docker.document.summary.kind == pb.DOCUMENT_KIND_CONFIG
    assert not docker.siblings
    assert not docker.HasField("next")

    # Code symbols of the four languages, vendored code left out.
    assert sync.code_nodes == len(CODE_NODES)
    dsn = service.settings.database.dsn
    connection = await asyncpg.connect(dsn)
    try:
        names = {
            r["qualified_name"]
            for r in await connection.fetch("SELECT qualified_name FROM repodocs.code_nodes")
        }
        languages = {
            r["language"] for r in await connection.fetch("SELECT language FROM repodocs.code_nodes")
        }
        # Every chunk and every definition carries its vector with the model and dimension that
        # made it; modules, variables and attributes, there for docs to link to, carry none.
        not_embedded = "embedding IS NULL OR embedding_model <> 'all-MiniLM-L6-v2' OR embedding_dim <> 384"
        members = "kind IN ('module', 'variable', 'attribute')"
        unembedded = await connection.fetchval(
            f"SELECT (SELECT count(*) FROM repodocs.repo_document_chunks WHERE {not_embedded})"
            f"     + (SELECT count(*) FROM repodocs.code_nodes WHERE NOT {members} AND ({not_embedded}))"
        )
        member_vectors = await connection.fetchval(
            f"SELECT count(embedding) FROM repodocs.code_nodes WHERE {members}"
        )
        dims = await connection.fetchval(
            "SELECT vector_dims(embedding) FROM repodocs.code_nodes WHERE embedding IS NOT NULL LIMIT 1"
        )
    finally:
        await connection.close()
    assert names == CODE_NODES
    assert languages == {"python", "go", "typescript", "javascript"}
    assert unembedded == 0
    assert member_vectors == 0
    assert dims == 384
    # README 4, install 1, usage 2, architecture 1, the example's load_settings() and main() (its
    # own main: a name defined in the document's own file wins over cmd/api's), the test's test_serve(),
    # and the modules the Dockerfile runs (`-m app.server`) and the example imports (app.settings).
    assert sync.mentions == 13

    # Related doc chunks per code node: prose first, heading-anchored, limited, scoped.
    serve_id = serve.id
    load_id = readme.related_code[1].id
    related = await service.stub.GetRelatedDocChunks(
        pb.GetRelatedDocChunksRequest(repository_ids=[rid], code_node_ids=[serve_id, load_id])
    )
    by_node = {r.code_node_id: list(r.chunks) for r in related.related}
    assert [(c.chunk.slug, c.chunk.heading_anchor, c.form) for c in by_node[serve_id]] == [
        ("readme", "acme-shop", pb.MENTION_FORM_BACKTICK),
        ("architecture", "the-api-server", pb.MENTION_FORM_BACKTICK),
    ]
    assert [(c.chunk.path, c.form) for c in by_node[load_id]] == [
        ("README.md", pb.MENTION_FORM_BACKTICK),
        ("docs/guide/install.md", pb.MENTION_FORM_BACKTICK),
        ("examples/quickstart.py", pb.MENTION_FORM_CALL),
    ]
    first = by_node[serve_id][0]
    assert first.document_title == "Acme Shop"
    assert first.chunk.heading_path == ["Acme Shop"]
    assert first.chunk.embedding_model == "all-MiniLM-L6-v2"
    one = await service.stub.GetRelatedDocChunks(
        pb.GetRelatedDocChunksRequest(repository_ids=[rid], code_node_ids=[load_id], limit=1)
    )
    assert [c.chunk.path for c in one.related[0].chunks] == ["README.md"]
    outside = await service.stub.GetRelatedDocChunks(
        pb.GetRelatedDocChunksRequest(repository_ids=[], code_node_ids=[serve_id])
    )
    assert list(outside.related) == []  # a node outside the scope is not there at all
    unknown = str(uuid.uuid4())
    mixed = await service.stub.GetRelatedDocChunks(
        pb.GetRelatedDocChunksRequest(repository_ids=[rid], code_node_ids=[unknown, load_id])
    )
    assert [r.code_node_id for r in mixed.related] == [load_id]
    chunk = await service.stub.GetChunk(pb.GetChunkRequest(repository_id=rid, chunk_id=first.chunk.id))
    assert chunk.chunk == first.chunk
    document = await service.stub.GetDocument(
        pb.GetDocumentRequest(repository_id=rid, document_id=documents["README.md"].id)
    )
    assert document.document.content == FILES["README.md"]

    await _read_file_ranges(service, rid, head)


async def _read_file_ranges(service: Running, rid: str, head: str) -> None:
    def read(path: str, start: int = 0, end: int = 0) -> pb.ReadFileRangeRequest:
        return pb.ReadFileRangeRequest(repository_id=rid, path=path, start_line=start, end_line=end)

    lines = await service.stub.ReadFileRange(read("src/app/server.py", 1, 2))
    assert lines.content == 'def serve(port: int = 8080) -> None:\n    """Serve the catalogue."""\n'
    assert (lines.start_line, lines.end_line, lines.total_lines) == (1, 2, 7)
    assert (lines.language, lines.commit_sha) == (pb.LANGUAGE_PYTHON, head)
    whole = await service.stub.ReadFileRange(read("internal/store/store.go", 0, 100))
    assert whole.content == FILES["internal/store/store.go"]
    assert (whole.start_line, whole.end_line, whole.language) == (1, 8, pb.LANGUAGE_GO)
    tsx = await service.stub.ReadFileRange(read("web/src/client.ts", 2, 0))
    assert (tsx.content, tsx.language) == ("  return []\n}\n", pb.LANGUAGE_TYPESCRIPT)

    refused = {
        "README.md": (grpc.StatusCode.INVALID_ARGUMENT, "only Python, Go, TypeScript and JavaScript"),
        "deploy/values.yaml": (
            grpc.StatusCode.INVALID_ARGUMENT,
            "only Python, Go, TypeScript and JavaScript",
        ),
        "../secret.py": (grpc.StatusCode.INVALID_ARGUMENT, "'..' is not allowed"),
        "src/../../secret.py": (grpc.StatusCode.INVALID_ARGUMENT, "'..' is not allowed"),
        str(Path(service.settings.repodocs.checkout_dir).parent / "secret.py"): (
            grpc.StatusCode.INVALID_ARGUMENT,
            "is absolute",
        ),
        "src/app/leak.py": (grpc.StatusCode.INVALID_ARGUMENT, "symlink to a file outside the checkout"),
        "src/app/missing.py": (grpc.StatusCode.NOT_FOUND, "does not exist"),
        "src/app": (grpc.StatusCode.INVALID_ARGUMENT, "only Python"),
    }
    for path, (code, message) in refused.items():
        with pytest.raises(aio.AioRpcError) as error:
            await service.stub.ReadFileRange(read(path))
        assert (error.value.code(), message in (error.value.details() or "")) == (code, True), path
    for start, end, message in ((5, 3, "is after end_line"), (50, 0, "past the end"), (-1, 0, "1-based")):
        with pytest.raises(aio.AioRpcError) as error:
            await service.stub.ReadFileRange(read("src/app/server.py", start, end))
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert message in (error.value.details() or "")


CONFIGS = {
    "README.md": "# Acme Shop\n\nDeployed with the manifests under deploy/.\n",
    "Dockerfile": (
        "# syntax=docker/dockerfile:1\n#\n# Build for <release-name> with `uv`\n#\n"
        "FROM python:3.11\nRUN pip install uv\n"
    ),
    "deploy/k8s/gateway.yaml": (
        "---\n# The gateway\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gateway\n"
        "spec:\n  revisionHistoryLimit: 3\n  strategy:\n    type: RollingUpdate\n"
        "    rollingUpdate: {maxSurge: 1}\n  template:\n    spec:\n      containers:\n"
        "        - name: gateway\n          # its image\n          image: acme/gateway\n"
        "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: gateway\n"
        "---\n# Who may call it\nkind: NetworkPolicy\n"
    ),
}


async def test_config_files_are_cut_at_their_comment_lines_not_read_as_markdown(
    service: Running, tmp_path: Path
) -> None:
    """A multi-document YAML file and a Dockerfile through a real sync: the `---` between YAML
    documents makes no heading of the object above it (a citation used to hold the whole
    Deployment), a leading `---` is no front matter, and a comment is taken as written."""
    repo = GitRepo(tmp_path / "shop")
    repo.commit("shop", CONFIGS)
    rid = (await service.register("shop", checkout_path=str(repo.root))).id
    sync = await service.sync(rid)
    assert sync.status == pb.SYNC_STATUS_SUCCESS, sync.error
    documents = await service.documents(rid)
    assert documents["deploy/k8s/gateway.yaml"].title == "The gateway"
    assert documents["Dockerfile"].title == "syntax=docker/dockerfile:1"

    connection = await asyncpg.connect(service.settings.database.dsn)
    try:
        rows = await connection.fetch(
            "SELECT d.path, k.heading_path, k.heading_anchor FROM repodocs.repo_document_chunks k"
            " JOIN repodocs.repo_documents d ON d.id = k.document_id"
            " WHERE d.path <> 'README.md' ORDER BY d.path, k.chunk_index"
        )
    finally:
        await connection.close()
    assert [tuple(row) for row in rows] == [
        ("Dockerfile", ["syntax=docker/dockerfile:1"], "syntaxdockerdockerfile1"),
        ("Dockerfile", ["Build for <release-name> with `uv`"], "build-for-release-name-with-uv"),
        ("deploy/k8s/gateway.yaml", [], ""),  # the leading `---`, before any heading
        ("deploy/k8s/gateway.yaml", ["The gateway"], "the-gateway"),
        ("deploy/k8s/gateway.yaml", ["Who may call it"], "who-may-call-it"),
    ]
    page = await service.stub.GetDocsPage(
        pb.GetDocsPageRequest(repository_id=rid, slug="deploy-k8s-gateway-yaml")
    )
    assert [(t.level, t.text, t.anchor) for t in page.toc] == [(1, "Who may call it", "who-may-call-it")]
