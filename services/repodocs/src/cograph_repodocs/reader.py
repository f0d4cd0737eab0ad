"""The docs reader's data: the page tree, and one page with its navigation and the code it discusses.

Pages are the repository's prose (Repo Doc documents). Every document has a slug and
can be opened as a page, but configs, workflows, examples and tests are not in the
tree, so they have no siblings or previous/next.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import PurePosixPath

import msgspec

from cograph_db import Connection
from cograph_errors import NotFound, shown
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
from cograph_repodocs.stores.code import CodeNodeRow, CodeStore
from cograph_repodocs.stores.documents import DocumentRow, DocumentStore, PageRow


class DocsPage(msgspec.Struct, frozen=True, kw_only=True):
    document: DocumentRow
    nav: PageNav
    related_code: list[CodeNodeRow]


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


async def docs_tree(connection: Connection, repository_id: uuid.UUID) -> list[TreeNode]:
    pages = await DocumentStore(connection).pages(repository_id)
    # Thousands of pages take a while to sort into a tree: off the event loop.
    return await asyncio.to_thread(lambda: roots_of(tree_of(pages)))


async def docs_page(connection: Connection, repository_id: uuid.UUID, slug: str) -> DocsPage:
    documents = DocumentStore(connection)
    # One snapshot: a sync that removes the page between the reads cannot make them disagree.
    async with connection.transaction(isolation="repeatable_read", readonly=True):
        document = await documents.by_slug(repository_id, slug)
        if document is None:
            # the caller named the repository: its internal id would tell a reader nothing
            raise NotFound(f"no docs page {shown(slug)} in this repository")
        related = await CodeStore(connection).mentioned_by_document(document.id)
        pages = await documents.pages(repository_id) if document.kind is DocumentKind.REPO_DOC else None
    # Parsing a long page takes a while: off the event loop, which serves every other request.
    nav = await asyncio.to_thread(_navigation, document, pages)
    return DocsPage(document=document, nav=nav, related_code=related)


def _navigation(document: DocumentRow, pages: list[PageRow] | None) -> PageNav:
    """Its place in the tree (pages: the repository's, for prose), or only its table of contents."""
    if pages is not None:
        # Only this page's headings are parsed: the others' tables of contents are not shown.
        return tree_of(pages, {document.id: document}).nav(document.slug)
    page = Page(slug=document.slug, path=document.path, title=document.title, headings=_headings(document))
    return PageNav(slug=document.slug, siblings=[], previous=None, next=None, toc=table_of_contents(page))


def _headings(document: DocumentRow) -> list[Heading]:
    return [found.heading for found in find_headings(document.path, document.content)]
