"""/api/repos: repositories, their syncs, documents, docs pages, code search and source.

A repository the caller may not read answers exactly like one that does not exist (404, same body).
Input is validated before the repository is looked up, so a 400 never depends on the repository.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, JSONBody, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_202_ACCEPTED

from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph.search.v1 import search_service_pb2 as spb
from cograph_gateway.access import Access, parse_id
from cograph_gateway.backends import Backends
from cograph_gateway.convert import (
    DOC_KIND_TO_PB,
    code_result_from_pb,
    docs_page_from_pb,
    docs_tree_node_from_pb,
    failure_from_pb,
    file_range_from_pb,
    is_remote_url,
    limit_to_pb,
    reads_server_disk,
    related_from_pb,
    repo_document_from_pb,
    repo_summary_from_pb,
    repo_visibility_to_pb,
    repository_from_pb,
    sync_from_pb,
)
from cograph_gateway.duplicates import warn_of_collection_copies
from cograph_gateway.errors import Problem, problem_responses
from cograph_gateway.identity import Principal
from cograph_gateway.policy import Operation
from cograph_gateway.routes.common import (
    DEFAULT_PAGE_SIZE,
    DocumentId,
    NodeId,
    PageSize,
    PageToken,
    granted_group,
    next_token,
)
from cograph_gateway.schemas import (
    CodeDocs,
    CodeSearchRequest,
    CodeSearchResult,
    DocsPage,
    DocsTree,
    FileRange,
    GrantCreate,
    Page,
    RepoDocKind,
    RepoDocument,
    RepoDocumentSummary,
    Repository,
    RepositoryCreate,
    Sync,
)
from cograph_grpc import shown

REPO = "/{host:str}/{owner:str}/{name:str}"
# A waited sync fetches, indexes and embeds a whole repository: far longer than the default deadline.
SYNC_WAIT_SECONDS = 3600.0
_RESPONSES = problem_responses(404)
_WRITE_RESPONSES = problem_responses(403, 404)


def is_local_source(data: RepositoryCreate) -> bool:
    """A checkout path or a file/path clone URL reads the server's own disk: administrators only."""
    return data.checkout_path is not None or not is_remote_url(data.clone_url or "")


async def _shows_sync_errors(principal: Principal, backends: Backends, repository_id: str) -> bool:
    """Whether the caller sees why a sync failed: administrators always, others unless the
    repository is read from the server's disk (git's words quote that directory)."""
    if principal.admin:
        return True
    found = await backends.repodocs.GetRepository(rpb.GetRepositoryRequest(repository_id=repository_id))
    return not reads_server_disk(found.repository)


class ReposController(Controller):
    path = "/api/repos"
    tags = ("repositories",)

    @post(
        "/",
        summary="Register a repository (by clone URL, or an existing checkout path: admin only)",
        responses=problem_responses(403, 409),
    )
    async def register(
        self,
        data: JSONBody[RepositoryCreate],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> Repository:
        if (data.clone_url is None) == (data.checkout_path is None):
            raise Problem(400, "give exactly one of clone_url and checkout_path")
        access.require(principal, Operation.REGISTER_REPOSITORY)
        if is_local_source(data):
            access.require(principal, Operation.REGISTER_LOCAL_REPOSITORY)
        request = rpb.RegisterRepositoryRequest(
            ref=rpb.RepositoryRef(host=data.host, owner=data.owner, name=data.name),
            visibility=repo_visibility_to_pb(data.visibility),
            owner_subject=principal.subject,
            default_branch=data.default_branch,
            web_url=data.web_url,
        )
        if data.clone_url is not None:
            request.clone_url = data.clone_url
        else:
            assert data.checkout_path is not None
            request.checkout_path = data.checkout_path
        response = await backends.repodocs.RegisterRepository(request)
        return repository_from_pb(response.repository, show_server_paths=principal.admin)

    @get("/", summary="List the repositories you can read", responses=problem_responses())
    async def list_repositories(
        self,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
        page_size: PageSize = DEFAULT_PAGE_SIZE,
        page_token: PageToken = "",
    ) -> Page[Repository]:
        readable = await access.readable_repositories(principal)
        response = await backends.repodocs.ListRepositories(
            rpb.ListRepositoriesRequest(
                repository_ids=readable, page=rpb.Page(page_size=page_size, page_token=page_token)
            )
        )
        return Page(
            items=[repository_from_pb(r, show_server_paths=principal.admin) for r in response.repositories],
            next_page_token=next_token(response.next_page_token),
        )

    @get(REPO, summary="One repository, with its last sync", responses=_RESPONSES)
    async def get_repository(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> Repository:
        found = await access.repository(principal, Operation.GET_REPOSITORY, host, owner, name)
        response = await backends.repodocs.GetRepository(
            rpb.GetRepositoryRequest(repository_id=found.repository_id)
        )
        return repository_from_pb(response.repository, show_server_paths=principal.admin)

    @post(
        REPO + "/grants",
        summary="Let a group read the repository (owner or admin)",
        responses=problem_responses(403, 404, 409),  # 409: the repository has its 100 grants
    )
    async def add_grant(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        data: JSONBody[GrantCreate],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> Repository:
        found = await access.repository(principal, Operation.ADD_REPOSITORY_GRANT, host, owner, name)
        response = await backends.repodocs.AddRepositoryGrant(
            rpb.AddRepositoryGrantRequest(repository_id=found.repository_id, group=data.group.strip())
        )
        return repository_from_pb(response.repository, show_server_paths=principal.admin)

    @delete(
        REPO + "/grants/{group:path}",
        summary="Withdraw a group's grant (owner or admin)",
        responses=_WRITE_RESPONSES,
    )
    async def remove_grant(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        group: FromPath[str],
        request: Request[Any, Any, Any],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> None:
        found = await access.repository(principal, Operation.REMOVE_REPOSITORY_GRANT, host, owner, name)
        await backends.repodocs.RemoveRepositoryGrant(
            rpb.RemoveRepositoryGrantRequest(
                repository_id=found.repository_id, group=granted_group(request, group).strip()
            )
        )

    @post(
        REPO + "/sync",
        summary="Sync the repository (owner or admin); ?wait=true answers the finished sync's counters",
        description="Without wait the sync is queued (202) and /syncs shows its progress. With wait the "
        "call blocks until it ends (200) and answers its six counters: discovered_files, "
        "indexed_documents, indexed_chunks, unchanged_documents, deleted_documents, replaced_files.",
        status_code=HTTP_202_ACCEPTED,
        responses={
            **_WRITE_RESPONSES,
            **problem_responses(409),
            HTTP_200_OK: ResponseSpec(data_container=Sync, description="The finished sync (wait=true)"),
        },
    )
    async def sync(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
        wait: Annotated[bool, QueryParameter(description="Block until the sync ends")] = False,
        force_relink: Annotated[
            bool, QueryParameter(description="Re-link unchanged documents too (after a large rename)")
        ] = False,
    ) -> Response[Sync]:
        found = await access.repository(principal, Operation.SYNC_REPOSITORY, host, owner, name)
        response = await backends.repodocs.SyncRepository(
            rpb.SyncRepositoryRequest(
                repository_id=found.repository_id, wait=wait, force_relink=force_relink
            ),
            timeout=SYNC_WAIT_SECONDS if wait else None,
        )
        show_error = await _shows_sync_errors(principal, backends, found.repository_id)
        return Response(
            sync_from_pb(response.sync, show_error=show_error),
            status_code=HTTP_200_OK if wait else HTTP_202_ACCEPTED,
        )

    @get(REPO + "/syncs", summary="The repository's syncs, newest first", responses=_RESPONSES)
    async def list_syncs(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
        page_size: PageSize = DEFAULT_PAGE_SIZE,
        page_token: PageToken = "",
    ) -> Page[Sync]:
        found = await access.repository(principal, Operation.LIST_SYNCS, host, owner, name)
        response = await backends.repodocs.ListSyncs(
            rpb.ListSyncsRequest(
                repository_id=found.repository_id, page=rpb.Page(page_size=page_size, page_token=page_token)
            )
        )
        show_error = await _shows_sync_errors(principal, backends, found.repository_id)
        return Page(
            items=[sync_from_pb(x, show_error=show_error) for x in response.syncs],
            next_page_token=next_token(response.next_page_token),
        )

    @get(REPO + "/documents", summary="The repository's indexed documents", responses=_RESPONSES)
    async def list_documents(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
        kind: Annotated[
            list[RepoDocKind] | None, QueryParameter(description="Only these kinds (repeatable)")
        ] = None,
        page_size: PageSize = DEFAULT_PAGE_SIZE,
        page_token: PageToken = "",
    ) -> Page[RepoDocumentSummary]:
        found = await access.repository(principal, Operation.LIST_REPO_DOCUMENTS, host, owner, name)
        kinds = [DOC_KIND_TO_PB[k] for k in kind or ()]
        response = await backends.repodocs.ListDocuments(
            rpb.ListDocumentsRequest(
                repository_id=found.repository_id,
                kinds=kinds,
                page=rpb.Page(page_size=page_size, page_token=page_token),
            )
        )
        documents = [repo_summary_from_pb(d) for d in response.documents]
        await warn_of_collection_copies(documents, principal, backends, access)
        return Page(items=documents, next_page_token=next_token(response.next_page_token))

    @get(REPO + "/documents/{document_id:str}", summary="One indexed document in full", responses=_RESPONSES)
    async def get_document(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        document_id: DocumentId,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> RepoDocument:
        document_id = parse_id(document_id, "document")
        found = await access.repository(principal, Operation.GET_REPO_DOCUMENT, host, owner, name)
        response = await backends.repodocs.GetDocument(
            rpb.GetDocumentRequest(repository_id=found.repository_id, document_id=document_id)
        )
        document = repo_document_from_pb(response.document)
        await warn_of_collection_copies([document], principal, backends, access)
        return document

    @get(REPO + "/docs", summary="The rendered docs' page tree", responses=_RESPONSES)
    async def docs_tree(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> DocsTree:
        found = await access.repository(principal, Operation.GET_DOCS_TREE, host, owner, name)
        response = await backends.repodocs.GetDocsTree(
            rpb.GetDocsTreeRequest(repository_id=found.repository_id)
        )
        return DocsTree(roots=[docs_tree_node_from_pb(n) for n in response.roots])

    @get(
        REPO + "/docs/{page_slug:str}",
        summary="One docs page: its document, table of contents, navigation and the code it mentions",
        responses=_RESPONSES,
    )
    async def docs_page(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        page_slug: FromPath[str],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> DocsPage:
        found = await access.repository(principal, Operation.GET_DOCS_PAGE, host, owner, name)
        response = await backends.repodocs.GetDocsPage(
            rpb.GetDocsPageRequest(repository_id=found.repository_id, slug=page_slug)
        )
        return docs_page_from_pb(response)

    @post(
        REPO + "/code/search",
        summary="Search the repository's code; each hit carries the doc chunks that discuss it",
        status_code=HTTP_200_OK,
        responses=_RESPONSES,
    )
    async def search_code(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        data: JSONBody[CodeSearchRequest],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
    ) -> CodeSearchResult:
        found = await access.repository(principal, Operation.SEARCH_CODE, host, owner, name)
        response = await backends.search.Retrieve(
            spb.RetrieveRequest(
                query=data.query.strip(),
                mode=spb.RETRIEVE_MODE_CODE,
                scope=spb.Scope(repository_ids=[found.repository_id]),
                limit=limit_to_pb(data.limit),
                related_limit=data.related_limit or 0,
            )
        )
        return CodeSearchResult(
            hits=[code_result_from_pb(c) for c in response.code],
            failures=[failure_from_pb(f) for f in response.failures],
        )

    @get(
        REPO + "/code/{node_id:str}/docs",
        summary="The documentation chunks that mention one code symbol",
        responses=_RESPONSES,
    )
    async def code_docs(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        node_id: NodeId,
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
        limit: Annotated[int, QueryParameter(ge=1, le=50, description="Chunks at most")] = 3,
    ) -> CodeDocs:
        node_id = parse_id(node_id, "code node")
        found = await access.repository(principal, Operation.GET_CODE_DOCS, host, owner, name)
        response = await backends.repodocs.GetRelatedDocChunks(
            rpb.GetRelatedDocChunksRequest(
                repository_ids=[found.repository_id], code_node_ids=[node_id], limit=limit
            )
        )
        entry = next((r for r in response.related if r.code_node_id == node_id), None)
        if entry is None:
            raise Problem(404, f"repository {host}/{owner}/{name} has no code node {node_id}")
        return CodeDocs(node_id=node_id, chunks=[related_from_pb(chunk) for chunk in entry.chunks])

    @get(
        REPO + "/files/{path:path}",
        summary="Lines of a source file at the synced commit (Python, Go, TypeScript, JavaScript)",
        description="A repository registered by checkout path is read as its directory is now.",
        responses=_RESPONSES,
    )
    async def read_file(
        self,
        host: FromPath[str],
        owner: FromPath[str],
        name: FromPath[str],
        path: FromPath[str],
        principal: NamedDependency[Principal],
        backends: NamedDependency[Backends],
        access: NamedDependency[Access],
        start: Annotated[int, QueryParameter(ge=0, le=10_000_000, description="First line (1-based)")] = 0,
        end: Annotated[int, QueryParameter(ge=0, le=10_000_000, description="Last line, inclusive")] = 0,
    ) -> FileRange:
        # Input is judged before access, so a 400 says nothing about the repository.
        file_path = check_file_path(path)
        check_range(start, end)
        found = await access.repository(principal, Operation.READ_FILE, host, owner, name)
        response = await backends.repodocs.ReadFileRange(
            rpb.ReadFileRangeRequest(
                repository_id=found.repository_id, path=file_path, start_line=start, end_line=end
            )
        )
        return file_range_from_pb(response)


def check_file_path(path: str) -> str:
    """A path inside the checkout: relative, without `..` segments."""
    cleaned = path.lstrip("/")
    if not cleaned or any(part in ("", ".", "..") for part in cleaned.split("/")) or "\x00" in cleaned:
        raise Problem(400, f"{shown(path)} is not a file path inside the repository")
    return cleaned


def check_range(start: int, end: int) -> None:
    if start and end and start > end:
        raise Problem(400, f"start ({start}) is after end ({end})")
