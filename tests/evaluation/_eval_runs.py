"""Plain-data EvalRun builders for unit tests of aggregates, the CI gate and reports."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory_engine.evaluation.metrics import rank_metrics
from memory_engine.evaluation.runner import (
    Assertion,
    CaseResult,
    EvalRun,
    Miss,
    MissKind,
    QueryResult,
    Retrieved,
    WriteRecord,
)

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def query(
    qid: str,
    ranked: list[str],
    relevant: list[str],
    *,
    case: str = "c1",
    suite: str = "s",
    category: str = "cat_a",
    k: int = 3,
    irrelevant: list[str] = (),  # type: ignore[assignment]
    leaks: tuple[str, ...] = (),
    must_pass: bool = False,
    latency_ms: float = 10.0,
) -> QueryResult:
    """A query result whose retrieved ids are the labels themselves."""
    rel = {lab: 1.0 for lab in relevant}
    m = rank_metrics(ranked, rel, k)
    ranks = {lab: (ranked.index(lab) + 1 if lab in ranked[:k] else None) for lab in relevant}
    violations = tuple(x for x in irrelevant if x in ranked[:k])
    asserts = [Assertion("relevant", all(r is not None for r in ranks.values()))] if relevant else []
    if irrelevant:
        asserts.append(Assertion("irrelevant", not violations))
    if leaks:
        asserts.append(Assertion("not_contains", False, f"leaked {list(leaks)}"))
    misses = tuple(Miss(lab, MissKind.OUTRANKED, "outranked: test") for lab, r in ranks.items() if r is None)
    return QueryResult(
        suite=suite, case_id=case, query_id=qid, category=category, lang="en", tags=(), must_pass=must_pass,
        text=f"question {qid} | pipes", k=k, passed=all(a.passed for a in asserts), assertions=tuple(asserts),
        relevant=rel, relevant_ranks=ranks,
        retrieved=tuple(Retrieved(i, x, (x,), f"content of {x} <b>", 1.0 / i, ("vector",)) for i, x in enumerate(ranked[:k], 1)),
        hit=m.hit, recall=m.recall, rr=m.rr, ndcg=m.ndcg, recall_at={1: rank_metrics(ranked, rel, 1).recall},
        latency_ms=latency_ms, irrelevant_violations=violations, leaks=leaks, misses=misses,
        relevant_ids={lab: lab for lab in relevant}, relevant_texts={lab: f"content of {lab}" for lab in relevant},
    )


def case(queries: list[QueryResult], *, must_pass: bool = False, writes: tuple[WriteRecord, ...] = ()) -> CaseResult:
    q0 = queries[0]
    return CaseResult(q0.suite, q0.case_id, q0.category, q0.lang, ("must-pass",) if must_pass else (), must_pass,
                      writes, tuple(queries))


def run(cases: list[CaseResult], run_id: str = "r1") -> EvalRun:
    return EvalRun(run_id, T0, T0 + timedelta(seconds=2), {"retrieval": {"floor": 0.45}}, "abc123def456", "deadbeef",
                   (("s", "s.yaml"),), tuple(cases))


def write(label: str, outcome: str, expected: str | None = None, superseded: tuple[tuple[str, str], ...] = (),
          duplicate: bool = False) -> WriteRecord:
    return WriteRecord(label, outcome, None if outcome == "rejected" else f"id-{label}", "", expected,
                       tuple(x for x, _ in superseded), superseded, (), duplicate)
