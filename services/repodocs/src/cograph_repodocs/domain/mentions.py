"""Code identifiers mentioned in prose, and resolving them to code nodes.

Three forms, tried in this order so each span of text is reported once:
backticked (`ParseConfig`, ``module.Class``, `pkg.fn()`), call syntax
(validate()), and plain dotted names (service.handler.dispatch).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from enum import StrEnum
from itertools import pairwise

import msgspec


class MentionForm(StrEnum):
    BACKTICK = "backtick"
    DOTTED = "dotted"
    CALL = "call"
    REFERENCE = "reference"
    """An mkdocs-autorefs reference: `[Name][pkg.mod.Name]`, or `[Name][]` leaving the target
    to be resolved."""


class Mention(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    """The identifier, without backticks, parentheses or arguments."""
    form: MentionForm
    start: int
    """Offset of the identifier's first character in the scanned text."""
    target: str | None = None
    """The full name the text states the mention means (a reference's target, a role's name)."""
    marked: bool = False
    """The author marked it as a symbol (a reference, a Sphinx role), even without a target."""
    called: bool = False
    """Written as a call (`parse()`, `load(path)`): it names something callable."""


class ResolvedMention(msgspec.Struct, frozen=True, kw_only=True):
    code_node_key: str
    form: MentionForm
    text: str
    start: int
    """Offset of the node's first mention in the scanned text."""


# A name starts with a letter of any script, `_` or `$` and goes on with letters, digits, `_`, `$`
# (Python's `Überweisung`, `計算`; JavaScript's `$http`), as retrieval's identifiers do; the guards
# below (`[\w$]`) are Unicode-aware alike.
_IDENT = r"(?:[^\W\d]|\$)[\w$]*"
_DOTTED = rf"{_IDENT}(?:\.{_IDENT})*"
# One or two backticks on each side (rst literals use two); never three, which fence code.
_BACKTICK = re.compile(r"(?<!`)(`{1,2})(?!`)([^`\n]+?)(?<!`)\1(?!`)")
_BACKTICK_BODY = re.compile(rf"\s*({_DOTTED})(\([^()]*\))?\s*")
# A Sphinx cross-reference role right before a span (`:class:`, `:py:meth:`) makes it a
# reference: its target may start with `~` (show the last segment), `!` (no link) or `.`
# (relative), and may be written `title <target>`. The mention is the target: with `~` the
# full dotted name, with a leading `.` the name after it.
_ROLE_BEFORE = re.compile(r"(?<![\w:`]):(?:[A-Za-z][\w.+-]*:)+\Z")
_ROLE_TARGET = re.compile(r"\s*[!~]{0,2}\.?([^<>]*)\s*")
_ROLE_TITLED_TARGET = re.compile(r"[^<>]*<\s*[!~]{0,2}\.?([^<>]*)>\s*")
_LONGEST_ROLE = 64
# `[text][target]` with an identifier as text, backticked or not, maybe with `()`; an empty target
# (`[Name][]`) asks the reader to find it.
_REFERENCE = re.compile(rf"\[(`?)({_DOTTED})(\(\))?\1\]\[({_DOTTED})?\]")
_CALL = re.compile(rf"(?<![\w$.])({_DOTTED})\(([^()\n]*)\)")
_DOTTED_NAME = re.compile(rf"(?<![\w$.])({_IDENT}(?:\.{_IDENT})+)(?![\w$])")
_TOKEN = re.compile(r"\S+")
# A whitespace-delimited token holding one of these is a URL, an e-mail address or a
# path, whose dots are not code. (Checked per token: a regex here went quadratic on long tokens.)
_NOT_CODE_MARKERS = ("://", "www.", "mailto:", "@", "/")

# A last segment that names a file type or a top-level domain makes it a file or host name.
_FILE_EXTENSION_WORDS = """
    md mdx markdown rst txt html htm css scss pdf log
    py pyi go ts tsx js jsx mjs cjs sh bash zsh ps1 bat rb rs java kt c h cc cpp hpp cs swift php sql proto
    json yaml yml toml ini cfg conf env lock mod sum xml csv tsv
    png jpg jpeg gif svg zip gz tar tgz whl exe dll so dylib pem crt key
"""
FILE_EXTENSIONS = frozenset(_FILE_EXTENSION_WORDS.split())
DOMAIN_SUFFIXES = frozenset({"com", "org", "net", "io", "dev", "ai", "app", "co", "edu", "gov", "info", "me"})
# Receivers that only say "this object": `self.client.connect` is about `client.connect`.
RECEIVER_PREFIXES = ("self.", "cls.", "this.")
# A name shared by more nodes than this is too generic to link (`run`, `main`, `New`).
MAX_CANDIDATES = 3


def find_mentions(text: str) -> list[Mention]:
    """Every identifier mention in `text`, by offset."""
    mentions: list[Mention] = []
    occupied = [False] * len(text)

    def occupy(start: int, end: int) -> None:
        occupied[start:end] = [True] * (end - start)

    def claim(start: int, end: int) -> bool:
        if any(occupied[start:end]):
            return False
        occupy(start, end)
        return True

    for match in _REFERENCE.finditer(text):
        occupy(match.start(), match.end())
        mentions.append(
            Mention(
                text=match.group(2),
                form=MentionForm.REFERENCE,
                start=match.start(2),
                target=match.group(4),
                marked=True,
                called=match.group(3) is not None,
            )
        )
    for match in _BACKTICK.finditer(text):
        if any(occupied[match.start() : match.end()]):
            continue
        # The whole span is taken even when it is not an identifier (`make test`).
        occupy(match.start(), match.end())
        found = _backtick_identifier(text, match)
        if found is not None:
            name, start, role, called = found
            mentions.append(
                Mention(
                    text=name,
                    form=MentionForm.BACKTICK,
                    start=start,
                    # A role names a symbol: its dotted name is the full name or a suffix of it.
                    target=name if role and "." in name else None,
                    marked=role,
                    called=called,
                )
            )
    for match in _TOKEN.finditer(text):
        if any(marker in match.group() for marker in _NOT_CODE_MARKERS):
            occupy(match.start(), match.end())
    for match in _CALL.finditer(text):
        name, arguments = match.group(1), match.group(2)
        # "item(s)" is prose; with arguments only names that look like code count.
        if arguments.strip() and not _looks_like_code(name):
            continue
        if claim(match.start(), match.end()) and not _is_abbreviation(name):
            mentions.append(Mention(text=name, form=MentionForm.CALL, start=match.start(1), called=True))
    for match in _DOTTED_NAME.finditer(text):
        name = match.group(1)
        if _looks_like_file_or_host(name) or _is_abbreviation(name):
            continue
        if claim(match.start(), match.end()):
            mentions.append(Mention(text=name, form=MentionForm.DOTTED, start=match.start(1)))
    return sorted(mentions, key=lambda m: m.start)


def _backtick_identifier(text: str, match: re.Match[str]) -> tuple[str, int, bool, bool] | None:
    """The identifier a code span names, its offset, whether a role marks it and whether it is
    written as a call: the span itself, or a role's target."""
    content, offset = match.group(2), match.start(2)
    role = bool(_ROLE_BEFORE.search(text, max(0, match.start() - _LONGEST_ROLE), match.start()))
    if role:
        target = _ROLE_TITLED_TARGET.fullmatch(content) or _ROLE_TARGET.fullmatch(content)
        if target is None:
            return None
        content, offset = target.group(1), offset + target.start(1)
    body = _BACKTICK_BODY.fullmatch(content)
    if body is None or _looks_like_file_or_host(body.group(1)):
        return None
    return body.group(1), offset + body.start(1), role, body.group(2) is not None


def _looks_like_file_or_host(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return "." in name and (last in FILE_EXTENSIONS or last in DOMAIN_SUFFIXES)


def _is_abbreviation(name: str) -> bool:
    # e.g, i.e, a.k.a, U.S: every segment one letter. "etc" has no dot and never matches.
    return all(len(segment) == 1 for segment in name.split("."))


def _looks_like_code(name: str) -> bool:
    # camelCase in any script: a lower-case letter followed by an upper-case one (getUser, überWeisung).
    camel = any(a.islower() and b.isupper() for a, b in pairwise(name))
    return "." in name or "_" in name or camel


class SymbolIndex:
    """Code nodes of one repository, looked up by qualified name, name and dotted suffix."""

    def __init__(self, rows: Iterable[tuple[str, str, str]]) -> None:
        """`rows` are (node_id, name, qualified_name), as code_nodes stores them."""
        self._by_qualified: dict[str, list[str]] = defaultdict(list)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        self._by_suffix: dict[str, list[str]] = defaultdict(list)
        for node_id, name, qualified_name in rows:
            self._by_qualified[qualified_name].append(node_id)
            self._by_name[name].append(node_id)
            segments = qualified_name.split(".")
            # Proper dotted suffixes of two or more segments: "Class.method", "mod.Class.method".
            for cut in range(1, len(segments) - 1):
                self._by_suffix[".".join(segments[cut:])].append(node_id)

    def lookup(self, identifier: str) -> list[str]:
        """Node ids for an identifier: the first rule that matches wins; too many matches link nothing."""
        for table in (self._by_qualified, self._by_suffix, self._by_name):
            nodes = list(dict.fromkeys(table.get(identifier, ())))
            if nodes:
                return nodes if len(nodes) <= MAX_CANDIDATES else []
        return []


def resolve_mentions(mentions: Iterable[Mention], index: SymbolIndex) -> list[ResolvedMention]:
    """One link per code node, from its first mention in text order."""
    resolved: dict[str, ResolvedMention] = {}
    for mention in sorted(mentions, key=lambda m: m.start):
        identifier = mention.text
        for prefix in RECEIVER_PREFIXES:
            if identifier.startswith(prefix):
                identifier = identifier[len(prefix) :]
                break
        for node_id in index.lookup(identifier):
            resolved.setdefault(
                node_id,
                ResolvedMention(
                    code_node_key=node_id, form=mention.form, text=mention.text, start=mention.start
                ),
            )
    return list(resolved.values())
