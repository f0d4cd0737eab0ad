"""What the dense stream embeds for a chunk: the chunk's text with its context (the document's title,
the chunk's heading path), cut into windows the model reads whole.

A sentence-transformer reads a fixed number of word pieces (all-MiniLM-L6-v2: 256, about 1,000
characters) and drops the rest, so a longer chunk is embedded window by window, each window
carrying the context, and the dense stream scores the chunk by its nearest window. A chunk that
fits is one window. The recipe is recorded beside the model's name with every vector: a vector
made by another recipe is stale, and a re-embed replaces it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import msgspec

from cograph_embeddings import EmbeddingProvider, InputWindows

RECIPE = "context+windows/1"
"""Stored with every chunk vector: change it whenever what is embedded for a chunk changes."""

# Word pieces consecutive windows share, so a sentence cut at a window's end is whole in the next.
OVERLAP_TOKENS = 32
# The context never takes more than this share of a window: the chunk's text is what it is about.
CONTEXT_SHARE = 0.25
# Windows of one chunk at most. Prose at the largest chunk size (4,000 characters) is about 900
# word pieces, 5 windows, and identifier-heavy text fits in 8; a chunk that needs more is data
# (minified JSON is 0.73 word pieces a character: a 0.9 MB file took 6,000 forward passes, minutes),
# and its first window alone stands for it, as every chunk's did before windows.
MAX_WINDOWS = 8
# A context item the chunk's text opens with (its heading written at its top) is not said again.
OPENING_CHARS = 200
# The context is cut to this before it is tokenized: a window holds at most CONTEXT_SHARE of it
# (64 word pieces, a few hundred characters), and a heading can be a whole minified file, repeated
# in the heading path of each of its hundreds of chunks (tokenizing those took 24 GB).
CONTEXT_CHARS = 1000
_SEPARATOR = "\n\n"


class Passage(msgspec.Struct, frozen=True):
    """A chunk as it is embedded: its context, outermost first (title, headings), and its text."""

    context: Sequence[str]
    text: str


def _context(items: Sequence[str], opening: str = "") -> str:
    """The context items, each once, without those the opening of the text already says."""
    seen: set[str] = set()
    kept: list[str] = []
    opening = " ".join(opening[:OPENING_CHARS].split()).casefold()
    for written in items:
        item = " ".join(written[:CONTEXT_CHARS].split())
        key = item.casefold()
        if item and key not in seen and key not in opening:
            seen.add(key)
            kept.append(item)
    return " > ".join(kept)[:CONTEXT_CHARS]


def _joined(context: str, text: str) -> str:
    return f"{context}{_SEPARATOR}{text}" if context else text


def cut(tokens: InputWindows, passages: Sequence[Passage]) -> list[list[str]]:
    """Each passage's windows, as the texts to embed. Blocking (tokenizes): run it in a thread."""
    if not passages:
        return []
    contexts = [_context(p.context) for p in passages]
    text_spans = tokens.spans([p.text for p in passages])
    context_spans = tokens.spans(contexts)
    return [
        _windows(tokens.max_tokens, passage, context, spans, own)
        for passage, context, spans, own in zip(passages, contexts, text_spans, context_spans, strict=True)
    ]


def _windows(
    max_tokens: int, passage: Passage, context: str, spans: list[tuple[int, int]], own: list[tuple[int, int]]
) -> list[str]:
    """One passage's windows: the first with the context its text does not open with, the
    others with all of it (capped at its share of a window, cut at a word piece)."""
    cap = int(max_tokens * CONTEXT_SHARE)
    first = _context(passage.context, passage.text)
    if len(own) > cap:
        context = context[: own[cap - 1][1]] if cap else ""
        first = first if len(first) <= len(context) else context
    budget = max_tokens - min(len(own), cap)
    if len(spans) <= budget:
        return [_joined(first, passage.text)]
    # As few full windows as cover the text with at least OVERLAP_TOKENS shared between
    # neighbours, spread evenly: the last is as long as the others, not a short remainder
    # whose few words would make all its vector.
    overlap = min(OVERLAP_TOKENS, budget // 4)
    count = -(-(len(spans) - overlap) // (budget - overlap))
    if count > MAX_WINDOWS:
        return [_joined(first, passage.text[: spans[budget - 1][1]])]
    stride = (len(spans) - budget) / (count - 1)
    windows: list[str] = []
    for index in range(count):
        start = round(index * stride)
        # A window starts with a word, not inside one (a word piece right after the one before).
        for _ in range(overlap // 2):
            if start == 0 or spans[start][0] != spans[start - 1][1]:
                break
            start += 1
        end = min(start + budget, len(spans)) if index < count - 1 else len(spans)
        window = passage.text[spans[start][0] : spans[end - 1][1]]
        windows.append(_joined(first if not windows else context, window))
    return windows


async def windows(provider: EmbeddingProvider, passages: Sequence[Passage]) -> list[list[str]]:
    """Each passage's texts to embed: its windows where the provider knows its model's input
    length, else the passage whole with its context (a remote model truncates what it cannot read)."""
    tokens = await provider.input_windows()
    if tokens is None:
        return [[_joined(_context(p.context, p.text), p.text)] for p in passages]
    return await asyncio.to_thread(cut, tokens, passages)


async def embed_passages(provider: EmbeddingProvider, passages: Sequence[Passage]) -> list[list[list[float]]]:
    """Each passage's window vectors, in order; the first is the one stored on the chunk itself."""
    texts = await windows(provider, passages)
    vectors = await provider.embed([text for group in texts for text in group])
    grouped: list[list[list[float]]] = []
    start = 0
    for group in texts:
        grouped.append(vectors[start : start + len(group)])
        start += len(group)
    return grouped
