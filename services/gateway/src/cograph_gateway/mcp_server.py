"""The MCP server at /mcp (streamable HTTP, official SDK): the tools coding agents call.

The same identity and policy as REST: the endpoint authenticates the HTTP request's bearer token
before the SDK sees it, and every tool authorizes its resources through `Access` exactly as the
REST controllers do. Results are compact, agent-oriented, and cite their source.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, ParamSpec, TypeVar
from urllib.parse import urlsplit

import msgspec
from grpc import aio
from litestar import Litestar
from litestar.types import Receive, Scope, Send
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError
from pydantic_core import ErrorDetails

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph.search.v1 import search_service_pb2 as spb
from cograph_gateway import convert
from cograph_gateway import schemas as s
from cograph_gateway.access import Access, parse_id
from cograph_gateway.backends import Backends
from cograph_gateway.errors import Problem, grpc_status, send_problem
from cograph_gateway.identity import (
    ANONYMOUS,
    SIGN_IN,
    AuthenticationError,
    Authenticator,
    KeySetUnavailableError,
    Principal,
)
from cograph_gateway.mcp_guard import (
    BodyTooLarge,
    ClientGone,
    judge,
    problems_for_plain_text,
    read_body,
    replaying,
    send_refusal,
    transport_refusal,
)
from cograph_gateway.metrics import MCP_TOOL_CALLS, MCP_TOOL_DURATION
from cograph_gateway.policy import Operation
from cograph_gateway.routes.common import MAX_PAGE_TOKEN
from cograph_gateway.routes.repos import check_file_path, check_range
from cograph_gateway.routes.search import route
from cograph_grpc import DEFAULT_RELATED_LIMIT, MAX_RELATED_LIMIT
from cograph_settings import Settings

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


class Pool(BaseModel):
    store: str
    confidence: float = Field(description="The pool's best score scaled to 0..1, for comparing pools.")


class Ranks(BaseModel):
    """Where each retrieval stream placed the hit: 1 is first, 0 is not found by that stream."""

    dense: int = Field(description="Rank by meaning (embedding similarity).")
    text: int = Field(description="Rank by the query's words (BM25 full text).")

    @classmethod
    def of(cls, ranks: s.CollectionStreamRanks | s.CodeStreamRanks) -> Ranks:
        return cls(dense=ranks.dense, text=ranks.text)


class CodeRanks(Ranks):
    symbol: int = Field(description="Rank by an exact symbol name in the query.")


class CollectionHit(BaseModel):
    citation: str = Field(description="collection/<collection id>#<section anchor>")
    collection_id: str
    document_id: str
    chunk_id: str
    document_title: str
    source_key: str
    heading_path: list[str]
    score: float
    ranks: Ranks
    content: str


class RepoDocHit(BaseModel):
    citation: str = Field(description="<repository>:<page slug>#<heading anchor>")
    repository: str = Field(description="host/owner/name")
    document_id: str
    chunk_id: str
    document_title: str
    path: str
    slug: str
    heading: str = Field(description="The chunk's deepest heading")
    heading_path: list[str]
    kind: str
    score: float | None = Field(default=None, description="Null for the related docs of a code hit.")
    ranks: Ranks | None = Field(default=None, description="Null for the related docs of a code hit.")
    content: str


class CodeHit(BaseModel):
    citation: str = Field(description="<repository>:<path>#L<start>-L<end>")
    repository: str
    node_id: str
    name: str
    qualified_name: str
    kind: str
    language: str
    path: str
    start_line: int
    end_line: int
    signature: str
    score: float
    ranks: CodeRanks
    related_repo_doc_chunks: list[RepoDocHit] = Field(description="Doc chunks that discuss this symbol.")


class RetrieveResult(BaseModel):
    mode: str
    code: list[CodeHit]
    docs: list[RepoDocHit]
    failures: list[str] = Field(description="Stores that failed; the other results are still valid.")


class RouteResult(BaseModel):
    pools: list[Pool]
    code: list[CodeHit]
    repo_docs: list[RepoDocHit]
    collections: list[CollectionHit]
    failures: list[str]


class CollectionInfo(BaseModel):
    citation: str = Field(description="collection/<id>")
    id: str
    name: str
    description: str
    visibility: str
    owner: str
    document_count: int
    chunk_count: int


class CollectionList(BaseModel):
    collections: list[CollectionInfo]
    next_page_token: str | None = Field(description="Pass as page_token for more; null on the last page.")


class CollectionSearchResult(BaseModel):
    collection_id: str
    hits: list[CollectionHit]
    failures: list[str]


class CollectionDocument(BaseModel):
    citation: str
    id: str
    collection_id: str
    source_key: str
    title: str
    content: str = Field(description="The whole document, untruncated.")
    metadata: dict[str, Any] = Field(
        description="frontmatter, title, heading_tree, code_blocks, tables, links, word_count, line_count"
    )


class ChunkText(BaseModel):
    citation: str
    chunk_id: str
    document_id: str
    source: str = Field(description="collection/<id> or the repository host/owner/name")
    title: str = Field(description="The source key (collections) or file path (repositories)")
    heading_path: list[str]
    chunk_index: int
    content: str


class FileText(BaseModel):
    citation: str = Field(description="<repository>@<commit>:<path>#L<start>-L<end>")
    repository: str
    path: str
    language: str
    commit_sha: str
    start_line: int
    end_line: int
    total_lines: int
    content: str


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


def _failures(failures: list[s.StoreFailure]) -> list[str]:
    return [f"{f.store}: {f.message}" for f in failures]


def _collection_hit(hit: s.ChunkHit) -> CollectionHit:
    chunk = hit.chunk
    return CollectionHit(
        citation=chunk.citation,
        collection_id=chunk.collection_id,
        document_id=chunk.document_id,
        chunk_id=chunk.id,
        document_title=hit.document_title,
        source_key=chunk.source_key,
        heading_path=chunk.heading_path,
        score=hit.score,
        ranks=Ranks.of(hit.ranks),
        content=chunk.content,
    )


def _repo_doc(
    chunk: s.RepoChunk, title: str, repos: dict[str, str], hit: s.DocChunkHit | None = None
) -> RepoDocHit:
    repository = repos.get(chunk.repository_id, chunk.repository_id)
    return RepoDocHit(
        # As code hits cite theirs: a slug alone is ambiguous across repositories (every README).
        citation=f"{repository}:{chunk.citation}",
        repository=repository,
        document_id=chunk.document_id,
        chunk_id=chunk.id,
        document_title=title,
        path=chunk.path,
        slug=chunk.slug,
        heading=chunk.heading_path[-1] if chunk.heading_path else title,
        heading_path=chunk.heading_path,
        kind=chunk.kind,
        score=hit.score if hit else None,
        ranks=Ranks.of(hit.ranks) if hit else None,
        content=chunk.content,
    )


def _code_hit(result: s.CodeResult, repos: dict[str, str]) -> CodeHit:
    node = result.node
    repository = repos.get(node.repository_id, node.repository_id)
    return CodeHit(
        citation=f"{repository}:{node.path}#L{node.start_line}-L{node.end_line}",
        repository=repository,
        node_id=node.id,
        name=node.name,
        qualified_name=node.qualified_name,
        kind=node.kind,
        language=node.language,
        path=node.path,
        start_line=node.start_line,
        end_line=node.end_line,
        signature=node.signature,
        score=result.score,
        ranks=CodeRanks(dense=result.ranks.dense, text=result.ranks.text, symbol=result.ranks.symbol),
        related_repo_doc_chunks=[
            _repo_doc(r.chunk, r.document_title, repos) for r in result.related_repo_doc_chunks
        ],
    )


class CographTools:
    """The tools; each authorizes through `Access` with the caller's principal, like REST."""

    def __init__(self, backends: Backends, access: Access) -> None:
        self._backends = backends
        self._access = access

    async def _repositories(self, principal: Principal) -> dict[str, str]:
        return await self._access.readable_repository_slugs(principal)

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
    ) -> RetrieveResult:
        principal = _principal(ctx)
        if kinds and mode != "wiki":
            raise Problem(400, 'kinds filters repository docs: use it with mode "wiki"')
        if related_limit and mode != "code":
            raise Problem(400, 'related_limit is for code hits: use it with mode "code"')
        found = await self._access.repository_by_slug(principal, Operation.MCP_RETRIEVE, repository)
        response = await self._backends.search.Retrieve(
            spb.RetrieveRequest(
                query=query.strip(),
                mode=spb.RETRIEVE_MODE_CODE if mode == "code" else spb.RETRIEVE_MODE_WIKI,
                scope=spb.Scope(repository_ids=[found.repository_id]),
                limit=convert.limit_to_pb(limit),
                kinds=[convert.DOC_KIND_TO_PB[k] for k in dict.fromkeys(kinds or ())],
                related_limit=related_limit or 0,
            )
        )
        repos = {found.repository_id: found.slug}
        return RetrieveResult(
            mode=mode,
            code=[_code_hit(convert.code_result_from_pb(c), repos) for c in response.code],
            docs=[
                _repo_doc(h.chunk, h.document_title, repos, h)
                for h in (convert.doc_hit_from_pb(d) for d in response.docs)
            ],
            failures=_failures([convert.failure_from_pb(f) for f in response.failures]),
        )

    @_tool_errors
    async def route(self, query: QueryArg, ctx: Ctx, limit: LimitArg = None) -> RouteResult:
        principal = _principal(ctx)
        result = await route(self._backends, self._access, principal, query, limit)
        repos = await self._repositories(principal) if result.code or result.repo_docs else {}
        return RouteResult(
            pools=[Pool(store=p.store, confidence=p.confidence) for p in result.pools],
            code=[_code_hit(c, repos) for c in result.code],
            repo_docs=[_repo_doc(h.chunk, h.document_title, repos, h) for h in result.repo_docs],
            collections=[_collection_hit(h) for h in result.collections],
            failures=_failures(result.failures),
        )

    @_tool_errors
    async def collections(
        self,
        ctx: Ctx,
        query: Annotated[str, Field(max_length=200, description="Filter on name and description.")] = "",
        page_token: Annotated[
            str, Field(max_length=MAX_PAGE_TOKEN, description="next_page_token of the last call.")
        ] = "",
    ) -> CollectionList:
        principal = _principal(ctx)
        readable = await self._access.readable_collections(principal)
        response = await self._backends.collections.ListCollections(
            cpb.ListCollectionsRequest(
                collection_ids=readable, query=query, page=cpb.Page(page_size=100, page_token=page_token)
            )
        )
        return CollectionList(
            collections=[
                CollectionInfo(
                    citation=convert.collection_citation(c.id),
                    id=c.id,
                    name=c.name,
                    description=c.description,
                    visibility=c.visibility,
                    owner=c.owner,
                    document_count=c.document_count,
                    chunk_count=c.chunk_count,
                )
                for c in (convert.collection_from_pb(m) for m in response.collections)
            ],
            next_page_token=response.next_page_token or None,
        )

    @_tool_errors
    async def collection_search(
        self, collection_id: CollectionIdArg, query: QueryArg, ctx: Ctx, limit: LimitArg = None
    ) -> CollectionSearchResult:
        principal = _principal(ctx)
        found = await self._access.collection(principal, Operation.MCP_COLLECTION_SEARCH, collection_id)
        response = await self._backends.search.SearchCollection(
            spb.SearchCollectionRequest(
                query=query.strip(), collection_id=found.collection_id, limit=convert.limit_to_pb(limit)
            )
        )
        return CollectionSearchResult(
            collection_id=found.collection_id,
            hits=[_collection_hit(convert.chunk_hit_from_pb(h)) for h in response.hits],
            failures=_failures([convert.failure_from_pb(f) for f in response.failures]),
        )

    @_tool_errors
    async def collection_document(
        self,
        collection_id: CollectionIdArg,
        document_id: Annotated[str, Field(min_length=1, max_length=64, description="A document id (UUID).")],
        ctx: Ctx,
    ) -> CollectionDocument:
        principal = _principal(ctx)
        found = await self._access.collection(principal, Operation.MCP_COLLECTION_DOCUMENT, collection_id)
        response = await self._backends.collections.GetDocument(
            cpb.GetDocumentRequest(
                collection_id=found.collection_id, document_id=parse_id(document_id, "document")
            )
        )
        document = convert.document_from_pb(response.document)
        return CollectionDocument(
            citation=convert.collection_citation(document.collection_id, ""),
            id=document.id,
            collection_id=document.collection_id,
            source_key=document.source_key,
            title=document.title,
            content=document.content,
            metadata=_to_builtins(document.metadata),
        )

    @_tool_errors
    async def read_chunk(
        self,
        chunk_id: Annotated[
            str, Field(min_length=1, max_length=64, description="The chunk id from a search hit.")
        ],
        ctx: Ctx,
        collection_id: Annotated[
            str | None, Field(max_length=64, description="The chunk's collection, for a collection chunk.")
        ] = None,
        repository: Annotated[
            str | None,
            Field(max_length=600, description="The chunk's repository (host/owner/name), for a doc chunk."),
        ] = None,
    ) -> ChunkText:
        principal = _principal(ctx)
        if (collection_id is None) == (repository is None):
            raise Problem(
                400, "give exactly one of collection_id (collection chunk) and repository (doc chunk)"
            )
        chunk_id = parse_id(chunk_id, "chunk")
        if collection_id is not None:
            found = await self._access.collection(
                principal, Operation.MCP_READ_COLLECTION_CHUNK, collection_id
            )
            chunk = convert.chunk_from_pb(
                (
                    await self._backends.collections.GetChunk(
                        cpb.GetChunkRequest(collection_id=found.collection_id, chunk_id=chunk_id)
                    )
                ).chunk
            )
            return ChunkText(
                citation=chunk.citation,
                chunk_id=chunk.id,
                document_id=chunk.document_id,
                source=f"collection/{chunk.collection_id}",
                title=chunk.source_key,
                heading_path=chunk.heading_path,
                chunk_index=chunk.chunk_index,
                content=chunk.content,
            )
        assert repository is not None
        repo = await self._access.repository_by_slug(
            principal, Operation.MCP_READ_REPOSITORY_CHUNK, repository
        )
        doc_chunk = convert.repo_chunk_from_pb(
            (
                await self._backends.repodocs.GetChunk(
                    rpb.GetChunkRequest(repository_id=repo.repository_id, chunk_id=chunk_id)
                )
            ).chunk
        )
        return ChunkText(
            citation=f"{repo.slug}:{doc_chunk.citation}",  # as the search hit that led here cites it
            chunk_id=doc_chunk.id,
            document_id=doc_chunk.document_id,
            source=repo.slug,
            title=doc_chunk.path,
            heading_path=doc_chunk.heading_path,
            chunk_index=doc_chunk.chunk_index,
            content=doc_chunk.content,
        )

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
    ) -> FileText:
        principal = _principal(ctx)
        file_path = check_file_path(path)
        check_range(start_line, end_line)
        repo = await self._access.repository_by_slug(principal, Operation.MCP_READ_FILE_RANGE, repository)
        text = convert.file_range_from_pb(
            await self._backends.repodocs.ReadFileRange(
                rpb.ReadFileRangeRequest(
                    repository_id=repo.repository_id, path=file_path, start_line=start_line, end_line=end_line
                )
            )
        )
        return FileText(
            citation=f"{repo.slug}@{text.commit_sha[:12]}:{text.path}#L{text.start_line}-L{text.end_line}",
            repository=repo.slug,
            path=text.path,
            language=text.language,
            commit_sha=text.commit_sha,
            start_line=text.start_line,
            end_line=text.end_line,
            total_lines=text.total_lines,
            content=text.content,
        )


def _to_builtins(value: Any) -> dict[str, Any]:
    result = msgspec.to_builtins(value)
    assert isinstance(result, dict)
    return result


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


class _Server(MCPServer[Any]):
    """Arguments that do not fit a tool's schema are refused like any other bad input: a tool
    error that names each argument and what is wrong with it, ending in (HTTP 400). As REST does,
    an argument the tool does not have is refused (a misspelt `limt` was ignored), and a count is
    an integer (`true` was taken for 1)."""

    _arguments: dict[str, frozenset[str]] | None = None

    async def _arguments_of(self, name: str) -> frozenset[str] | None:
        if self._arguments is None:
            tools = await self.list_tools()
            self._arguments = {
                tool.name: frozenset(tool.input_schema.get("properties", {})) for tool in tools
            }
        return self._arguments.get(name)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        """The call, counted by tool and by the HTTP status REST would answer (200 when it
        succeeds) and timed: /mcp is one route to the HTTP metrics, whatever the tool."""
        started = time.perf_counter()
        status = 500
        try:
            result = await self._checked_call(name, arguments, context)
            status = 200
            return result
        except ToolError as error:
            status = _status_of(error)
            raise
        finally:
            # Only tools are labels: mcp_guard answers a call to any other name before it gets here.
            MCP_TOOL_CALLS.labels(name, str(status)).inc()
            MCP_TOOL_DURATION.labels(name).observe(time.perf_counter() - started)

    async def _checked_call(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> Any:
        known = await self._arguments_of(name)
        unknown = sorted(set(arguments) - known) if known is not None else []
        if unknown:
            wrong = "; ".join(f"{argument}: not an argument of this tool" for argument in unknown)
            given = ", ".join(sorted(known or ())) or "none"
            raise Refusal(f"invalid arguments for {name}: {wrong}; its arguments are {given}", 400)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if not isinstance(error.__cause__, ValidationError):
                raise
            problems = error.__cause__.errors(include_url=False)
            wrong = "; ".join(_argument_problem(problem) for problem in problems)
            raise Refusal(f"invalid arguments for {name}: {wrong}", 400) from None


def _status_of(error: ToolError) -> int:
    """The HTTP status of a failed call: the refusal's (the SDK wraps what a tool raises), else
    500 for a crash and 400 for what the SDK refuses itself."""
    for raised in (error, error.__cause__):
        if isinstance(raised, Refusal):
            return raised.status
    return 500 if isinstance(error, UnexpectedToolError) else 400


def _argument_problem(problem: ErrorDetails) -> str:
    """`where: what is wrong (given …)`, the value shown when it is a short scalar."""
    where = ".".join(map(str, problem["loc"])) or "arguments"
    given = problem.get("input")
    if problem["type"] == "missing" or not isinstance(given, str | int | float | bool):
        return f"{where}: {problem['msg']}"
    shown = repr(given)
    return f"{where}: {problem['msg']} (given {shown[:80]}{'…' if len(shown) > 80 else ''})"


def create_mcp_server(backends: Backends, access: Access) -> MCPServer[Any]:
    server = _Server(name="cograph", title="Cograph Document RAG", instructions=INSTRUCTIONS)
    tools = CographTools(backends, access)
    handlers: dict[str, Callable[..., Awaitable[BaseModel]]] = {
        "cograph_retrieve": tools.retrieve,
        "cograph_route": tools.route,
        "cograph_collections": tools.collections,
        "cograph_collection_search": tools.collection_search,
        "cograph_collection_document": tools.collection_document,
        "cograph_read_chunk": tools.read_chunk,
        "cograph_read_file_range": tools.read_file_range,
    }
    for name, handler in handlers.items():
        server.add_tool(handler, name=name, description=TOOL_DESCRIPTIONS[name], annotations=READ_ONLY)
    return server


def _transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection for a gateway on loopback (a browser page must not reach it); behind
    an ingress the Host is the ingress's business and the bearer token is the protection."""
    loopback = settings.gateway.bind_host in ("127.0.0.1", "localhost", "::1")
    if not loopback:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    # A client of a gateway on port 80 sends the name alone ("Host: localhost").
    loopback_names = ["127.0.0.1", "localhost", "[::1]"]
    hosts = [*loopback_names, *(f"{name}:*" for name in loopback_names)]
    origins = [f"http://{host}" for host in hosts]
    if settings.gateway.public_url:
        public = urlsplit(settings.gateway.public_url)
        hosts.append(public.netloc)
        origins.append(f"{public.scheme}://{public.netloc}")
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


MAX_MCP_BODY = 1024 * 1024  # a tool call is a query and a few ids, never a document


class McpEndpoint:
    """The ASGI app mounted at /mcp: authenticates like REST, then hands over to the SDK."""

    def __init__(
        self, settings: Settings, authenticator: Authenticator, backends: Backends, access: Access
    ) -> None:
        self._anonymous_read = settings.auth.anonymous_read
        self._authenticator = authenticator
        self.server = create_mcp_server(backends, access)
        security = _transport_security(settings)
        self._security = TransportSecurityMiddleware(security)
        # Stateless, JSON responses: any gateway replica answers any request (no sticky sessions),
        # and the tools never call back into the client, so nothing needs a session.
        self.server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=True,
            json_response=True,
            transport_security=security,
            max_request_body_size=MAX_MCP_BODY,
        )
        self.session_manager: StreamableHTTPSessionManager = self.server.session_manager

    @asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        """The SDK's session manager (its task group) runs for as long as the gateway app does."""
        async with self.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if scope.get("method") != "POST":  # stateless: no event stream to open, no session to end
            await send_problem(send, 405, "the MCP endpoint answers POST requests only (stateless, JSON)")
            return
        if (refused := await transport_refusal(scope, self._security)) is not None:
            await send_problem(send, *refused)
            return
        too_large = f"an MCP request may be at most {MAX_MCP_BODY // 1024} KiB"
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_MCP_BODY:
            await send_problem(send, 413, too_large)
            return
        try:
            principal = await self._authenticator.authenticate(headers.get("authorization"))
        except AuthenticationError as error:
            await send_problem(send, 401, str(error))
            return
        except KeySetUnavailableError as error:
            await send_problem(send, 503, str(error))
            return
        if principal is None:
            if not self._anonymous_read:
                await send_problem(send, 401, SIGN_IN)
                return
            principal = ANONYMOUS
        try:  # a chunked body has no length to refuse it by: counted as it comes
            body = await read_body(receive, MAX_MCP_BODY)
        except BodyTooLarge:
            await send_problem(send, 413, too_large)
            return
        except ClientGone:
            return
        if (refusal := judge(body, TOOL_DESCRIPTIONS)) is not None:
            await send_refusal(send, refusal)
            return
        # The SDK builds its request object on this same scope; the tools read the principal from it.
        scope[PRINCIPAL_KEY] = principal  # type: ignore[literal-required]
        await self.session_manager.handle_request(
            scope,  # type: ignore[arg-type]
            replaying(body, receive),  # type: ignore[arg-type]
            problems_for_plain_text(send),  # type: ignore[arg-type]
        )
