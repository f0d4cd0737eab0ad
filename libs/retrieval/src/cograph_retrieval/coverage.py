"""How far full text's ranking is worth trusting for one query: the share of the query's information
(its lexemes' IDF, words no chunk holds counted at the highest IDF) that full text's best chunk
holds, known once the text stream has run.

Equal weights trust both streams alike. A query written in the page's words is held whole by
some chunk, and full text's ranking deserves its full weight; a question that paraphrases the page
shares only its common words with it, and full text's ranking is then noise that outvotes the
dense stream. Measured on bench/astro_questions.py's 90 questions, full text's best
chunk held a median 1.00 of keyword and question queries' information and 0.50 of paraphrases'.
"""

from __future__ import annotations

from cograph_retrieval.bm25 import idf

# Full text's weight is the dense stream's times its coverage: equal where its best chunk holds the
# whole query, less as it holds less. No constant is tuned. With the score fusion (fusion.py) on
# the four relevance benchmarks (SciFact, the two description sets, the three styles of astro
# questions), that ratio left fusion no worse than its better stream on any figure; scaling it by
# 0.83 cost keyword MRR@10 0.017, by 1.23 paraphrase recall@5 0.017 (one question in 30 each).


def query_idf(document_frequencies: list[int], chunks: int) -> float:
    """The query's information: its lexemes' IDF summed, a lexeme no chunk holds at the highest."""
    return sum(idf(frequency, chunks) for frequency in document_frequencies)


def coverage(matched_idf: float, query_idf: float) -> float:
    """The share of the query's information a chunk holds, 0 to 1."""
    return min(matched_idf / query_idf, 1.0) if query_idf > 0 else 0.0


def trusted_weights(dense: float, text: float, text_coverage: float) -> tuple[float, float]:
    """The dense and text weights for one query, given full text's coverage: their ratio moved by
    coverage, their sum kept, so a fused score keeps its scale (a hit first in both streams still
    scores dense + text, which Route's confidence is measured against)."""
    trusted_text = text * text_coverage
    if dense <= 0 or text <= 0 or trusted_text + dense <= 0:
        return dense, text
    scale = (dense + text) / (dense + trusted_text)
    return dense * scale, trusted_text * scale
