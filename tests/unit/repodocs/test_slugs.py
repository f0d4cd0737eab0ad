"""Slugs: the spec's five steps, and uniqueness by a deterministic suffix."""

from __future__ import annotations

import itertools
import uuid

import pytest

from cograph_repodocs.domain.slugs import assign_slugs, slugify


@pytest.mark.parametrize(
    ("path", "slug"),
    [
        ("README.md", "readme"),
        ("docs/Getting Started.md", "getting-started"),
        ("doc/api/Client_API.mdx", "api-client-api"),
        ("documentation/guide.markdown", "guide"),
        ("pages/about/index.rst", "about-index"),
        ("notes/todo.txt", "notes-todo"),
        ("services/repodocs/README.md", "services-repodocs-readme"),
        # Only one leading prefix, and only at the start.
        ("docs/docs/a.md", "docs-a"),
        ("src/docs/a.md", "src-docs-a"),
        # Step 1 comes before lowercasing, so it is case-sensitive; step 2 compares extensions
        # case-insensitively, as discovery does.
        ("Docs/Guide.md", "docs-guide"),
        ("README.MD", "readme"),
        ("docs/Setup.Rst", "setup"),
        # Only the last, listed extension is dropped.
        ("CHANGELOG.md.txt", "changelog-md"),
        (".github/workflows/ci.yml", "-github-workflows-ci-yml"),
        ("Dockerfile", "dockerfile"),
        # Runs of anything non-alphanumeric, underscores included, become one dash, at the ends too.
        ("docs/--Weird__name!!.md", "-weird-name-"),
        ("docs/_index.md", "-index"),
        ("docs/v1.2/Über Café.md", "v1-2-über-café"),
        ("docs/指南.md", "指南"),
        ("docs/!!!.md", "-"),
        # The one deviation from the steps: a name that is only the extension keeps it (no empty slug).
        ("docs/.md", "-md"),
        (".RST", "-rst"),
    ],
)
def test_slugify(path: str, slug: str) -> None:
    assert slugify(path) == slug


def test_slugify_truncates_to_80_characters() -> None:
    assert slugify("a" * 100 + ".md") == "a" * 80
    # Character 80 is the dash between "aaa…" and "b": step 5 cuts, nothing more.
    assert slugify("a" * 79 + "/b.md") == "a" * 79 + "-"


def test_unique_slugs_are_left_alone() -> None:
    docs = [("id-1", "README.md"), ("id-2", "docs/guide.md")]
    assert assign_slugs(docs) == {"id-1": "readme", "id-2": "guide"}


def test_collisions_get_a_suffix_from_the_document_id_and_the_first_path_keeps_the_bare_slug() -> None:
    docs = [("doc-b", "docs/Guide.md"), ("doc-a", "guide.md"), ("doc-c", "pages/guide.md")]
    # sha1("doc-a") = 65e08cfc…, sha1("doc-c") = d4b9cb02…; "docs/Guide.md" sorts first.
    assert assign_slugs(docs) == {"doc-b": "guide", "doc-a": "guide-65e0", "doc-c": "guide-d4b9"}


def test_assignment_does_not_depend_on_input_order() -> None:
    docs = [("doc-b", "docs/Guide.md"), ("doc-a", "guide.md"), ("doc-c", "pages/guide.md")]
    results = [assign_slugs(list(order)) for order in itertools.permutations(docs)]
    assert all(result == results[0] for result in results)


def test_a_suffix_that_collides_again_is_rehashed() -> None:
    # sha1("doc-25") and sha1("doc-190") both start with db1c; sha1("doc-190#1") starts with 5a3c.
    docs = [("doc-1", "doc/guide.md"), ("doc-25", "docs/guide.md"), ("doc-190", "guide.md")]
    assert assign_slugs(docs) == {"doc-1": "guide", "doc-25": "guide-db1c", "doc-190": "guide-5a3c"}


def test_a_suffixed_slug_never_takes_another_page_s_bare_slug() -> None:
    # "guide-65e0" is a real page; doc-a would otherwise get that slug. sha1("doc-a#1") starts with 8c57.
    docs = [("doc-x", "docs/guide.md"), ("doc-a", "guide.md"), ("doc-y", "guide-65e0.md")]
    assert assign_slugs(docs) == {"doc-x": "guide", "doc-a": "guide-8c57", "doc-y": "guide-65e0"}


def test_suffixed_slugs_stay_within_80_characters() -> None:
    long_path = "a" * 90 + ".md"
    slugs = assign_slugs([("doc-a", long_path), ("doc-b", "docs/" + long_path)])
    # "aaa….md" sorts before "docs/…" and keeps the bare slug; sha1("doc-b") = add88ea9….
    assert slugs == {"doc-a": "a" * 80, "doc-b": "a" * 75 + "-add8"}


def test_duplicate_document_ids_are_rejected() -> None:
    with pytest.raises(ValueError, match="unique"):
        assign_slugs([("doc-a", "a.md"), ("doc-a", "b.md")])


def test_a_page_keeps_its_slug_when_a_path_sorting_before_it_takes_the_same_base() -> None:
    docs = [("doc-b", "docs/guide.md"), ("doc-a", "doc/guide.md")]
    # doc/guide.md sorts first but is new: the bare slug stays with the page that has it.
    assert assign_slugs(docs, {"doc-b": "guide"}) == {"doc-b": "guide", "doc-a": "guide-65e0"}


def test_a_suffixed_page_keeps_its_suffix_when_the_bare_slug_is_freed() -> None:
    docs = [("doc-a", "guide.md"), ("doc-c", "pages/guide.md")]
    # The page that held "guide" is gone; doc-a keeps its URL and the new page takes the free bare slug.
    assert assign_slugs(docs, {"doc-a": "guide-65e0"}) == {"doc-a": "guide-65e0", "doc-c": "guide"}


def test_a_held_slug_is_also_kept_from_a_page_whose_bare_slug_it_is() -> None:
    docs = [("doc-a", "guide.md"), ("doc-y", "guide-65e0.md")]
    # sha1("doc-y") starts with f5f5.
    assert assign_slugs(docs, {"doc-a": "guide-65e0"}) == {"doc-a": "guide-65e0", "doc-y": "guide-65e0-f5f5"}


def test_a_held_slug_the_slug_steps_no_longer_give_is_assigned_again() -> None:
    docs = [("doc-a", "README.MD"), ("doc-b", "docs/_index.md")]
    held = {"doc-a": "readme-md", "doc-b": "index"}
    assert assign_slugs(docs, held) == {"doc-a": "readme", "doc-b": "-index"}


def test_assignment_with_held_slugs_does_not_depend_on_input_order() -> None:
    docs = [("doc-b", "docs/Guide.md"), ("doc-a", "guide.md"), ("doc-c", "pages/guide.md")]
    held = {"doc-a": "guide", "doc-c": "guide-d4b9"}  # sha1("doc-b") starts with add8
    results = [assign_slugs(list(order), held) for order in itertools.permutations(docs)]
    assert results[0] == {"doc-a": "guide", "doc-b": "guide-add8", "doc-c": "guide-d4b9"}
    assert all(result == results[0] for result in results)


def test_more_pages_than_four_hex_suffixes_on_one_stem_still_get_unique_slugs() -> None:
    """65,536 suffixes of 4 hex characters: pages sharing an 80-character prefix beyond that many
    (the sync looped forever) take 8; the others keep the spec's 4, and every slug is kept."""
    count = 16**4 + 2
    docs = [(str(uuid.UUID(int=index)), f"docs/{'a' * 90}/p{index}.md") for index in range(count)]
    slugs = assign_slugs(docs)
    assert len(set(slugs.values())) == count
    assert all(len(slug) <= 80 for slug in slugs.values())
    suffixes = [len(slug.rsplit("-", 1)[1]) for slug in slugs.values() if slug != "a" * 80]
    assert suffixes.count(4) > count - 100
    assert set(suffixes) == {4, 8}
    assert assign_slugs(docs, slugs) == slugs  # held slugs, 8-character ones too, stay
