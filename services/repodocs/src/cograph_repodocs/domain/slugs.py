"""Page slugs: `slugify` is the spec's five steps; `assign_slugs` makes them unique per repository."""

from __future__ import annotations

import hashlib
import re

MAX_SLUG_CHARS = 80
SUFFIX_HEX_CHARS = 4
STRIPPED_PREFIXES = ("docs/", "doc/", "documentation/", "pages/")
DROPPED_EXTENSIONS = (".md", ".mdx", ".markdown", ".rst", ".txt")
EMPTY_SLUG = "page"
# "Alphanumeric" is Unicode-aware, so a page named 指南.md keeps a readable slug.
_NON_ALPHANUMERIC_RUN = re.compile(r"[\W_]+")


def slugify(path: str) -> str:
    """The slug of a document path. Steps 1 and 2 run before lowercasing, as the spec orders them.

    Dashes left at either end by step 4 or step 5 are trimmed, and a path with no
    alphanumerics at all becomes "page": neither case has a readable URL otherwise.
    """
    for prefix in STRIPPED_PREFIXES:  # 1
        if path.startswith(prefix):
            path = path[len(prefix) :]
            break
    for extension in DROPPED_EXTENSIONS:  # 2
        if path.endswith(extension):
            path = path[: -len(extension)]
            break
    slug = path.lower()  # 3
    slug = _NON_ALPHANUMERIC_RUN.sub("-", slug).strip("-")  # 4
    slug = slug[:MAX_SLUG_CHARS].rstrip("-")  # 5
    return slug or EMPTY_SLUG


def assign_slugs(docs: list[tuple[str, str]]) -> dict[str, str]:
    """Map each (document_id, path) to a slug unique within `docs`.

    Among documents sharing a slug, the one with the smallest (path, id) keeps it
    bare and the others get `-` plus 4 hex characters of sha1(document_id). The
    result depends only on the set of documents, never on their order.
    """
    ids = [document_id for document_id, _ in docs]
    if len(set(ids)) != len(ids):
        raise ValueError("document ids must be unique")
    ordered = sorted(docs, key=lambda doc: (doc[1], doc[0]))
    bases = {document_id: slugify(path) for document_id, path in ordered}

    assigned: dict[str, str] = {}
    # Every bare slug is reserved first, so a suffixed slug can never take one.
    taken: set[str] = set(bases.values())
    claimed_bare: set[str] = set()
    for document_id, _ in ordered:
        base = bases[document_id]
        if base not in claimed_bare:
            claimed_bare.add(base)
            assigned[document_id] = base
            continue
        slug = _suffixed(base, document_id, taken)
        taken.add(slug)
        assigned[document_id] = slug
    return assigned


def _suffixed(base: str, document_id: str, taken: set[str]) -> str:
    # The base is shortened so that the suffixed slug still fits in 80 characters.
    stem = base[: MAX_SLUG_CHARS - SUFFIX_HEX_CHARS - 1].rstrip("-") or EMPTY_SLUG
    attempt = 0
    while True:
        # Attempt 0 is the documented sha1(document_id); later ones only break a
        # second collision, which needs two ids sharing a 16-bit hash prefix.
        seed = document_id if attempt == 0 else f"{document_id}#{attempt}"
        digest = hashlib.sha1(seed.encode(), usedforsecurity=False).hexdigest()
        slug = f"{stem}-{digest[:SUFFIX_HEX_CHARS]}"
        if slug not in taken:
            return slug
        attempt += 1
