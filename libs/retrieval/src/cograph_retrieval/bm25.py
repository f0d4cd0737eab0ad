"""BM25 over PostgreSQL full text.

PostgreSQL ranks without inverse document frequency, which is why long natural-language
questions rank poorly with ts_rank. The stores keep term statistics (document frequency
per lexeme and scope, chunk counts and lengths) in the same transaction as every write, by
triggers this library's DDL defines (ddl/); here they weigh each query lexeme by its IDF, and
chunk length is normalised BM25-style.

The candidates are the chunks holding any query lexeme, rarest lexeme first, until the
chunks they bring would exceed a fixed budget: the commonest lexemes beyond it (in a large
scope, words most chunks hold) select nothing but still count in the score. In a small
scope every lexeme selects, so the ranking is exact there.
"""

from __future__ import annotations

import math

import msgspec

# Robertson/Sparck Jones defaults: not tuned to any one benchmark.
K1 = 1.2
B = 0.75
# Most chunks the selecting lexemes may bring in (summed document frequencies), rarest first:
# it bounds the work of one query. At 100,000 chunks it halves the p99 of the BM25 statement
# and keeps 99.9% of the top 10 (bench/search_latency.py's queries); skipped lexemes still score.
CANDIDATE_BUDGET = 2_000


class TermWeights(msgspec.Struct, frozen=True):
    lexemes: list[str]
    idf: list[float]
    selective: list[str]  # the lexemes that select candidates
    avg_length: float

    def with_forms(self, forms: dict[str, str]) -> TermWeights:
        """Also each lexeme's other form (forms: lexeme to it), with the lexeme's weight."""
        if not forms:
            return self
        extra = [
            (forms[lexeme], weight)
            for lexeme, weight in zip(self.lexemes, self.idf, strict=True)
            if lexeme in forms
        ]
        return TermWeights(
            [*self.lexemes, *(form for form, _ in extra)],
            [*self.idf, *(weight for _, weight in extra)],
            [*self.selective, *(forms[lexeme] for lexeme in self.selective if lexeme in forms)],
            self.avg_length,
        )


def idf(document_frequency: int, chunks: int) -> float:
    """Robertson/Sparck Jones inverse document frequency, never negative."""
    return math.log(1 + (chunks - document_frequency + 0.5) / (document_frequency + 0.5))


def weigh(
    lexemes: list[str], df: dict[str, int], chunks: int, total_length: int, budget: int = CANDIDATE_BUDGET
) -> TermWeights | None:
    """IDF per query lexeme over the scope; None when nothing in the scope can match."""
    present = [lexeme for lexeme in lexemes if df.get(lexeme, 0) > 0]
    if not present or chunks <= 0:
        return None
    weights = [idf(df[lexeme], chunks) for lexeme in present]
    rarest_first = sorted(present, key=lambda lexeme: df[lexeme])
    # The rarest lexeme always selects, so a query of common words still finds something.
    selective = rarest_first[:1]
    brought = df[rarest_first[0]]
    for lexeme in rarest_first[1:]:
        brought += df[lexeme]
        if brought > budget:
            break
        selective.append(lexeme)
    return TermWeights(present, weights, selective, max(total_length / chunks, 1.0))
