"""The MCP tools coding agents call: thin adapters over the gateway's operations.

Each tool reads its arguments, names the policy entry it serves, calls the operation that REST calls
too (which authorizes, calls the backends and shapes the result), and projects the result for agents.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from grpc import aio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from cograph_errors import DEFAULT_RELATED_LIMIT, MAX_RELATED_LIMIT
from cograph_gateway import schemas as s
from cograph_gateway.access import Access, RepositoryName, parse_id
from cograph_gateway.backends import Backends
from cograph_gateway.errors import Problem, grpc_status
from cograph_gateway.identity import Principal
from cograph_gateway.mcp import results as r
from cograph_gateway.operations import Operations
from cograph_gateway.operations.paging import PageRequest
from cograph_gateway.policy import Operation
from cograph_gateway.routes.common import MAX_PAGE_TOKEN

PRINCIPAL_KEY = "cograph.principal"

INSTRUCTIONS = """\
Cograph retrieves documentation next to code. Code answers *how*; collections answer *what* and *why*.
Start with cograph_route when you do not know where an answer lives: it searches code, repository
docs and markdown collections at once, each in its own pool. Then narrow down: cograph_retrieve
(one repository, mode "code" or "wiki"), cograph_collection_search (one collection), and read in
full with cograph_read_chunk, cograph_collection_document or cograph_read_file_range.
Every result carries a `citation`; quote it when you use the text. You only ever see what your
token may read.
"""

# The SDK injects the request context into the parameter annotated with it.
Ctx = Context[Any, Any]
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)

# The search service judges the query's length and the limit against its settings, and applies
# its default limit when none is given: bounds stated here would be wrong once those change.
QueryArg = Annotated[
    str,
    Field(
        min_length=1,
        description="What you are looking for, in words (at most the configured length, 2000 "
        "characters by default).",
    ),
]
LimitArg = Annotated[
    int | None,
    Field(
        ge=1,
        strict=True,
        description="Most results to answer, per pool for routing (at most the configured maximum, "
        "100 by default). Omitted: the configured default (10 unless changed).",
    ),
]
RelatedLimitArg = Annotated[
    int | None,
    Field(
        ge=1,
        strict=True,
        le=MAX_RELATED_LIMIT,
        description=f'mode "code" only: most related doc chunks per code hit (at most {MAX_RELATED_LIMIT}).'
        f" Omitted: {DEFAULT_RELATED_LIMIT}.",
    ),
]
KindsArg = Annotated[
    list[s.RepoDocKind] | None,
    Field(
        max_length=5,
        description='mode "wiki" only: search only documents of these kinds. repo_doc: markdown and '
        "reStructuredText; workflow: .github/workflows; example: example or sample files; test: test "
        "files; config: root and deploy configuration (Dockerfile, pyproject.toml, ...). Omitted: all.",
    ),
]
RepositoryArg = Annotated[
    str,
    Field(
        min_length=3,
        max_length=600,
        description="The repository as host/owner/name, e.g. github.com/acme/api.",
    ),
]
CollectionIdArg = Annotated[str, Field(min_length=1, max_length=64, description="A collection id (UUID).")]
DocumentIdArg = Annotated[str, Field(min_length=1, max_length=64, description="A document id (UUID).")]
ChunkIdArg = Annotated[str, Field(min_length=1, max_length=64, description="The chunk id from a search hit.")]


# The collections tool pages by 100: enough to choose from, small enough for an agent's context.
COLLECTIONS_PAGE_SIZE = 100

P = ParamSpec("P")
R = TypeVar("R")


class Refusal(ToolError):
    """A tool error an agent can read, with the HTTP status REST answers for the same refusal:
    in its message, and counted by it."""

    def __init__(self, detail: str, status: int) -> None:
        super().__init__(f"{detail} (HTTP {status})")
        self.status = status


def _tool_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Refusals and backend failures become tool errors an agent can read (not protocol errors)."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except Problem as refusal:
            raise Refusal(refusal.detail, refusal.status) from None
        except aio.AioRpcError as error:
            status, detail = grpc_status(error)
            raise Refusal(detail, status) from None

    return wrapper


def _principal(ctx: Ctx) -> Principal:
    request = ctx.request_context.request
    principal = getattr(request, "scope", {}).get(PRINCIPAL_KEY)
    if not isinstance(principal, Principal):  # only reachable if mounted without McpEndpoint
        raise Refusal("not authenticated", 401)
    return principal


class CographTools:
    """The tools; each calls the operation its REST twin calls, with the caller's principal."""

    def __init__(self, backends: Backends, access: Access) -> None:
        self._backends = backends
        self._access = access

    def _ops(self, ctx: Ctx) -> Operations:
        """The operations, for the caller the endpoint authenticated."""
        return Operations(self._backends, self._access, _principal(ctx))

    @_tool_errors
    async def retrieve(
        self,
        query: QueryArg,
        repository: RepositoryArg,
        ctx: Ctx,
        mode: Annotated[
            Literal["code", "wiki"],
            Field(description='"code": symbols, each with the doc chunks that discuss it; "wiki": the docs.'),
        ] = "code",
        limit: LimitArg = None,
        kinds: KindsArg = None,
        related_limit: RelatedLimitArg = None,
    ) -> r.RetrieveResult:
        found = await self._ops(ctx).search.retrieve(
            RepositoryName.parse(repository),
            query,
            mode=mode,
            limit=limit,
            kinds=kinds,
            related_limit=related_limit,
            operation=Operation.MCP_RETRIEVE,
        )
        repos = found.repositories
        return r.RetrieveResult(
            mode=mode,
            code=[r.code_hit(c, repos) for c in found.code],
            docs=[r.repo_doc(h.chunk, h.document_title, repos, h) for h in found.docs],
            failures=r.failures(found.failures),
        )

    @_tool_errors
    async def route(self, query: QueryArg, ctx: Ctx, limit: LimitArg = None) -> r.RouteResult:
        routed = await self._ops(ctx).search.route(query, limit, Operation.MCP_ROUTE)
        result, repos = routed.result, routed.repositories
        return r.RouteResult(
            pools=[r.Pool(store=p.store, confidence=p.confidence) for p in result.pools],
            code=[r.code_hit(c, repos) for c in result.code],
            repo_docs=[r.repo_doc(h.chunk, h.document_title, repos, h) for h in result.repo_docs],
            collections=[r.collection_hit(h) for h in result.collections],
            failures=r.failures(result.failures),
        )

    @_tool_errors
    async def collections(
        self,
        ctx: Ctx,
        query: Annotated[str, Field(max_length=200, description="Filter on name and description.")] = "",
        page_token: Annotated[
            str, Field(max_length=MAX_PAGE_TOKEN, description="next_page_token of the last call.")
        ] = "",
    ) -> r.CollectionList:
        page = await self._ops(ctx).collections.readable(
            query, PageRequest(COLLECTIONS_PAGE_SIZE, page_token)
        )
        return r.CollectionList(
            collections=[r.collection_info(c) for c in page.items], next_page_token=page.next_page_token
        )

    @_tool_errors
    async def collection_search(
        self, collection_id: CollectionIdArg, query: QueryArg, ctx: Ctx, limit: LimitArg = None
    ) -> r.CollectionSearchResult:
        found = await self._ops(ctx).collections.search(
            collection_id, query, limit, Operation.MCP_COLLECTION_SEARCH
        )
        return r.CollectionSearchResult(
            collection_id=parse_id(collection_id, "collection"),
            hits=[r.collection_hit(h) for h in found.hits],
            failures=r.failures(found.failures),
        )

    @_tool_errors
    async def collection_document(
        self,
        collection_id: CollectionIdArg,
        document_id: DocumentIdArg,
        ctx: Ctx,
    ) -> r.CollectionDocument:
        document = await self._ops(ctx).documents.get(
            collection_id, document_id, Operation.MCP_COLLECTION_DOCUMENT
        )
        return r.collection_document(document)

    @_tool_errors
    async def read_chunk(
        self,
        chunk_id: ChunkIdArg,
        ctx: Ctx,
        collection_id: Annotated[
            str | None, Field(max_length=64, description="The chunk's collection, for a collection chunk.")
        ] = None,
        repository: Annotated[
            str | None,
            Field(max_length=600, description="The chunk's repository (host/owner/name), for a doc chunk."),
        ] = None,
    ) -> r.ChunkText:
        ops = self._ops(ctx)
        if (collection_id is None) == (repository is None):
            raise Problem(
                400, "give exactly one of collection_id (collection chunk) and repository (doc chunk)"
            )
        chunk_id = parse_id(chunk_id, "chunk")  # judged before access, whichever the source
        if collection_id is not None:
            chunk = await ops.documents.chunk(collection_id, chunk_id, Operation.MCP_READ_COLLECTION_CHUNK)
            return r.collection_chunk(chunk)
        assert repository is not None
        found = await ops.repositories.chunk(
            RepositoryName.parse(repository), chunk_id, Operation.MCP_READ_REPOSITORY_CHUNK
        )
        return r.repository_chunk(found.repository, found.value)

    @_tool_errors
    async def read_file_range(
        self,
        repository: RepositoryArg,
        path: Annotated[
            str, Field(min_length=1, max_length=1000, description="File path inside the repository.")
        ],
        ctx: Ctx,
        start_line: Annotated[
            int, Field(ge=0, le=10_000_000, strict=True, description="First line, 1-based; 0: the first.")
        ] = 0,
        end_line: Annotated[
            int, Field(ge=0, le=10_000_000, strict=True, description="Last line, inclusive; 0: the last.")
        ] = 0,
    ) -> r.FileText:
        found = await self._ops(ctx).repositories.read_file(
            RepositoryName.parse(repository),
            path,
            start_line,
            end_line,
            Operation.MCP_READ_FILE_RANGE,
        )
        return r.file_text(found.repository, found.value)

    def handlers(self) -> dict[str, Callable[..., Awaitable[Any]]]:
        """Each tool by the name agents call it."""
        return {
            "cograph_retrieve": self.retrieve,
            "cograph_route": self.route,
            "cograph_collections": self.collections,
            "cograph_collection_search": self.collection_search,
            "cograph_collection_document": self.collection_document,
            "cograph_read_chunk": self.read_chunk,
            "cograph_read_file_range": self.read_file_range,
        }


TOOL_DESCRIPTIONS = {
    "cograph_retrieve": (
        "Search ONE repository. mode='code' finds functions, classes and methods (each hit with the "
        "documentation chunks that discuss it); mode='wiki' searches the repository's checked-in docs "
        "(READMEs, ADRs, configs, workflows), narrowed to some kinds with `kinds`. Use "
        "cograph_read_file_range to quote code verbatim."
    ),
    "cograph_route": (
        "Ask anything when you do not know where the answer lives: searches code, repository docs and "
        "markdown collections you can read, each scored in its own pool with a confidence. Collection "
        "hits always come back (a glossary often answers in words the question does not use)."
    ),
    "cograph_collections": (
        "List the markdown collections you can read (runbooks, glossaries, requirements, wiki exports), "
        "with ids to pass to cograph_collection_search."
    ),
    "cograph_collection_search": (
        "Hybrid (semantic + keyword) search inside one markdown collection. Hits cite "
        "collection/<id>#<section>; read more with cograph_read_chunk or cograph_collection_document."
    ),
    "cograph_collection_document": (
        "One collection document in full, untruncated, with its parsed metadata: frontmatter, title, "
        "heading tree, code blocks, tables and links (resolved to other documents of the collection)."
    ),
    "cograph_read_chunk": (
        "One chunk in full, by the chunk_id of a search hit: pass collection_id for a collection chunk "
        "or repository (host/owner/name) for a repository doc chunk."
    ),
    "cograph_read_file_range": (
        "Exact lines of a source file of a repository at its synced commit (Python, Go, TypeScript, "
        "JavaScript); line numbers are 1-based and inclusive. Use it to quote code verbatim. A "
        "repository registered by checkout path is read as its directory is now."
    ),
}
