"""Aggregates of an :class:`~memory_engine.evaluation.runner.EvalRun`.

Means per suite, category, language and query tag; pass rate; counts of
``irrelevant`` violations and ``not_contains`` leaks (both must be 0);
latency percentiles (ms); write-path quality (share of events stored / merged
/ rejected / candidate, supersessions right vs wrong, duplicates stored).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .metrics import mean_defined
from .runner import CaseResult, EvalRun, QueryResult

#: Metrics shown in summaries, in display order.
SUMMARY_METRICS: tuple[str, ...] = ("pass", "hit@k", "recall@k", "mrr", "ndcg@k", "recall@1", "recall@5", "recall@10")


@dataclass(frozen=True)
class Aggregate:
    """Means of one group of queries. ``means[m]`` is ``None`` when no query defines ``m``.

    ``n_scored`` counts queries with relevant labels (the ones rank metrics
    apply to); latencies are milliseconds.
    """

    group: str
    n_queries: int
    n_scored: int
    means: dict[str, float | None]
    irrelevant_violations: int
    leaks: int
    latency_p50_ms: float
    latency_p95_ms: float

    @property
    def pass_rate(self) -> float | None:
        return self.means.get("pass")


def aggregate(queries: Sequence[QueryResult], group: str = "all") -> Aggregate:
    """Aggregate of ``queries`` (may be empty: means are then ``None``, latencies 0)."""
    names: list[str] = list(SUMMARY_METRICS)
    for q in queries:
        for n in q.scores():
            if n not in names:
                names.append(n)
    means = {n: mean_defined([q.scores().get(n) for q in queries]) for n in names}
    lat = np.asarray([q.latency_ms for q in queries], dtype=float)
    return Aggregate(
        group=group,
        n_queries=len(queries),
        n_scored=sum(1 for q in queries if q.recall is not None),
        means=means,
        irrelevant_violations=sum(len(q.irrelevant_violations) for q in queries),
        leaks=sum(len(q.leaks) for q in queries),
        latency_p50_ms=float(np.percentile(lat, 50)) if lat.size else 0.0,
        latency_p95_ms=float(np.percentile(lat, 95)) if lat.size else 0.0,
    )


def group_by(queries: Iterable[QueryResult], key: Callable[[QueryResult], Iterable[str]]) -> dict[str, Aggregate]:
    """Aggregate per group; ``key`` returns the groups a query belongs to (several for tags)."""
    groups: dict[str, list[QueryResult]] = defaultdict(list)
    for q in queries:
        for g in key(q):
            groups[g].append(q)
    return {g: aggregate(qs, g) for g, qs in sorted(groups.items())}


@dataclass(frozen=True)
class WriteStats:
    """Write-path quality of a run: counts and shares (0..1) of write outcomes and judgements."""

    n_events: int
    outcomes: dict[str, int]
    shares: dict[str, float]
    expect_write_total: int
    expect_write_ok: int
    supersessions_right: int
    supersessions_wrong: int
    supersessions_unjudged: int
    supersessions_missed: int
    duplicates_stored: int


def write_stats(cases: Iterable[CaseResult]) -> WriteStats:
    writes = [w for c in cases for w in c.writes]
    counts = Counter(w.outcome for w in writes)
    outcomes = {o: counts.get(o, 0) for o in ("stored", "merged", "rejected", "candidate")}
    for o, n in counts.items():
        outcomes.setdefault(o, n)
    n = len(writes)
    verdicts = Counter(v for w in writes for _, v in w.supersession)
    return WriteStats(
        n_events=n,
        outcomes=outcomes,
        shares={o: (c / n if n else 0.0) for o, c in outcomes.items()},
        expect_write_total=sum(1 for w in writes if w.expected is not None),
        expect_write_ok=sum(1 for w in writes if w.expectation_ok),
        supersessions_right=verdicts.get("right", 0),
        supersessions_wrong=verdicts.get("wrong", 0),
        supersessions_unjudged=verdicts.get("unjudged", 0),
        supersessions_missed=sum(len(w.missed_supersessions) for w in writes),
        duplicates_stored=sum(1 for w in writes if w.duplicate),
    )


@dataclass(frozen=True)
class Summary:
    overall: Aggregate
    by_suite: dict[str, Aggregate]
    by_category: dict[str, Aggregate]
    by_lang: dict[str, Aggregate]
    by_tag: dict[str, Aggregate]
    writes: WriteStats
    n_cases: int
    cases_passed: int
    must_pass_failed: tuple[str, ...]
    miss_kinds: dict[str, int]
    by_split: dict[str, Aggregate] = field(default_factory=dict)  #: ``dev``/``test`` when the run records a split


def summarize(run: EvalRun) -> Summary:
    qs = run.queries
    failed_mp = tuple(f"{c.suite}/{c.case_id}" for c in run.cases if c.must_pass and not c.passed)
    return Summary(
        overall=aggregate(qs),
        by_suite=group_by(qs, lambda q: [q.suite]),
        by_category=group_by(qs, lambda q: [q.category]),
        by_lang=group_by(qs, lambda q: [q.lang]),
        by_tag=group_by(qs, lambda q: list(q.tags)),
        writes=write_stats(run.cases),
        n_cases=len(run.cases),
        cases_passed=sum(1 for c in run.cases if c.passed),
        must_pass_failed=failed_mp,
        miss_kinds=dict(Counter(m.kind.value for q in qs for m in q.misses)),
        by_split=group_by(qs, lambda q: [m] if (m := _membership(run).get(f"{q.suite}/{q.case_id}")) else []),
    )


def _membership(run: EvalRun) -> dict[str, str]:
    """``suite/case -> dev|test`` of the run's recorded split ({} without one)."""
    return dict(((run.extras.get("split") or {}).get("membership")) or {})


def to_jsonable(obj: Any) -> Any:
    """Dataclasses/enums/datetimes to plain JSON types (dict keys as strings)."""
    import dataclasses
    from datetime import datetime
    from enum import Enum

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {k: to_jsonable(v) for k, v in asdict(obj).items()}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, datetime):
        return obj.isoformat()
    if isinstance(obj, float) and obj != obj:
        return None
    return obj
