"""The docs reader's navigation: page tree, siblings, previous/next and tables of contents.

Directories are nodes and pages are leaves, except that a directory's
`index.*` or `README.*` (index preferred) is the directory's own page.
Siblings are ordered by natural sort of their names, so `2-setup` precedes
`10-deploy`; previous/next follows the tree depth-first, a directory's own
page before its children.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import msgspec

from cograph_repodocs.domain.model import Heading

DIRECTORY_PAGE_STEMS = ("index", "readme")
PAGE_EXTENSIONS = (".md", ".mdx", ".markdown", ".rst")


class Page(msgspec.Struct, frozen=True, kw_only=True):
    slug: str
    path: str
    title: str
    headings: list[Heading]


class NavLink(msgspec.Struct, frozen=True, kw_only=True):
    slug: str
    title: str


class TocEntry(msgspec.Struct, frozen=True, kw_only=True):
    level: int
    text: str
    anchor: str


class TreeNode(msgspec.Struct, kw_only=True):
    name: str
    """File or directory name; empty for the root."""
    path: str
    """Page path for a page, directory path for a directory ("" for the root)."""
    title: str
    """The page's title; for a directory, its own page's title or else its name."""
    is_directory: bool
    slug: str | None = None
    """Set when the node has a page; a directory without its own page has none."""
    children: list[TreeNode] = msgspec.field(default_factory=list)


class PageNav(msgspec.Struct, frozen=True, kw_only=True):
    slug: str
    siblings: list[NavLink]
    """The other pages in the same directory, in tree order (a directory page's siblings are its
    directory's siblings)."""
    previous: NavLink | None
    next: NavLink | None
    toc: list[TocEntry]


class DocsTree:
    """The tree, every page in order, and each page's navigation on demand: a request shows one
    page's, and building every page's sibling list up front cost the square of a directory's pages."""

    def __init__(
        self, root: TreeNode, order: list[NavLink], pages: list[Page], siblings: dict[str, list[NavLink]]
    ) -> None:
        self.root = root
        self.order = order
        """Every page, depth-first."""
        self._pages = {page.slug: page for page in pages}
        self._positions = {link.slug: position for position, link in enumerate(order)}
        self._siblings = siblings

    def page(self, slug: str) -> Page:
        """The page `slug` (KeyError when it is no page of the tree)."""
        return self._pages[slug]

    def nav(self, slug: str) -> PageNav:
        """The navigation of the page `slug` (KeyError when it is no page of the tree)."""
        position = self._positions[slug]
        order = self.order
        return PageNav(
            slug=slug,
            siblings=[link for link in self._siblings.get(slug, []) if link.slug != slug],
            previous=order[position - 1] if position > 0 else None,
            next=order[position + 1] if position + 1 < len(order) else None,
            toc=table_of_contents(self._pages[slug]),
        )


def build_docs_tree(pages: list[Page]) -> DocsTree:
    slugs = [page.slug for page in pages]
    if len(set(slugs)) != len(slugs):
        raise ValueError("page slugs must be unique")
    root = TreeNode(name="", path="", title="", is_directory=True)
    directories = {"": root}
    directory_pages = _directory_pages(pages)
    for page in pages:
        parts = PurePosixPath(page.path).parts
        directory = _directory_node(directories, parts[:-1])
        if directory_pages.get(directory.path) is page:
            directory.slug, directory.title = page.slug, page.title
        else:
            leaf = TreeNode(
                name=parts[-1], path=page.path, title=page.title, is_directory=False, slug=page.slug
            )
            directory.children.append(leaf)
    _sort(root)

    order: list[NavLink] = []
    siblings: dict[str, list[NavLink]] = {}
    _visit(root, [], order, siblings)
    return DocsTree(root, order, pages, siblings)


def table_of_contents(page: Page) -> list[TocEntry]:
    """Every heading but a leading level-1 title, which the reader already shows as the page title."""
    headings = page.headings
    if headings and headings[0].level == 1 and headings[0].text == page.title:
        headings = headings[1:]
    return [TocEntry(level=h.level, text=h.text, anchor=h.anchor) for h in headings]


def _directory_pages(pages: list[Page]) -> dict[str, Page]:
    """Directory path -> its own page: index before README, then by extension order."""
    best: dict[str, tuple[tuple[int, int, str], Page]] = {}
    for page in pages:
        pure = PurePosixPath(page.path)
        stem, suffix = pure.stem.lower(), pure.suffix.lower()
        if stem not in DIRECTORY_PAGE_STEMS or suffix not in PAGE_EXTENSIONS:
            continue
        rank = (DIRECTORY_PAGE_STEMS.index(stem), PAGE_EXTENSIONS.index(suffix), page.path)
        directory = "" if pure.parent.as_posix() == "." else pure.parent.as_posix()
        if directory not in best or rank < best[directory][0]:
            best[directory] = (rank, page)
    return {directory: page for directory, (_, page) in best.items()}


def _directory_node(directories: dict[str, TreeNode], segments: tuple[str, ...]) -> TreeNode:
    """The node of a directory path, made with its parents when new (found by path, not by a
    walk over each node's children)."""
    path = "/".join(segments)
    node = directories.get(path)
    if node is None:
        parent = _directory_node(directories, segments[:-1])
        node = TreeNode(name=segments[-1], path=path, title=segments[-1], is_directory=True)
        parent.children.append(node)
        directories[path] = node
    return node


def _natural_key(name: str) -> list[tuple[int, int | str]]:
    # Digit runs (the odd parts of the split) compare as numbers; (0, n) sorts before
    # (1, text), so keys of any two names are comparable.
    parts = re.split(r"(\d+)", name.casefold())
    return [(0, int(part)) if index % 2 else (1, part) for index, part in enumerate(parts) if part]


def _sort(node: TreeNode) -> None:
    # Pages sort by stem so that guide.md sits next to guide/, and before it.
    node.children.sort(
        key=lambda c: (
            _natural_key(c.name if c.is_directory else PurePosixPath(c.name).stem),
            c.is_directory,
            c.name,
        )
    )
    for child in node.children:
        _sort(child)


def _visit(
    node: TreeNode, parent_pages: list[NavLink], order: list[NavLink], siblings: dict[str, list[NavLink]]
) -> None:
    """Depth-first: record each page in order, and the page list of the directory it sits in."""
    if node.slug is not None:
        link = NavLink(slug=node.slug, title=node.title)
        order.append(link)
        siblings[node.slug] = parent_pages
    child_pages = [NavLink(slug=c.slug, title=c.title) for c in node.children if c.slug is not None]
    for child in node.children:
        _visit(child, child_pages, order, siblings)
