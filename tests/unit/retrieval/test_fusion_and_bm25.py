"""Rank and score fusion, and BM25 term weighting: exact values."""

from __future__ import annotations

import math
import unicodedata

import pytest

from cograph_retrieval import ChunkTable, Scored, convex_combination, reciprocal_rank_fusion
from cograph_retrieval.bm25 import weigh


def test_rrf_adds_weighted_reciprocal_ranks_and_keeps_each_rank() -> None:
    fused = reciprocal_rank_fusion(
        {"dense": ["a", "b", "c"], "text": ["c", "a"]}, {"dense": 1.0, "text": 2.0}, k=10, limit=10
    )
    assert [hit.key for hit in fused] == ["c", "a", "b"]
    assert fused[0].score == pytest.approx(1 / 13 + 2 / 11)
    assert fused[1].score == pytest.approx(1 / 11 + 2 / 12)
    assert fused[1].ranks == {"dense": 1, "text": 2}
    assert fused[2].ranks == {"dense": 2}


def test_rrf_skips_streams_of_weight_zero_and_honours_the_limit() -> None:
    fused = reciprocal_rank_fusion(
        {"dense": ["a", "b"], "text": ["c"]}, {"dense": 0.0, "text": 1.0}, k=60, limit=5
    )
    assert [hit.key for hit in fused] == ["c"]
    assert len(reciprocal_rank_fusion({"dense": list("abcdef")}, {}, k=60, limit=3)) == 3


def test_rrf_ties_break_on_the_best_single_rank() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "b"], "text": ["b", "a"]}, {}, k=60, limit=2)
    assert fused[0].score == fused[1].score
    assert [hit.key for hit in fused] == ["a", "b"]  # both have a first rank: stream order decides


def test_score_fusion_adds_weighted_shares_of_each_streams_best_and_keeps_each_rank() -> None:
    fused = convex_combination(
        {
            "dense": Scored(["a", "b", "c"], [0.8, 0.6, 0.4], floor=0.4),
            "text": Scored(["c", "a"], [10.0, 2.0], floor=0.0),
        },
        {"dense": 1.0, "text": 2.0},
        limit=10,
    )
    assert [hit.key for hit in fused] == ["c", "a", "b"]
    assert fused[0].score == pytest.approx(0.4 / 0.8 + 2 * 10 / 10)
    assert fused[1].score == pytest.approx(0.8 / 0.8 + 2 * 2 / 10)
    assert fused[2].score == pytest.approx(0.6 / 0.8)  # full text did not return it: its floor, 0
    assert fused[1].ranks == {"dense": 1, "text": 2}
    assert fused[2].ranks == {"dense": 2}


def test_score_fusion_counts_a_key_a_stream_left_out_at_that_streams_floor() -> None:
    """A chunk beyond the dense stream's candidates is at most as near as the last of them."""
    fused = convex_combination(
        {"dense": Scored(["a"], [0.5], floor=0.5), "text": Scored(["b"], [4.0], floor=0.0)},
        {"dense": 1.0, "text": 1.0},
        limit=2,
    )
    assert [hit.key for hit in fused] == ["b", "a"]
    assert [hit.score for hit in fused] == pytest.approx([2.0, 1.0])


def test_score_fusion_gives_a_hit_first_everywhere_the_sum_of_the_weights() -> None:
    streams = {"dense": Scored(["a", "b"], [0.9, 0.3], 0.3), "text": Scored(["a"], [7.5], 0.0)}
    assert convex_combination(streams, {"dense": 0.5, "text": 1.5}, limit=1)[0].score == pytest.approx(2.0)


def test_score_fusion_skips_streams_of_weight_zero_or_empty_and_honours_the_limit() -> None:
    streams = {"dense": Scored(["a", "b"], [0.9, 0.8], 0.8), "text": Scored([], [], 0.0)}
    fused = convex_combination(streams, {"dense": 0.0, "text": 1.0}, limit=5)
    assert fused == []
    fused = convex_combination({"dense": Scored(list("abcdef"), [0.6] * 6, 0.6)}, {}, limit=3)
    assert len(fused) == 3
    assert [hit.key for hit in fused] == ["a", "b", "c"]  # equal scores: the better rank first


def test_idf_favours_rare_lexemes_and_every_lexeme_selects_within_the_budget() -> None:
    weights = weigh(
        ["zorblax", "databas", "unknown"], {"zorblax": 1, "databas": 500}, chunks=1000, total_length=50000
    )
    assert weights is not None
    assert weights.lexemes == ["zorblax", "databas"]  # a lexeme absent from the scope weighs nothing
    assert weights.idf[0] == pytest.approx(math.log(1 + 999.5 / 1.5))
    assert weights.idf[1] == pytest.approx(math.log(1 + 500.5 / 500.5))
    assert weights.selective == ["zorblax", "databas"]  # 1 + 500 chunks: within the budget
    assert weights.avg_length == 50.0


def test_only_common_lexemes_still_select_the_rarest() -> None:
    weights = weigh(["a", "b"], {"a": 900, "b": 600}, chunks=1000, total_length=1000, budget=100)
    assert weights is not None
    assert weights.selective == ["b"]  # over the budget alone, yet a query must find something


def test_candidate_budget_keeps_the_rarest_lexemes_and_all_still_score() -> None:
    df = {"rare": 10, "middling": 30, "wider": 45}
    weights = weigh(["wider", "rare", "middling"], df, chunks=1000, total_length=1000, budget=50)
    assert weights is not None
    assert weights.selective == ["rare", "middling"]  # 10 + 30 fit; adding 45 would bring 85
    assert weights.lexemes == ["wider", "rare", "middling"]


def test_in_a_small_scope_every_lexeme_selects_so_the_ranking_is_exact() -> None:
    # A glossary of 20 chunks: a word in half of them still brings its chunks in, or a chunk
    # holding most of the question would never be ranked at all.
    df = {"restart": 2, "payment": 2, "worker": 10}
    weights = weigh(["restart", "payment", "worker"], df, chunks=20, total_length=200)
    assert weights is not None
    assert sorted(weights.selective) == ["payment", "restart", "worker"]


def test_nothing_to_match_is_none() -> None:
    assert weigh(["x"], {}, chunks=10, total_length=10) is None
    assert weigh(["x"], {"x": 1}, chunks=0, total_length=0) is None


def test_chunk_tables_accept_plain_identifiers_only() -> None:
    with pytest.raises(ValueError, match="not a plain SQL identifier"):
        ChunkTable(table="md_chunks; DROP TABLE x", scope_column="c", term_stats="t", scope_stats="s")


def test_each_form_of_a_term_scores_with_the_terms_weight() -> None:
    weights = weigh(["café", "menu"], {"café": 3, "menu": 5}, 100, 1000, budget=10)
    assert weights is not None
    decomposed = unicodedata.normalize("NFD", "café")
    both = weights.with_forms({"café": decomposed})
    assert both.lexemes == ["café", "menu", decomposed]
    assert both.idf == [*weights.idf, weights.idf[0]]
    assert both.selective == [*weights.selective, decomposed]
    assert weights.with_forms({}) is weights
