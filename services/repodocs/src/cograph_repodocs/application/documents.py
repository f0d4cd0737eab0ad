"""Documents: listing and reading a repository's documents and chunks, finding documents by their
content, the doc chunks that mention code nodes, and the docs reader (the page tree, and one page
with its navigation and the code it discusses).

Pages are the repository's prose (Repo Doc documents). Every document has a slug and
can be opened as a page, but configs, workflows, examples and tests are not in the
tree, so they have no siblings or previous/next.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any, TypeVar

import asyncpg
import msgspec

from cograph_errors import InvalidArgument, NotFound, check_typed_text, parse_content_hashes, shown
from cograph_repodocs.domain import rules
from cograph_repodocs.domain.discovery import DocumentKind
from cograph_repodocs.domain.docs_tree import (
    DocsTree,
    Page,
    PageNav,
    TreeNode,
    build_docs_tree,
    table_of_contents,
)
from cograph_repodocs.domain.headings import find_headings
from cograph_repodocs.domain.model import Heading
from cograph_repodocs.stores.code import CodeStore, MentionedNodeRow
from cograph_repodocs.stores.documents import (
    ChunkRow,
    ContentMatch,
    DocumentRow,
    DocumentStore,
    PageRow,
    RelatedChunkRow,
)
from cograph_repodocs.stores.repositories import RepositoryStore


class DocsPage(msgspec.Struct, frozen=True, kw_only=True):
    document: DocumentRow
    nav: PageNav
    related_code: list[MentionedNodeRow]
    """The code the page mentions, in the order it first mentions each, with how and why."""


class Related(msgspec.Struct, frozen=True):
    """The doc chunks that mention code nodes."""

    node_ids: list[uuid.UUID]
    """The nodes asked for that exist in the scope, in the order asked."""
    chunks: list[RelatedChunkRow]


class Documents:
    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    async def summaries(
        self,
        repository_id: uuid.UUID,
        kinds: Sequence[DocumentKind],
        *,
        limit: int,
        after: Sequence[str | None],
    ) -> list[DocumentRow]:
        """The repository's documents of these kinds (any, when none), by path, after that path."""
        async with self._pool.acquire() as connection:
            await RepositoryStore(connection).require(repository_id)
            return await DocumentStore(connection).summaries(repository_id, kinds, limit=limit, after=after)

    async def get(self, repository_id: uuid.UUID, document_id: uuid.UUID) -> DocumentRow:
        async with self._pool.acquire() as connection:
            row = await DocumentStore(connection).get(repository_id, document_id)
        return _found(row, f"document {document_id}")

    async def chunk(self, repository_id: uuid.UUID, chunk_id: uuid.UUID) -> ChunkRow:
        async with self._pool.acquire() as connection:
            row = await DocumentStore(connection).chunk(repository_id, chunk_id)
        return _found(row, f"chunk {chunk_id}")

    async def by_content(
        self, repository_ids: Sequence[uuid.UUID] | None, content_hashes: list[str]
    ) -> list[ContentMatch]:
        """The documents whose bytes have one of these sha256 digests, in these repositories or
        in every one (None)."""
        hashes = parse_content_hashes(content_hashes)
        if not hashes or (repository_ids is not None and not repository_ids):
            return []
        async with self._pool.acquire() as connection:
            return await DocumentStore(connection).by_content(repository_ids, hashes)

    async def related(
        self, code_node_ids: list[uuid.UUID], repository_ids: Sequence[uuid.UUID], limit: int
    ) -> Related:
        """Up to `limit` chunks (0: the default) per code node of the scope that mention it."""
        if len(code_node_ids) > rules.MAX_RELATED_NODES:
            raise InvalidArgument(f"ask for at most {rules.MAX_RELATED_NODES} code nodes at once")
        limit = rules.related_limit(limit)
        async with self._pool.acquire() as connection:
            known = await CodeStore(connection).in_scope(code_node_ids, repository_ids)
            rows = await DocumentStore(connection).related(code_node_ids, repository_ids, limit)
        return Related([node_id for node_id in code_node_ids if node_id in known], rows)

    async def docs_tree(self, repository_id: uuid.UUID) -> list[TreeNode]:
        async with self._pool.acquire() as connection:
            await RepositoryStore(connection).require(repository_id)
            pages = await DocumentStore(connection).pages(repository_id)
        # Thousands of pages take a while to sort into a tree: off the event loop.
        return await asyncio.to_thread(lambda: roots_of(tree_of(pages)))

    async def docs_page(self, repository_id: uuid.UUID, slug: str) -> DocsPage:
        if not slug:
            raise InvalidArgument("give the slug of a docs page")
        check_typed_text(slug, "slug")
        async with self._pool.acquire() as connection:
            await RepositoryStore(connection).require(repository_id)
            documents = DocumentStore(connection)
            # One snapshot: a sync that removes the page between the reads cannot make them disagree.
            async with connection.transaction(isolation="repeatable_read", readonly=True):
                document = await documents.by_slug(repository_id, slug)
                if document is None:
                    # the caller named the repository: its internal id would tell a reader nothing
                    raise NotFound(f"no docs page {shown(slug)} in this repository")
                related = await CodeStore(connection).mentioned_by_document(document.id)
                pages = (
                    await documents.pages(repository_id) if document.kind is DocumentKind.REPO_DOC else None
                )
        # Parsing a long page takes a while: off the event loop, which serves every other request.
        nav = await asyncio.to_thread(_navigation, document, pages)
        return DocsPage(document=document, nav=nav, related_code=related)


def tree_of(pages: list[PageRow], headings_of: dict[uuid.UUID, DocumentRow] | None = None) -> DocsTree:
    """The tree of these pages; headings (for the tables of contents) only for the documents given."""
    headings_of = headings_of or {}
    return build_docs_tree(
        [
            Page(
                slug=p.slug,
                path=p.path,
                title=p.title,
                headings=_headings(headings_of[p.id]) if p.id in headings_of else [],
            )
            for p in pages
        ]
    )


def roots_of(tree: DocsTree) -> list[TreeNode]:
    """The tree's top level; the root README, the root's own page, comes first as a leaf, named
    and with its path like every page leaf (`README.md`, or the `index.*` that won)."""
    root = tree.root
    if root.slug is None:
        return root.children
    path = tree.page(root.slug).path
    own = TreeNode(
        name=PurePosixPath(path).name, path=path, title=root.title, is_directory=False, slug=root.slug
    )
    return [own, *root.children]


def _navigation(document: DocumentRow, pages: list[PageRow] | None) -> PageNav:
    """Its place in the tree (pages: the repository's, for prose), or only its table of contents."""
    if pages is not None:
        # Only this page's headings are parsed: the others' tables of contents are not shown.
        return tree_of(pages, {document.id: document}).nav(document.slug)
    page = Page(slug=document.slug, path=document.path, title=document.title, headings=_headings(document))
    return PageNav(slug=document.slug, siblings=[], previous=None, next=None, toc=table_of_contents(page))


def _headings(document: DocumentRow) -> list[Heading]:
    return [found.heading for found in find_headings(document.path, document.content)]


R = TypeVar("R")


def _found(row: R | None, what: str) -> R:
    """The row read from the repository, or NotFound naming what was asked for."""
    if row is None:
        raise NotFound(f"{what} does not exist in this repository")
    return row
