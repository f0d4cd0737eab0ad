"""Repositories: registration, changes, deletion, grants, syncs, documents, the docs tree, code
docs and source.

A repository the caller may not read answers exactly like one that does not exist (404, same
body). Input is judged before the repository is looked up, so a 400 never depends on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_errors import shown
from cograph_gateway.access import RepositoryName, parse_id
from cograph_gateway.convert import (
    DOC_KIND_TO_PB,
    docs_page_from_pb,
    docs_tree_node_from_pb,
    file_range_from_pb,
    is_remote_url,
    reads_server_disk,
    related_from_pb,
    repo_chunk_from_pb,
    repo_document_from_pb,
    repo_summary_from_pb,
    repo_visibility_to_pb,
    repository_from_pb,
    sync_from_pb,
)
from cograph_gateway.duplicates import warn_of_collection_copies
from cograph_gateway.errors import Problem
from cograph_gateway.operations.base import OperationGroup
from cograph_gateway.operations.paging import PageRequest, page_of
from cograph_gateway.policy import Operation
from cograph_gateway.schemas import (
    CodeDocs,
    DocsPage,
    DocsTree,
    FileRange,
    Page,
    RepoChunk,
    RepoDocKind,
    RepoDocument,
    RepoDocumentSummary,
    Repository,
    RepositoryCreate,
    RepositoryUpdate,
    Sync,
)

# A waited sync fetches, indexes and embeds a whole repository: far longer than the default deadline.
SYNC_WAIT_SECONDS = 3600.0
# A delete removes every row of a repository in one transaction, and waits for a sync of it in
# another replica to finish writing: longer than the default deadline for a large repository.
DELETE_SECONDS = 600.0

T = TypeVar("T")


@dataclass(frozen=True)
class InRepository(Generic[T]):
    """A result with the repository it came from, named as registered (host/owner/name), for
    faces that cite it."""

    repository: str
    value: T


def is_local_source(data: RepositoryCreate) -> bool:
    """A checkout path or a file/path clone URL reads the server's own disk: administrators only."""
    return data.checkout_path is not None or not is_remote_url(data.clone_url or "")


def check_file_path(path: str) -> str:
    """A path inside the checkout: relative, without `..` segments."""
    cleaned = path.lstrip("/")
    if not cleaned or any(part in ("", ".", "..") for part in cleaned.split("/")) or "\x00" in cleaned:
        raise Problem(400, f"{shown(path)} is not a file path inside the repository")
    return cleaned


def check_range(start: int, end: int) -> None:
    if start and end and start > end:
        raise Problem(400, f"start ({start}) is after end ({end})")


class RepositoryOperations(OperationGroup):
    async def register(self, data: RepositoryCreate) -> Repository:
        """Register a repository by clone URL, or (administrators) one read from the server's disk."""
        if (data.clone_url is None) == (data.checkout_path is None):
            raise Problem(400, "give exactly one of clone_url and checkout_path")
        self._access.require(self._principal, Operation.REGISTER_REPOSITORY)
        if is_local_source(data):
            self._access.require(self._principal, Operation.REGISTER_LOCAL_REPOSITORY)
        request = rpb.RegisterRepositoryRequest(
            ref=rpb.RepositoryRef(host=data.host, owner=data.owner, name=data.name),
            visibility=repo_visibility_to_pb(data.visibility),
            owner_subject=self._principal.subject,
            default_branch=data.default_branch,
            web_url=data.web_url,
        )
        if data.clone_url is not None:
            request.clone_url = data.clone_url
        else:
            assert data.checkout_path is not None
            request.checkout_path = data.checkout_path
        response = await self._backends.repodocs.RegisterRepository(request)
        return repository_from_pb(response.repository, show_server_paths=self._principal.admin)

    async def readable(self, page: PageRequest) -> Page[Repository]:
        readable = await self._access.readable_repositories(self._principal)
        response = await self._backends.repodocs.ListRepositories(
            rpb.ListRepositoriesRequest(repository_ids=readable, page=page.repodocs())
        )
        return page_of(
            [repository_from_pb(r, show_server_paths=self._principal.admin) for r in response.repositories],
            response.next_page_token,
        )

    async def get(self, repository: RepositoryName) -> Repository:
        """One repository, with its last sync."""
        found = await self._access.repository(self._principal, Operation.GET_REPOSITORY, repository)
        response = await self._backends.repodocs.GetRepository(
            rpb.GetRepositoryRequest(repository_id=found.repository_id)
        )
        return repository_from_pb(response.repository, show_server_paths=self._principal.admin)

    async def update(self, repository: RepositoryName, changes: RepositoryUpdate) -> Repository:
        """Change the visibility, the tracked branch (then synced) or the sync interval."""
        if changes == RepositoryUpdate():
            raise Problem(
                400,
                "nothing to change: give at least one of visibility, default_branch and"
                " sync_interval_seconds",
            )
        found = await self._access.repository(self._principal, Operation.UPDATE_REPOSITORY, repository)
        request = rpb.UpdateRepositoryRequest(repository_id=found.repository_id)
        if changes.visibility is not None:
            request.visibility = repo_visibility_to_pb(changes.visibility)
        if changes.default_branch is not None:
            request.default_branch = changes.default_branch
        if changes.sync_interval_seconds == "default":
            request.default_sync_interval = True
        elif changes.sync_interval_seconds is not None:
            request.sync_interval_seconds = changes.sync_interval_seconds
        response = await self._backends.repodocs.UpdateRepository(request)
        return repository_from_pb(response.repository, show_server_paths=self._principal.admin)

    async def delete(self, repository: RepositoryName) -> None:
        """Delete the repository and everything indexed of it (its sync in progress stops)."""
        found = await self._access.repository(self._principal, Operation.DELETE_REPOSITORY, repository)
        await self._backends.repodocs.DeleteRepository(
            rpb.DeleteRepositoryRequest(repository_id=found.repository_id), timeout=DELETE_SECONDS
        )

    async def add_grant(self, repository: RepositoryName, group: str) -> Repository:
        found = await self._access.repository(self._principal, Operation.ADD_REPOSITORY_GRANT, repository)
        response = await self._backends.repodocs.AddRepositoryGrant(
            rpb.AddRepositoryGrantRequest(repository_id=found.repository_id, group=group.strip())
        )
        return repository_from_pb(response.repository, show_server_paths=self._principal.admin)

    async def remove_grant(self, repository: RepositoryName, group: str) -> None:
        found = await self._access.repository(self._principal, Operation.REMOVE_REPOSITORY_GRANT, repository)
        await self._backends.repodocs.RemoveRepositoryGrant(
            rpb.RemoveRepositoryGrantRequest(repository_id=found.repository_id, group=group.strip())
        )

    async def sync(self, repository: RepositoryName, *, wait: bool, force_relink: bool) -> Sync:
        """Queue a sync, or with `wait` run it to its end; answers the sync."""
        found = await self._access.repository(self._principal, Operation.SYNC_REPOSITORY, repository)
        response = await self._backends.repodocs.SyncRepository(
            rpb.SyncRepositoryRequest(
                repository_id=found.repository_id, wait=wait, force_relink=force_relink
            ),
            timeout=SYNC_WAIT_SECONDS if wait else None,
        )
        show_error = await self._shows_sync_errors(found.repository_id)
        return sync_from_pb(response.sync, show_error=show_error)

    async def syncs(self, repository: RepositoryName, page: PageRequest) -> Page[Sync]:
        """The repository's syncs, newest first."""
        found = await self._access.repository(self._principal, Operation.LIST_SYNCS, repository)
        response = await self._backends.repodocs.ListSyncs(
            rpb.ListSyncsRequest(repository_id=found.repository_id, page=page.repodocs())
        )
        show_error = await self._shows_sync_errors(found.repository_id)
        return page_of(
            [sync_from_pb(x, show_error=show_error) for x in response.syncs], response.next_page_token
        )

    async def documents(
        self,
        repository: RepositoryName,
        kinds: list[RepoDocKind] | None,
        page: PageRequest,
    ) -> Page[RepoDocumentSummary]:
        """The repository's indexed documents, of some kinds or all."""
        found = await self._access.repository(self._principal, Operation.LIST_REPO_DOCUMENTS, repository)
        response = await self._backends.repodocs.ListDocuments(
            rpb.ListDocumentsRequest(
                repository_id=found.repository_id,
                kinds=[DOC_KIND_TO_PB[k] for k in kinds or ()],
                page=page.repodocs(),
            )
        )
        documents = [repo_summary_from_pb(d) for d in response.documents]
        await warn_of_collection_copies(documents, self._principal, self._backends, self._access)
        return page_of(documents, response.next_page_token)

    async def document(self, repository: RepositoryName, document_id: str) -> RepoDocument:
        """One indexed document in full."""
        document_id = parse_id(document_id, "document")
        found = await self._access.repository(self._principal, Operation.GET_REPO_DOCUMENT, repository)
        response = await self._backends.repodocs.GetDocument(
            rpb.GetDocumentRequest(repository_id=found.repository_id, document_id=document_id)
        )
        document = repo_document_from_pb(response.document)
        await warn_of_collection_copies([document], self._principal, self._backends, self._access)
        return document

    async def docs_tree(self, repository: RepositoryName) -> DocsTree:
        found = await self._access.repository(self._principal, Operation.GET_DOCS_TREE, repository)
        response = await self._backends.repodocs.GetDocsTree(
            rpb.GetDocsTreeRequest(repository_id=found.repository_id)
        )
        return DocsTree(roots=[docs_tree_node_from_pb(n) for n in response.roots])

    async def docs_page(self, repository: RepositoryName, page_slug: str) -> DocsPage:
        """One docs page: its document, table of contents, navigation and the code it mentions."""
        found = await self._access.repository(self._principal, Operation.GET_DOCS_PAGE, repository)
        response = await self._backends.repodocs.GetDocsPage(
            rpb.GetDocsPageRequest(repository_id=found.repository_id, slug=page_slug)
        )
        return docs_page_from_pb(response)

    async def code_docs(self, repository: RepositoryName, node_id: str, limit: int) -> CodeDocs:
        """The documentation chunks that mention one code symbol."""
        node_id = parse_id(node_id, "code node")
        found = await self._access.repository(self._principal, Operation.GET_CODE_DOCS, repository)
        response = await self._backends.repodocs.GetRelatedDocChunks(
            rpb.GetRelatedDocChunksRequest(
                repository_ids=[found.repository_id], code_node_ids=[node_id], limit=limit
            )
        )
        entry = next((r for r in response.related if r.code_node_id == node_id), None)
        if entry is None:
            raise Problem(404, f"repository {repository} has no code node {node_id}")
        return CodeDocs(node_id=node_id, chunks=[related_from_pb(chunk) for chunk in entry.chunks])

    async def read_file(
        self,
        repository: RepositoryName,
        path: str,
        start: int,
        end: int,
        operation: Operation = Operation.READ_FILE,
    ) -> InRepository[FileRange]:
        """Lines of a source file at the synced commit."""
        file_path = check_file_path(path)
        check_range(start, end)
        found = await self._access.repository(self._principal, operation, repository)
        response = await self._backends.repodocs.ReadFileRange(
            rpb.ReadFileRangeRequest(
                repository_id=found.repository_id, path=file_path, start_line=start, end_line=end
            )
        )
        return InRepository(found.slug, file_range_from_pb(response))

    async def chunk(
        self, repository: RepositoryName, chunk_id: str, operation: Operation
    ) -> InRepository[RepoChunk]:
        """One repository doc chunk in full."""
        chunk_id = parse_id(chunk_id, "chunk")
        found = await self._access.repository(self._principal, operation, repository)
        response = await self._backends.repodocs.GetChunk(
            rpb.GetChunkRequest(repository_id=found.repository_id, chunk_id=chunk_id)
        )
        return InRepository(found.slug, repo_chunk_from_pb(response.chunk))

    async def _shows_sync_errors(self, repository_id: str) -> bool:
        """Whether the caller sees why a sync failed: administrators always, others unless the
        repository is read from the server's disk (git's words quote that directory)."""
        if self._principal.admin:
            return True
        found = await self._backends.repodocs.GetRepository(
            rpb.GetRepositoryRequest(repository_id=repository_id)
        )
        return not reads_server_disk(found.repository)
