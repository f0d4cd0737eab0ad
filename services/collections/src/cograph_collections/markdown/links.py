"""Pure helpers for link classification and for resolving links inside a collection.

Source keys keep their case: two documents whose keys differ only in case are two
documents, as they would be in a git checkout. Case-insensitive matching is reserved
for wiki links, which Obsidian resolves case-insensitively by note name.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from cograph_collections.markdown.model import LinkType

_ABSOLUTE_PREFIXES = ("http://", "https://", "mailto:", "ftp://")
_MARKDOWN_SUFFIXES = (".md", ".mdx")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SLASHES = re.compile(r"/{2,}")
# The target key of a link to the collection's root folder ('/', or '../' one level down):
# resolve_links binds it to the root's index or README page, as it does any folder's.
ROOT_FOLDER_KEY = "/"
# In UTF-8 bytes: keys are indexed, and a btree row holds at most 2,704 bytes.
MAX_SOURCE_KEY_BYTES = 1024
# Obsidian embeds of these are attachments (images, media, PDFs, canvases), not notes.
_ATTACHMENT_SUFFIX = re.compile(
    r"\.(?:png|jpe?g|gif|bmp|svg|webp|avif|ico|tiff?|mp3|webm|wav|m4a|ogg|3gp|flac|mp4|ogv|mov|mkv"
    r"|pdf|canvas|base|excalidraw|csv|json|zip)$",
    re.IGNORECASE,
)


def split_fragment(href: str) -> tuple[str, str | None]:
    """('path', 'fragment') of an href; the fragment is None when there is no '#'."""
    path, hash_sign, fragment = href.partition("#")
    return path, (fragment if hash_sign else None)


def is_attachment(wiki_target: str) -> bool:
    """Whether an Obsidian ![[embed]] target names an attachment rather than a note."""
    return _ATTACHMENT_SUFFIX.search(split_fragment(wiki_target)[0].strip()) is not None


def classify_href(href: str) -> LinkType:
    """Link type of a [text](href) destination (wiki links are classified by the parser)."""
    if href.lower().startswith(_ABSOLUTE_PREFIXES):
        return "absolute"
    if href.startswith("#"):
        return "anchor"
    path = split_fragment(href)[0].partition("?")[0]
    if path.lower().endswith(_MARKDOWN_SUFFIXES):
        return "markdown"
    return "relative"


def _resolve_segments(path: str) -> list[str] | None:
    """Segments of a '/'-separated path with '.' and '..' resolved; None if '..' leaves the root."""
    resolved: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not resolved:
                return None
            resolved.pop()
        else:
            resolved.append(segment)
    return resolved


def normalise_source_key(key: str) -> str:
    """Canonical form of a source key: '/' separators, no leading './' or '/', no '//',
    '.' and '..' resolved ('..' above the root is dropped; validate_source_key rejects it).
    Case is preserved."""
    path = _SLASHES.sub("/", key.strip().replace("\\", "/"))
    segments: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
        else:
            segments.append(segment)
    return "/".join(segments)


def validate_source_key(key: str) -> str | None:
    """None when key is acceptable as a document's source key, else the reason it is not."""
    if not key or not key.strip():
        return "source key is empty"
    if len(key) > MAX_SOURCE_KEY_BYTES or len(key.encode(errors="replace")) > MAX_SOURCE_KEY_BYTES:
        return f"source key is longer than {MAX_SOURCE_KEY_BYTES} bytes in UTF-8"
    if _CONTROL.search(key):
        return "source key contains a NUL or control character"
    path = key.strip().replace("\\", "/")
    if path.startswith("//") or _DRIVE.match(path):
        return f"source key {key!r} is an absolute path outside the collection"
    if _resolve_segments(path) is None:
        return f"source key {key!r} escapes the collection root with '..'"
    if not normalise_source_key(key):
        return f"source key {key!r} names no document"
    return None


def _directory_of(source_key: str) -> str:
    return normalise_source_key(source_key).rpartition("/")[0]


def strip_markdown_suffix(name: str) -> str:
    lowered = name.lower()
    for suffix in _MARKDOWN_SUFFIXES:
        if lowered.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _url_decoded(text: str) -> str:
    """%-escapes decoded; a %00 becomes U+FFFD, as no text column can hold a NUL."""
    return unquote(text).replace("\x00", "\ufffd")


def link_target_key(href: str, link_type: LinkType, from_source_key: str) -> tuple[str | None, str | None]:
    """(target key, anchor) of a link written in the document from_source_key.

    - absolute: (None, fragment): never inside a collection.
    - anchor: (the linking document's own key, fragment).
    - markdown / relative: the path resolved against the linking document's directory
      ('/...' against the collection root), URL-decoded, query dropped; None when it has a URL
      scheme or climbs above the root. A folder ('api/', './', '..') keeps a trailing '/':
      resolve_links binds it to the folder's index or README page, never to a document named
      like the folder. The root folder's key is ROOT_FOLDER_KEY.
    - wiki: the note name (the linking note's own for [[#heading]]), URL-decoded and
      normalised, with a .md/.mdx suffix removed:
      Obsidian resolves it by name anywhere in the vault (see wiki_target_matches).
    Anchors are URL-decoded and returned without '#'; an empty fragment is None. A key longer
    than any source key may be is None: it can name no document (and is indexed).
    """
    key, anchor = _target_key(href, link_type, from_source_key)
    if key is not None and len(key.encode(errors="replace")) > MAX_SOURCE_KEY_BYTES:
        return None, anchor
    return key, anchor


def _target_key(href: str, link_type: LinkType, from_source_key: str) -> tuple[str | None, str | None]:
    raw_path, raw_fragment = split_fragment(href)
    anchor = _url_decoded(raw_fragment) if raw_fragment else None
    if link_type == "absolute":
        return None, anchor
    if link_type == "anchor":
        return normalise_source_key(from_source_key) or None, anchor
    path = _url_decoded(raw_path.partition("?")[0]).replace("\\", "/")
    if link_type == "wiki":
        if not path.strip():  # [[#heading]]: the linking note's own name
            return strip_markdown_suffix(normalise_source_key(from_source_key)) or None, anchor
        name = normalise_source_key(path)
        return (strip_markdown_suffix(name) or None), anchor
    if _SCHEME.match(path) or path.startswith("//"):
        return None, anchor
    if not path:
        # "?query#frag" or "#" alone: the linking document itself.
        return normalise_source_key(from_source_key) or None, anchor
    base = "" if path.startswith("/") else _directory_of(from_source_key)
    segments = _resolve_segments(f"{base}/{path}")
    if segments is None:
        return None, anchor
    if not segments:  # only a folder path ('/', '.', 'docs/..') ends at the root
        return ROOT_FOLDER_KEY, anchor
    folder = path.endswith("/") or path.rpartition("/")[2] in (".", "..")
    return "/".join(segments) + ("/" if folder else ""), anchor


def wiki_target_matches(target_key: str, source_key: str) -> bool:
    """Whether a wiki target key (from link_target_key) names the document source_key.

    Obsidian semantics: case-insensitive, extension optional, and a bare name or a
    partial path matches any document whose path ends with it.
    """
    target = target_key.casefold()
    candidate = strip_markdown_suffix(normalise_source_key(source_key)).casefold()
    return candidate == target or candidate.endswith("/" + target)
