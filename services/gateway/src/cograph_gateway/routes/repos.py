"""/api/repos: repositories, their syncs, documents, docs pages, code search and source.

A repository the caller may not read answers exactly like one that does not exist (404, same body).
Input is validated before the repository is looked up, so a 400 never depends on the repository.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, patch, post
from litestar.di import NamedDependency, Provide
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, JSONBody, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_202_ACCEPTED

from cograph_gateway import schemas as s
from cograph_gateway.access import RepositoryName
from cograph_gateway.errors import problem_responses
from cograph_gateway.operations import Operations
from cograph_gateway.operations.paging import PageRequest
from cograph_gateway.policy import Operation
from cograph_gateway.routes.common import (
    DocumentId,
    GroupInPath,
    NodeId,
    granted_group,
    repository_in_path,
)

REPO = "/{host:str}/{owner:str}/{name:str}"
_RESPONSES = problem_responses(404)
_WRITE_RESPONSES = problem_responses(403, 404)


class ReposController(Controller):
    path = "/api/repos"
    tags = ("repositories",)
    dependencies = {"repository": Provide(repository_in_path, sync_to_thread=False)}  # noqa: RUF012

    @post(
        "/",
        summary="Register a repository (by clone URL, or an existing checkout path: admin only)",
        responses=problem_responses(403, 409),
    )
    async def register(
        self,
        data: JSONBody[s.RepositoryCreate],
        ops: NamedDependency[Operations],
    ) -> s.Repository:
        return await ops.repositories.register(data)

    @get("/", summary="List the repositories you can read", responses=problem_responses())
    async def list_repositories(
        self,
        ops: NamedDependency[Operations],
        page: NamedDependency[PageRequest],
    ) -> s.Page[s.Repository]:
        return await ops.repositories.readable(page)

    @get(REPO, summary="One repository, with its last sync", responses=_RESPONSES)
    async def get_repository(
        self,
        repository: NamedDependency[RepositoryName],
        ops: NamedDependency[Operations],
    ) -> s.Repository:
        return await ops.repositories.get(repository)

    @patch(
        REPO,
        summary="Change the visibility, tracked branch or sync interval (owner or admin)",
        description="Only the fields given change. A new default_branch is checked on the remote and "
        "synced at once (after the sync in progress, if any). sync_interval_seconds is 0 (no scheduled "
        'sync), 60 to 31622400, or "default" for the deployment\'s interval.',
        responses=_WRITE_RESPONSES,
    )
    async def update_repository(
        self,
        repository: NamedDependency[RepositoryName],
        data: JSONBody[s.RepositoryUpdate],
        ops: NamedDependency[Operations],
    ) -> s.Repository:
        return await ops.repositories.update(repository, data)

    @delete(
        REPO,
        summary="Delete the repository and everything indexed of it (owner or admin)",
        description="Its documents, chunks, symbol mentions, code nodes, syncs, grants and the checkout "
        "the service cloned go with it; a sync of it in progress stops. Searches no longer find it.",
        responses=_WRITE_RESPONSES,
    )
    async def delete_repository(
        self,
        repository: NamedDependency[RepositoryName],
        ops: NamedDependency[Operations],
    ) -> None:
        await ops.repositories.delete(repository)

    @post(
        REPO + "/grants",
        summary="Let a group read the repository (owner or admin)",
        responses=problem_responses(403, 404, 409),  # 409: the repository has its 100 grants
    )
    async def add_grant(
        self,
        repository: NamedDependency[RepositoryName],
        data: JSONBody[s.GrantCreate],
        ops: NamedDependency[Operations],
    ) -> s.Repository:
        return await ops.repositories.add_grant(repository, data.group)

    @delete(
        REPO + "/grants/{group:path}",
        summary="Withdraw a group's grant (owner or admin)",
        responses=_WRITE_RESPONSES,
    )
    async def remove_grant(
        self,
        repository: NamedDependency[RepositoryName],
        group: GroupInPath,
        request: Request[Any, Any, Any],
        ops: NamedDependency[Operations],
    ) -> None:
        await ops.repositories.remove_grant(repository, granted_group(request, group))

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
            HTTP_200_OK: ResponseSpec(data_container=s.Sync, description="The finished sync (wait=true)"),
        },
    )
    async def sync(
        self,
        repository: NamedDependency[RepositoryName],
        ops: NamedDependency[Operations],
        wait: Annotated[bool, QueryParameter(description="Block until the sync ends")] = False,
        force_relink: Annotated[
            bool, QueryParameter(description="Re-link unchanged documents too (after a large rename)")
        ] = False,
    ) -> Response[s.Sync]:
        sync = await ops.repositories.sync(repository, wait=wait, force_relink=force_relink)
        return Response(sync, status_code=HTTP_200_OK if wait else HTTP_202_ACCEPTED)

    @get(REPO + "/syncs", summary="The repository's syncs, newest first", responses=_RESPONSES)
    async def list_syncs(
        self,
        repository: NamedDependency[RepositoryName],
        ops: NamedDependency[Operations],
        page: NamedDependency[PageRequest],
    ) -> s.Page[s.Sync]:
        return await ops.repositories.syncs(repository, page)

    @get(REPO + "/documents", summary="The repository's indexed documents", responses=_RESPONSES)
    async def list_documents(
        self,
        repository: NamedDependency[RepositoryName],
        ops: NamedDependency[Operations],
        page: NamedDependency[PageRequest],
        kind: Annotated[
            list[s.RepoDocKind] | None, QueryParameter(description="Only these kinds (repeatable)")
        ] = None,
    ) -> s.Page[s.RepoDocumentSummary]:
        return await ops.repositories.documents(repository, kind, page)

    @get(REPO + "/documents/{document_id:str}", summary="One indexed document in full", responses=_RESPONSES)
    async def get_document(
        self,
        repository: NamedDependency[RepositoryName],
        document_id: DocumentId,
        ops: NamedDependency[Operations],
    ) -> s.RepoDocument:
        return await ops.repositories.document(repository, document_id)

    @get(REPO + "/docs", summary="The rendered docs' page tree", responses=_RESPONSES)
    async def docs_tree(
        self,
        repository: NamedDependency[RepositoryName],
        ops: NamedDependency[Operations],
    ) -> s.DocsTree:
        return await ops.repositories.docs_tree(repository)

    @get(
        REPO + "/docs/{page_slug:str}",
        summary="One docs page: its document, table of contents, navigation and the code it mentions",
        responses=_RESPONSES,
    )
    async def docs_page(
        self,
        repository: NamedDependency[RepositoryName],
        page_slug: FromPath[str],
        ops: NamedDependency[Operations],
    ) -> s.DocsPage:
        return await ops.repositories.docs_page(repository, page_slug)

    @post(
        REPO + "/code/search",
        summary="Search the repository's code; each hit carries the doc chunks that discuss it",
        status_code=HTTP_200_OK,
        responses=_RESPONSES,
    )
    async def search_code(
        self,
        repository: NamedDependency[RepositoryName],
        data: JSONBody[s.CodeSearchRequest],
        ops: NamedDependency[Operations],
    ) -> s.CodeSearchResult:
        found = await ops.search.retrieve(
            repository,
            data.query,
            mode="code",
            limit=data.limit,
            related_limit=data.related_limit,
            operation=Operation.SEARCH_CODE,
        )
        return s.CodeSearchResult(hits=found.code, failures=found.failures)

    @get(
        REPO + "/code/{node_id:str}/docs",
        summary="The documentation chunks that mention one code symbol",
        responses=_RESPONSES,
    )
    async def code_docs(
        self,
        repository: NamedDependency[RepositoryName],
        node_id: NodeId,
        ops: NamedDependency[Operations],
        limit: Annotated[int, QueryParameter(ge=1, le=50, description="Chunks at most")] = 3,
    ) -> s.CodeDocs:
        return await ops.repositories.code_docs(repository, node_id, limit)

    @get(
        REPO + "/files/{path:path}",
        summary="Lines of a source file at the synced commit (Python, Go, TypeScript, JavaScript)",
        description="A repository registered by checkout path is read as its directory is now. "
        "When both start and end are given (not 0), start must not be after end: a 400 otherwise.",
        responses=_RESPONSES,
    )
    async def read_file(
        self,
        repository: NamedDependency[RepositoryName],
        path: FromPath[str],
        ops: NamedDependency[Operations],
        start: Annotated[
            int, QueryParameter(ge=0, le=10_000_000, description="First line (1-based); 0: the first.")
        ] = 0,
        end: Annotated[
            int,
            QueryParameter(
                ge=0,
                le=10_000_000,
                description="Last line, inclusive; 0: the last. Not before start when both are given.",
            ),
        ] = 0,
    ) -> s.FileRange:
        return (await ops.repositories.read_file(repository, path, start, end)).value
