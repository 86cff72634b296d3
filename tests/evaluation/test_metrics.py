"""Rank metrics against hand-computed values; paired bootstrap via scipy."""

from __future__ import annotations

import math

import pytest

from memory_engine.evaluation.metrics import (
    dcg,
    hit_at_k,
    mean_defined,
    ndcg_at_k,
    paired_bootstrap_delta,
    rank_metrics,
    ranks_of,
    recall_at_k,
    reciprocal_rank,
)

pytestmark = pytest.mark.unit

RANKED = ["x", "a", "y", "b", "z"]
BINARY = {"a": 1.0, "b": 1.0, "c": 1.0}


def test_hit_recall_rr_by_hand() -> None:
    assert hit_at_k(RANKED, BINARY, 1) == 0.0
    assert hit_at_k(RANKED, BINARY, 2) == 1.0
    assert recall_at_k(RANKED, BINARY, 1) == 0.0
    assert recall_at_k(RANKED, BINARY, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, BINARY, 5) == pytest.approx(2 / 3)
    assert reciprocal_rank(RANKED, BINARY) == pytest.approx(0.5)
    assert reciprocal_rank(RANKED, BINARY, k=1) == 0.0
    assert reciprocal_rank(["q", "r"], BINARY) == 0.0


def test_ndcg_binary_by_hand() -> None:
    # relevant at ranks 2 and 4: DCG = 1/log2(3) + 1/log2(5); ideal (3 relevant, k=5) = 1 + 1/log2(3) + 1/2
    want = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 0.5)
    assert ndcg_at_k(RANKED, BINARY, 5) == pytest.approx(want)
    # k=2: DCG = 1/log2(3); ideal = 1 + 1/log2(3)
    assert ndcg_at_k(RANKED, BINARY, 2) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))


def test_ndcg_graded_by_hand() -> None:
    graded = {"a": 3.0, "b": 1.0}
    # ranking b, a: DCG = 1/1 + 3/log2(3); ideal a, b: 3/1 + 1/log2(3)
    got = ndcg_at_k(["b", "a"], graded, 2)
    assert got == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert ndcg_at_k(["a", "b"], graded, 2) == pytest.approx(1.0)
    # duplicates gain once
    assert ndcg_at_k(["a", "a"], {"a": 1.0}, 2) == pytest.approx(1.0)
    assert dcg([1.0, 1.0]) == pytest.approx(1 + 1 / math.log2(3))


def test_undefined_without_relevant_and_zero_grades() -> None:
    assert recall_at_k(["a"], {}, 1) is None
    assert hit_at_k(["a"], {"a": 0.0}, 1) is None
    assert ndcg_at_k(["a"], {}, 3) is None
    assert reciprocal_rank(["a"], {}) is None
    m = rank_metrics(["a"], {}, 3)
    assert (m.hit, m.recall, m.rr, m.ndcg) == (None, None, None, None)
    with pytest.raises(ValueError, match="k must be >= 1"):
        recall_at_k(["a"], BINARY, 0)


def test_helpers() -> None:
    assert ranks_of(["a", "b", "a"], {"a", "c"}) == {"a": 1, "c": None}
    assert mean_defined([1.0, None, 0.0, float("nan")]) == 0.5
    assert mean_defined([None]) is None


def test_paired_bootstrap_interval_brackets_the_delta() -> None:
    base = [0.0, 1.0, 0.5, 0.0, 1.0, 0.0, 0.5, 1.0, 0.0, 0.0] * 3
    now = [1.0, 1.0, 0.5, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0] * 3
    d = paired_bootstrap_delta(base, now, seed=1)
    assert d.delta == pytest.approx(0.3)
    assert d.low is not None and d.high is not None
    assert d.low <= 0.3 <= d.high
    assert d.low > 0  # every change is an improvement: the interval excludes 0
    assert d.significant
    # same seed -> same interval
    assert paired_bootstrap_delta(base, now, seed=1) == d


def test_paired_bootstrap_noise_and_degenerate_cases() -> None:
    base = [0.0, 1.0] * 10
    now = [1.0, 0.0] * 10  # swaps: mean unchanged, lots of spread
    d = paired_bootstrap_delta(base, now)
    assert d.delta == 0.0 and d.low < 0 < d.high and not d.significant
    same = paired_bootstrap_delta([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
    assert (same.delta, same.low, same.high) == (0.0, 0.0, 0.0)
    one = paired_bootstrap_delta([0.0], [1.0])
    assert one.delta == 1.0 and one.low is None
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstrap_delta([0.0], [1.0, 0.0])
