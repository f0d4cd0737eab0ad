"""The repository docs reader: /repos/:host/:owner/:name/docs, the spec's three columns (page tree,
prose, table of contents) with sibling and previous/next navigation, file-reference pills to the git
host at the synced commit, the code the page mentions (each with the mention and, in words, why it
points there), and the last sync.

A repository the viewer may not read answers exactly as a missing one, as REST does: the same
operations raise the same 404, built from the request alone.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, NamedTuple

from litestar import Controller, Request, get
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath, QueryParameter
from litestar.response import Redirect, Template

from cograph_gateway import schemas as s
from cograph_gateway.access import RepositoryName
from cograph_gateway.operations import Operations
from cograph_gateway.operations.paging import PageRequest
from cograph_gateway.routes.common import repository_in_path
from cograph_gateway.web.pages import EXCEPTION_HANDLERS, view
from cograph_gateway.web.render import render_page

REPO = "/repos/{host:str}/{owner:str}/{name:str}"
# Pages rendered as markdown; other documents (YAML, a Dockerfile, reStructuredText) show as written.
_MARKDOWN_PAGE = re.compile(r"\.(md|mdx|markdown)$", re.IGNORECASE)
# A git host's file URL names a branch after /blob/ (GitHub, Gitea) or /-/blob/ (GitLab).
_BLOB = re.compile(r"(/(?:-/)?blob/)[^/]+$")
LineRange = Annotated[int, QueryParameter(ge=0, le=10_000_000)]

# Why a page's mention points to its code, as the reader says it: one phrase per reason.
REASON_PHRASES: dict[s.MentionReasonName, str] = {
    "explicit_target": "linked explicitly",
    "document_import": "imported in this page",
    "heading_context": "member of the class the heading names",
    "text_context": "member of the class just mentioned",
    "qualified_name": "written with its full name",
    "unique_public": "the only public definition",
    "same_file": "defined in this file",
    "nearest_definition": "the definition nearest this page",
    "name_match": "name match, one of a few definitions",
    "": "reason not recorded yet",
}


class RelatedCode(NamedTuple):
    """One entry of a page's relevant code, as the reader lists it."""

    node: s.CodeNode
    on_host: str | None
    mention: str | None
    """The identifier as the page writes it (None: repodocs did not say)."""
    why: str | None
    """Why that mention points to this node, in words."""


def related_code(page: s.DocsPage, repository: s.Repository) -> list[RelatedCode]:
    """The page's related code with, for each node, its mention on the page and the reason."""
    mentions = {m.node_id: m for m in page.related_code_mentions}
    entries: list[RelatedCode] = []
    for node in page.related_code:
        on_host = file_on_host(repository, node.path, node.start_line, node.end_line)
        found = mentions.get(node.id)
        if found is None:
            entries.append(RelatedCode(node, on_host, None, None))
        else:
            entries.append(RelatedCode(node, on_host, found.mention, REASON_PHRASES[found.reason]))
    return entries


def file_on_host(repository: s.Repository, path: str, start: int = 0, end: int = 0) -> str | None:
    """The file's address on the git host at the commit the index reflects, or None when the
    repository has no web URL. Lines as #Lstart-Lend, the hosts' common form."""
    if not repository.web_url:
        return None
    base = repository.web_url.rstrip("/")
    sync = repository.last_sync
    if sync is not None and sync.commit_sha:
        base = _BLOB.sub(lambda m: f"{m.group(1)}{sync.commit_sha}", base)
    lines = f"#L{start}-L{end}" if start and end else (f"#L{start}" if start else "")
    return f"{base}/{path}{lines}"


def _first_page(nodes: list[s.DocsTreeNode]) -> str | None:
    for node in nodes:
        if node.slug:
            return node.slug
        if (found := _first_page(node.children)) is not None:
            return found
    return None


class ReaderPages(Controller):
    include_in_schema = False
    exception_handlers = EXCEPTION_HANDLERS
    dependencies = {"repository": Provide(repository_in_path, sync_to_thread=False)}  # noqa: RUF012

    @get("/repos")
    async def repositories(
        self, request: Request[Any, Any, Any], web_ops: NamedDependency[Operations]
    ) -> Template:
        page = await web_ops.repositories.readable(PageRequest(500))
        return view("repositories.html", request, repositories=page.items)

    @get(REPO + "/docs")
    async def docs(
        self,
        request: Request[Any, Any, Any],
        repository: NamedDependency[RepositoryName],
        web_ops: NamedDependency[Operations],
    ) -> Template | Redirect:
        tree = await web_ops.repositories.docs_tree(repository)
        if (first := _first_page(tree.roots)) is not None:
            return Redirect(f"/repos/{repository}/docs/{first}")
        found = await web_ops.repositories.get(repository)
        return view("reader.html", request, repository=found, tree=tree.roots, page=None)

    @get(REPO + "/docs/{page_slug:str}")
    async def page(
        self,
        request: Request[Any, Any, Any],
        repository: NamedDependency[RepositoryName],
        page_slug: FromPath[str],
        web_ops: NamedDependency[Operations],
    ) -> Template:
        page = await web_ops.repositories.docs_page(repository, page_slug)
        found = await web_ops.repositories.get(repository)
        tree = await web_ops.repositories.docs_tree(repository)
        document = page.document
        prose = render_page(document.content, page.toc) if _MARKDOWN_PAGE.search(document.path) else None
        return view(
            "reader.html",
            request,
            repository=found,
            slug=str(repository),
            tree=tree.roots,
            page=page,
            prose=prose,
            page_on_host=file_on_host(found, document.path),
            symbols=related_code(page, found),
        )

    @get(REPO + "/files/{path:path}")
    async def file(
        self,
        request: Request[Any, Any, Any],
        repository: NamedDependency[RepositoryName],
        path: FromPath[str],
        web_ops: NamedDependency[Operations],
        start: LineRange = 0,
        end: LineRange = 0,
    ) -> Template:
        found = await web_ops.repositories.read_file(repository, path, start, end)
        text = found.value
        return view(
            "file.html",
            request,
            slug=found.repository,
            text=text,
            lines=list(enumerate(text.content.splitlines(), start=text.start_line)),
        )
