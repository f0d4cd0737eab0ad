"""Full text's trust in the fusion: the share of the query its best chunk holds, and the weights
that share sets."""

from __future__ import annotations

import math

import pytest

from cograph_retrieval import Scored, convex_combination
from cograph_retrieval.coverage import coverage, query_idf, trusted_weights


def test_a_word_no_chunk_holds_is_the_querys_most_informative() -> None:
    # 100 chunks: a word in none of them weighs more than one in a single chunk, far more than a common one.
    absent, rare, common = query_idf([0], 100), query_idf([1], 100), query_idf([90], 100)
    assert absent == pytest.approx(math.log(1 + 100.5 / 0.5))
    assert absent > rare > common > 0
    assert query_idf([0, 1, 90], 100) == pytest.approx(absent + rare + common)


def test_coverage_is_a_share_between_nothing_and_all() -> None:
    assert coverage(3.0, 4.0) == 0.75
    assert coverage(4.2, 4.0) == 1.0  # a lexeme held in both its forms counts once
    assert coverage(0.0, 0.0) == 0.0


@pytest.mark.parametrize(
    ("text_coverage", "ratio"),
    [(1.0, 1.0), (2 / 3, 2 / 3), (0.3, 0.3)],
)
def test_the_weights_keep_their_sum_and_move_their_ratio_by_coverage(
    text_coverage: float, ratio: float
) -> None:
    dense, text = trusted_weights(1.0, 1.0, text_coverage)
    assert dense + text == pytest.approx(2.0)
    assert text / dense == pytest.approx(ratio)


def test_a_stream_switched_off_stays_off_and_no_match_leaves_dense_alone() -> None:
    assert trusted_weights(0.0, 1.0, 0.2) == (0.0, 1.0)
    assert trusted_weights(1.0, 0.0, 0.9) == (1.0, 0.0)
    assert trusted_weights(1.0, 1.0, 0.0) == pytest.approx((2.0, 0.0))


def test_full_text_matching_only_common_words_no_longer_outvotes_dense() -> None:
    """A paraphrase: dense ranks the answer first, full text ranks it third behind pages that share
    the question's common words. Equal weights put full text's first page on top; when that page
    holds a third of the query's information, as a paraphrase's often does, the answer is first."""
    streams = {
        "dense": Scored(["answer", "other"], [0.62, 0.45], floor=0.45),
        "text": Scored(["other", "noise", "answer"], [3.0, 2.4, 1.5], floor=0.0),
    }
    equal = convex_combination(streams, {"dense": 1.0, "text": 1.0}, limit=3)
    assert equal[0].key == "other"
    dense, text = trusted_weights(1.0, 1.0, 0.3)
    trusted = convex_combination(streams, {"dense": dense, "text": text}, limit=3)
    assert trusted[0].key == "answer"
