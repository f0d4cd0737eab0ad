"""Page slugs: `slugify` is the spec's five steps; `assign_slugs` makes them unique per repository."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

MAX_SLUG_CHARS = 80
SUFFIX_HEX_CHARS = 4
SUFFIX_WIDTHS = (SUFFIX_HEX_CHARS, 2 * SUFFIX_HEX_CHARS)
ATTEMPTS_PER_WIDTH = 4096  # a free 4-hex suffix is found in fewer unless the stem's are all but gone
STRIPPED_PREFIXES = ("docs/", "doc/", "documentation/", "pages/")
DROPPED_EXTENSIONS = (".md", ".mdx", ".markdown", ".rst", ".txt")
# "Alphanumeric" is Unicode-aware, so a page named 指南.md keeps a readable slug.
_NON_ALPHANUMERIC_RUN = re.compile(r"[\W_]+")
_SUFFIX = re.compile(rf"-(?:[0-9a-f]{{{SUFFIX_HEX_CHARS}}}){{1,2}}")


def slugify(path: str) -> str:
    """The slug of a document path: the spec's five steps, literally and in its order."""
    for prefix in STRIPPED_PREFIXES:  # 1
        if path.startswith(prefix):
            path = path[len(prefix) :]
            break
    # Step 2 compares extensions case-insensitively, as discovery does: README.MD is markdown.
    for extension in DROPPED_EXTENSIONS:  # 2
        # The one deviation: a path that step 1 left as nothing but the extension (docs/.md)
        # keeps it, because an empty slug is no URL.
        if path.lower().endswith(extension) and len(path) > len(extension):
            path = path[: -len(extension)]
            break
    slug = path.lower()  # 3
    slug = _NON_ALPHANUMERIC_RUN.sub("-", slug)  # 4
    return slug[:MAX_SLUG_CHARS]  # 5


def assign_slugs(docs: list[tuple[str, str]], held: Mapping[str, str] | None = None) -> dict[str, str]:
    """Map each (document_id, path) to a slug unique within `docs`.

    `held` is the slug each document already has (document_id -> slug). A document keeps
    it while it still derives from its path, so adding or deleting a page never moves
    another page's URL. The others, in (path, id) order, take their bare slug if it is
    free and otherwise `-` plus 4 hex characters of sha1(document_id). The result
    depends only on `docs` and `held`, never on their order.
    """
    ids = [document_id for document_id, _ in docs]
    if len(set(ids)) != len(ids):
        raise ValueError("document ids must be unique")
    held = held or {}
    ordered = sorted(docs, key=lambda doc: (doc[1], doc[0]))
    bases = {document_id: slugify(path) for document_id, path in ordered}

    assigned: dict[str, str] = {}
    used: set[str] = set()
    for document_id, _ in ordered:
        slug = held.get(document_id)
        if slug is not None and slug not in used and _derives_from(slug, bases[document_id]):
            assigned[document_id] = slug
            used.add(slug)
    # Every bare slug is reserved as well, so a suffixed slug can never take one.
    taken = set(bases.values()) | used
    crowded: set[tuple[str, int]] = set()  # (stem, width) whose suffixes ran out
    for document_id, _ in ordered:
        if document_id in assigned:
            continue
        base = bases[document_id]
        slug = base if base not in used else _suffixed(base, document_id, taken, crowded)
        used.add(slug)
        taken.add(slug)
        assigned[document_id] = slug
    return assigned


def _stem(base: str, width: int = SUFFIX_HEX_CHARS) -> str:
    # The base is shortened so that the suffixed slug still fits in 80 characters.
    return base[: MAX_SLUG_CHARS - width - 1]


def _derives_from(slug: str, base: str) -> bool:
    """Whether `slug` is `base` or a suffixed form of it; not so once the slug steps changed."""
    if slug == base:
        return True
    return any(
        slug.startswith(stem := _stem(base, width)) and _SUFFIX.fullmatch(slug[len(stem) :]) is not None
        for width in SUFFIX_WIDTHS
    )


def _suffixed(base: str, document_id: str, taken: set[str], crowded: set[tuple[str, int]]) -> str:
    """The spec's 4 hex characters of sha1(document_id); when those are taken, further hashes of
    the id; and only when a stem's 65,536 suffixes are (nearly) all taken, 8 characters: 4 alone
    would never end once pages sharing one 80-character prefix outnumber them."""
    for width in SUFFIX_WIDTHS:
        stem = _stem(base, width)
        if (stem, width) in crowded:  # found full for an earlier page: no need to try again
            continue
        for attempt in range(ATTEMPTS_PER_WIDTH):
            # Attempt 0 is the documented sha1(document_id); later ones only break a
            # second collision, which needs two ids sharing a 16-bit hash prefix.
            seed = document_id if attempt == 0 else f"{document_id}#{attempt}"
            digest = hashlib.sha1(seed.encode(), usedforsecurity=False).hexdigest()
            slug = f"{stem}-{digest[:width]}"
            if slug not in taken:
                return slug
        crowded.add((stem, width))
    raise ValueError(f"no free slug for {base!r}")  # 4,096 hashes of 32 bits, all taken: not in this world
