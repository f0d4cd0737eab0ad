"""The docs reader's page tree, sibling lists, previous/next order and tables of contents."""

from __future__ import annotations

import uuid

import pytest

from cograph_repodocs.application.documents import roots_of, tree_of
from cograph_repodocs.domain.docs_tree import (
    NavLink,
    Page,
    TocEntry,
    TreeNode,
    build_docs_tree,
    table_of_contents,
)
from cograph_repodocs.domain.model import Heading
from cograph_repodocs.stores.documents import PageRow


def page(path: str, title: str, slug: str | None = None, headings: list[Heading] | None = None) -> Page:
    return Page(
        slug=slug or path.removesuffix(".md").replace("/", "-").lower(),
        path=path,
        title=title,
        headings=headings or [],
    )


PAGES = [
    page("docs/guides/10-deploy.md", "Deploy"),
    page("README.md", "Project"),
    page("docs/guides/2-setup.md", "Setup"),
    page("docs/guides/README.md", "Guides"),
    page("docs/guides/index.md", "Guide index"),
    page("docs/faq.md", "FAQ"),
    page("docs/api/client.md", "Client"),
    page("CONTRIBUTING.md", "Contributing"),
    page("docs/guides.md", "Guides overview"),
]


def shape(node: TreeNode, depth: int = 0) -> list[str]:
    marker = "/" if node.is_directory else ""
    line = f"{'  ' * depth}{node.name}{marker} [{node.slug}] {node.title}"
    return [line, *(item for child in node.children for item in shape(child, depth + 1))]


def test_tree_has_directories_as_nodes_and_index_or_readme_as_the_directory_page() -> None:
    tree = build_docs_tree(PAGES)
    assert shape(tree.root) == [
        "/ [readme] Project",
        "  CONTRIBUTING.md [contributing] Contributing",
        "  docs/ [None] docs",
        "    api/ [None] api",
        "      client.md [docs-api-client] Client",
        "    faq.md [docs-faq] FAQ",
        # A page sorts before a directory of the same name; digits sort numerically.
        "    guides.md [docs-guides] Guides overview",
        "    guides/ [docs-guides-index] Guide index",
        "      2-setup.md [docs-guides-2-setup] Setup",
        "      10-deploy.md [docs-guides-10-deploy] Deploy",
        "      README.md [docs-guides-readme] Guides",
    ]


def test_previous_and_next_follow_the_tree_depth_first() -> None:
    tree = build_docs_tree(PAGES)
    assert [link.slug for link in tree.order] == [
        "readme",
        "contributing",
        "docs-api-client",
        "docs-faq",
        "docs-guides",
        "docs-guides-index",
        "docs-guides-2-setup",
        "docs-guides-10-deploy",
        "docs-guides-readme",
    ]
    first, setup, last = (
        tree.nav("readme"),
        tree.nav("docs-guides-2-setup"),
        tree.nav("docs-guides-readme"),
    )
    assert (first.previous, first.next) == (None, NavLink(slug="contributing", title="Contributing"))
    assert (setup.previous, setup.next) == (
        NavLink(slug="docs-guides-index", title="Guide index"),
        NavLink(slug="docs-guides-10-deploy", title="Deploy"),
    )
    assert (last.previous, last.next) == (NavLink(slug="docs-guides-10-deploy", title="Deploy"), None)


def test_siblings_are_the_other_pages_of_the_same_directory() -> None:
    tree = build_docs_tree(PAGES)
    assert tree.nav("docs-guides-2-setup").siblings == [
        NavLink(slug="docs-guides-10-deploy", title="Deploy"),
        NavLink(slug="docs-guides-readme", title="Guides"),
    ]
    # A directory page sits among its directory's siblings; a directory without a page is no link.
    assert tree.nav("docs-guides-index").siblings == [
        NavLink(slug="docs-faq", title="FAQ"),
        NavLink(slug="docs-guides", title="Guides overview"),
    ]
    assert tree.nav("contributing").siblings == []
    assert tree.nav("readme").siblings == []


def test_readme_is_the_directory_page_when_there_is_no_index() -> None:
    tree = build_docs_tree([page("docs/README.md", "Docs"), page("docs/a.md", "A")])
    [docs] = tree.root.children
    assert (docs.name, docs.slug, docs.title, [c.slug for c in docs.children]) == (
        "docs",
        "docs-readme",
        "Docs",
        ["docs-a"],
    )


@pytest.mark.parametrize(
    ("root_pages", "roots"),
    [
        (["README.md"], [("README.md", "README.md", False), ("docs", "docs", True)]),
        # index before README, as for any directory: the first leaf is the page that won.
        (
            ["README.md", "index.rst"],
            [("index.rst", "index.rst", False), ("docs", "docs", True), ("README.md", "README.md", False)],
        ),
    ],
)
def test_the_root_page_is_the_first_root_with_its_own_path(
    root_pages: list[str], roots: list[tuple[str, str, bool]]
) -> None:
    rows = [
        PageRow(id=uuid.uuid4(), path=path, title=f"{path} title", slug=path.lower().replace(".", "-"))
        for path in [*root_pages, "docs/guide.md"]
    ]
    nodes = roots_of(tree_of(rows))
    assert [(n.name, n.path, n.is_directory) for n in nodes] == roots
    first = roots[0][0]
    assert (nodes[0].title, nodes[0].slug) == (f"{first} title", first.lower().replace(".", "-"))


def test_empty_tree() -> None:
    tree = build_docs_tree([])
    assert (tree.root.children, tree.order) == ([], [])
    with pytest.raises(KeyError):
        tree.nav("readme")


def test_duplicate_slugs_are_rejected() -> None:
    with pytest.raises(ValueError, match="unique"):
        build_docs_tree([page("a.md", "A", slug="x"), page("b.md", "B", slug="x")])


HEADINGS = [
    Heading(level=1, text="Guide", anchor="guide", line=1),
    Heading(level=2, text="Install", anchor="install", line=3),
    Heading(level=3, text="Linux", anchor="linux", line=5),
    Heading(level=2, text="Install", anchor="install-1", line=9),
]


def test_table_of_contents_drops_the_title_heading() -> None:
    assert table_of_contents(page("guide.md", "Guide", headings=HEADINGS)) == [
        TocEntry(level=2, text="Install", anchor="install"),
        TocEntry(level=3, text="Linux", anchor="linux"),
        TocEntry(level=2, text="Install", anchor="install-1"),
    ]


def test_table_of_contents_keeps_a_first_heading_that_is_not_the_title() -> None:
    toc = table_of_contents(page("guide.md", "guide.md", headings=HEADINGS[1:2]))
    assert toc == [TocEntry(level=2, text="Install", anchor="install")]
    assert (
        build_docs_tree([page("guide.md", "Guide", headings=HEADINGS)]).nav("guide").toc[0].anchor
        == "install"
    )


def test_a_directory_of_thousands_of_pages_is_sorted_once_and_each_page_finds_its_place() -> None:
    """Navigation is built for the page asked for: every page's sibling list built up front was
    the square of a directory's pages (20,000 pages: 3 GB and 20 s)."""
    count = 20_000
    tree = build_docs_tree([page(f"flat/p{index}.md", f"Page {index}") for index in range(count)])
    [flat] = tree.root.children
    assert len(flat.children) == count
    assert [child.name for child in flat.children[:3]] == ["p0.md", "p1.md", "p2.md"]  # natural order
    middle = tree.nav("flat-p500")
    assert (middle.previous, middle.next) == (
        NavLink(slug="flat-p499", title="Page 499"),
        NavLink(slug="flat-p501", title="Page 501"),
    )
    assert len(middle.siblings) == count - 1
