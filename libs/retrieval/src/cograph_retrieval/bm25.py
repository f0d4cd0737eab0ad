"""BM25 over PostgreSQL full text.

PostgreSQL ranks without inverse document frequency, which is why long natural-language
questions rank poorly with ts_rank. The stores keep term statistics (document frequency
per lexeme and scope, chunk counts and lengths) in the same transaction as every write;
here they weigh each query lexeme by its IDF, and chunk length is normalised BM25-style.

Lexemes so common that they carry almost no information are left out of the candidate
query (they would make every chunk a candidate) but still count in the score.
"""

from __future__ import annotations

import math

import msgspec

# Robertson/Sparck Jones defaults: not tuned to any one benchmark.
K1 = 1.2
B = 0.75
# A lexeme in more than this share of the scope's chunks does not select candidates.
CANDIDATE_MAX_DF_SHARE = 0.05


class TermWeights(msgspec.Struct, frozen=True):
    lexemes: list[str]
    idf: list[float]
    selective: list[str]  # the lexemes that select candidates
    avg_length: float


def weigh(lexemes: list[str], df: dict[str, int], chunks: int, total_length: int) -> TermWeights | None:
    """IDF per query lexeme over the scope; None when nothing in the scope can match."""
    present = [lexeme for lexeme in lexemes if df.get(lexeme, 0) > 0]
    if not present or chunks <= 0:
        return None
    idf = [math.log(1 + (chunks - df[lexeme] + 0.5) / (df[lexeme] + 0.5)) for lexeme in present]
    selective = [lexeme for lexeme in present if df[lexeme] <= max(1, CANDIDATE_MAX_DF_SHARE * chunks)]
    if not selective:
        # Only common words: the rarest of them still select, so a query never finds nothing.
        selective = [min(present, key=lambda lexeme: df[lexeme])]
    return TermWeights(present, idf, selective, max(total_length / chunks, 1.0))
