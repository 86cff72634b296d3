"""Rank-aware retrieval metrics (ours: ragas has none) and the paired bootstrap.

Pure functions over a ranked list of retrieved item ids and a mapping of
relevant item ids to grades (binary relevance = grade 1.0). ``k`` cuts the
ranking; ranks are 1-based. A query without relevant items has no defined
recall/MRR/nDCG: the functions return ``None`` and aggregates skip it
(abstention queries are judged by their ``empty`` assertion instead).

Definitions (Manning, Raghavan, Schütze, *Introduction to Information
Retrieval*, ch. 8; Järvelin & Kekäläinen 2002 for (n)DCG):

- hit@k = 1 if any relevant item is in the top k, else 0
- recall@k = |relevant ∩ top k| / |relevant|
- MRR (reciprocal rank) = 1 / rank of the first relevant item (0 when none is
  returned); the mean over queries is the MRR
- DCG@k = Σ_{i=1..k} grade(item_i) / log2(i + 1) (linear gain, so binary
  labels give the classic form); nDCG@k = DCG@k / IDCG@k where IDCG@k is the
  DCG of the relevant items sorted by grade, truncated at k.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError


def _check_k(k: int) -> None:
    if k < 1:
        raise ValidationError(f"k must be >= 1, got {k}")


def _relevant_ids(relevance: Mapping[str, float]) -> set[str]:
    return {i for i, g in relevance.items() if g > 0}


def ranks_of(ranked: Sequence[str], items: Sequence[str] | set[str]) -> dict[str, int | None]:
    """1-based rank of each item in ``ranked`` (first occurrence), ``None`` if absent."""
    pos: dict[str, int] = {}
    for i, x in enumerate(ranked, start=1):
        pos.setdefault(x, i)
    return {x: pos.get(x) for x in items}


def hit_at_k(ranked: Sequence[str], relevance: Mapping[str, float], k: int) -> float | None:
    """1.0 if any item with grade > 0 is in ``ranked[:k]``, else 0.0; ``None`` without relevant items."""
    _check_k(k)
    rel = _relevant_ids(relevance)
    if not rel:
        return None
    return 1.0 if any(x in rel for x in ranked[:k]) else 0.0


def recall_at_k(ranked: Sequence[str], relevance: Mapping[str, float], k: int) -> float | None:
    """Share (0..1) of items with grade > 0 found in ``ranked[:k]``; ``None`` without relevant items."""
    _check_k(k)
    rel = _relevant_ids(relevance)
    if not rel:
        return None
    return len(rel & set(ranked[:k])) / len(rel)


def reciprocal_rank(ranked: Sequence[str], relevance: Mapping[str, float], k: int | None = None) -> float | None:
    """1 / rank of the first relevant item within ``ranked[:k]`` (all when ``k`` is None), 0.0 if none."""
    if k is not None:
        _check_k(k)
    rel = _relevant_ids(relevance)
    if not rel:
        return None
    for i, x in enumerate(ranked[:k] if k is not None else ranked, start=1):
        if x in rel:
            return 1.0 / i
    return 0.0


def dcg(gains: Sequence[float]) -> float:
    """Σ gain_i / log2(i + 1), i 1-based (Järvelin & Kekäläinen 2002, linear gain)."""
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))


def ndcg_at_k(ranked: Sequence[str], relevance: Mapping[str, float], k: int) -> float | None:
    """nDCG@k in 0..1 with graded relevance; duplicate ids in ``ranked`` gain only once.

    ``None`` when no item has grade > 0.
    """
    _check_k(k)
    if not _relevant_ids(relevance):
        return None
    seen: set[str] = set()
    gains = []
    for x in ranked[:k]:
        gains.append(0.0 if x in seen else max(0.0, float(relevance.get(x, 0.0))))
        seen.add(x)
    ideal = sorted((g for g in relevance.values() if g > 0), reverse=True)[:k]
    return dcg(gains) / dcg(ideal)


@dataclass(frozen=True)
class RankMetrics:
    """hit@k, recall@k, reciprocal rank and nDCG@k of one query (``None`` = undefined)."""

    k: int
    hit: float | None
    recall: float | None
    rr: float | None
    ndcg: float | None


def rank_metrics(ranked: Sequence[str], relevance: Mapping[str, float], k: int) -> RankMetrics:
    """All rank metrics at cutoff ``k`` (reciprocal rank also cut at ``k``)."""
    return RankMetrics(
        k=k,
        hit=hit_at_k(ranked, relevance, k),
        recall=recall_at_k(ranked, relevance, k),
        rr=reciprocal_rank(ranked, relevance, k),
        ndcg=ndcg_at_k(ranked, relevance, k),
    )


def mean_defined(values: Sequence[float | None]) -> float | None:
    """Mean of the non-``None`` values, ``None`` if there are none."""
    xs = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(xs) / len(xs) if xs else None


@dataclass(frozen=True)
class PairedDelta:
    """Mean of ``now - baseline`` over paired queries with a bootstrap confidence interval.

    ``low``/``high`` are ``None`` when fewer than 2 pairs exist; equal to
    ``delta`` when every pair has the same difference (no spread to resample).
    """

    delta: float
    low: float | None
    high: float | None
    n: int
    confidence: float

    @property
    def significant(self) -> bool:
        """True when the interval excludes 0."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


def paired_bootstrap_delta(
    baseline: Sequence[float],
    now: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> PairedDelta:
    """Paired bootstrap interval of mean(now) - mean(baseline) over the same queries.

    Uses ``scipy.stats.bootstrap(..., paired=True)`` (BCa; percentile when BCa
    is undefined). ``seed`` makes the interval reproducible. Raises ValueError
    when the sequences differ in length or are empty.
    """
    if len(baseline) != len(now):
        raise ValidationError(f"paired samples differ in length: {len(baseline)} vs {len(now)}")
    if not baseline:
        raise ValidationError("no paired samples")
    b = np.asarray(baseline, dtype=float)
    n = np.asarray(now, dtype=float)
    diff = n - b
    delta = float(diff.mean())
    if len(b) < 2:
        return PairedDelta(delta, None, None, len(b), confidence)
    if np.allclose(diff, diff[0]):
        return PairedDelta(delta, delta, delta, len(b), confidence)
    from scipy import stats

    def stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(y, axis=axis) - np.mean(x, axis=axis)

    rng = np.random.default_rng(seed)
    lo = hi = float("nan")
    for method in ("BCa", "percentile"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.bootstrap(
                (b, n), stat, paired=True, vectorized=True, confidence_level=confidence,
                n_resamples=n_resamples, method=method, random_state=rng,
            )
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if not (math.isnan(lo) or math.isnan(hi)):
            break
    return PairedDelta(delta, lo, hi, len(b), confidence)
