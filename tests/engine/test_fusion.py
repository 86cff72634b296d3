"""Fusion formulas, floor and budget against hand-computed values."""

import math

import pytest

from memory_engine.retrieve.fusion import (
    DAY,
    Candidate,
    apply_budget,
    apply_floor,
    five_term_score,
    fuse,
    half_life_weight,
    rank_lists,
    recency,
    rrf_score,
    weighted_score,
)

pytestmark = pytest.mark.unit


def test_recency_is_exp_minus_dt_over_tau():
    assert recency(0, 7) == 1.0
    assert recency(7 * DAY, 7) == pytest.approx(math.exp(-1))
    assert recency(14 * DAY, 7) == pytest.approx(math.exp(-2))
    with pytest.raises(ValueError):
        recency(1, 0)


def test_half_life_halves_and_none_never_decays():
    assert half_life_weight(30 * DAY, 30) == pytest.approx(0.5)
    assert half_life_weight(90 * DAY, 30) == pytest.approx(0.125)
    assert half_life_weight(10_000 * DAY, None) == 1.0


def test_weighted_score_seed_000_example():
    # 0.5*0.8 + 0.3*exp(-1) + 0.2*0.6
    c = Candidate("a", similarity=0.8, importance=0.6, age_seconds=7 * DAY)
    assert weighted_score(c, 0.5, 0.3, 0.2, 7) == pytest.approx(0.4 + 0.3 * math.exp(-1) + 0.12)


def test_five_term_score_seed_002_example():
    # 0.4*0.9 + 0.2*0.5 + 0.1*1 + 0.2*0.5 (one half-life) + 0.1*0.7
    c = Candidate("a", similarity=0.9, coverage=0.5, metadata_match=1.0, importance=0.7,
                  age_seconds=30 * DAY, half_life_days=30)
    assert five_term_score(c, 0.4, 0.2, 0.1, 0.2, 0.1) == pytest.approx(0.36 + 0.1 + 0.1 + 0.1 + 0.07)


def test_rrf_score_sums_reciprocal_ranks():
    assert rrf_score({"vector": 1, "keyword": 3}, 60) == pytest.approx(1 / 61 + 1 / 63)
    assert rrf_score({"vector": 1, "recent": 2}, 60, {"recent": 0.5}) == pytest.approx(1 / 61 + 0.5 / 62)


def test_rank_lists_keeps_first_rank():
    assert rank_lists({"vector": ["a", "b"], "keyword": ["b"]}) == {"a": {"vector": 1}, "b": {"vector": 2, "keyword": 1}}


def test_fuse_sorts_without_mutating_inputs():
    a = Candidate("a", similarity=0.2, importance=0.5)
    b = Candidate("b", similarity=0.9, importance=0.5)
    out = fuse([a, b], "weighted", {"similarity": 0.5, "recency": 0.3, "importance": 0.2, "tau_days": 7})
    assert [c.memory_id for c in out] == ["b", "a"]
    assert a.fused == 0.0 and b.fused == 0.0
    assert out[0].fused == pytest.approx(0.45 + 0.3 + 0.1)


def test_fuse_applies_source_weight_and_rejects_unknown():
    a = Candidate("a", route_ranks={"vector": 1}, source_weight=0.5)
    out = fuse([a], "rrf", {"k": 60})
    assert out[0].fused == pytest.approx(0.5 / 61)
    with pytest.raises(ValueError, match="valid: weighted, five_term, rrf"):
        fuse([a], "bogus", {})


def test_floor_uses_relevance_not_fused_score():
    strong_recent = Candidate("noise", similarity=0.1, coverage=0.2, fused=0.9)  # 1 - 0.9*0.8 = 0.28
    relevant = Candidate("hit", similarity=0.3, coverage=0.3, fused=0.4)  # 1 - 0.7*0.7 = 0.51
    fact = Candidate("fact", exact_match=1.0, fused=0.1)
    kept, dropped = apply_floor([strong_recent, relevant, fact], 0.45)
    assert [c.memory_id for c in kept] == ["hit", "fact"]
    assert [c.memory_id for c in dropped] == ["noise"]


def test_budget_respects_top_k_and_tokens():
    cands = [Candidate(str(i), tokens=t) for i, t in enumerate([600, 700, 400, 100, 50])]
    kept, over_k, over_budget = apply_budget(cands, top_k=3, token_budget=1500)
    assert [c.memory_id for c in kept] == ["0", "1", "3"]  # 600+700=1300; 400 does not fit, 100 does
    assert [c.memory_id for c in over_budget] == ["2"]
    assert [c.memory_id for c in over_k] == ["4"]
