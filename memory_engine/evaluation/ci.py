"""CI gate: compare a run with a baseline file and decide the exit code.

Exit codes (``memwb ci``): 0 all holds; 1 a ``must-pass`` case failed, an
``irrelevant`` violation (outside cases tagged ``known-gap``, which are reported only) or a
``not_contains`` leak occurred (known-gap or not), or a metric fell
more than ``max_drop`` (absolute, metrics are 0..1) below the baseline in the
whole run or in any category, both taken over the queries outside ``known-gap`` cases;
2 bad input (raised as errors, mapped by the CLI).

Each delta carries a 95% paired-bootstrap interval over the queries present
in both runs (:func:`~memory_engine.evaluation.metrics.paired_bootstrap_delta`),
so a reviewer can tell a regression from noise.

Baseline file (JSON, written by :func:`make_baseline`)::

    {"format": "memwb-baseline/1", "run_id": ..., "config_hash": ..., "git_commit": ...,
     "created_at": ISO-8601, "groups": {"all": {metric: mean}, "category:<name>": {...}},
     "queries": {"suite/case/query": {"category": str, metric: value-or-null}}}
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BaselineError, ValidationError, os_reason
from .aggregate import Summary, aggregate, summarize
from .metrics import PairedDelta, paired_bootstrap_delta
from .runner import EvalRun, QueryResult
from .suite import KNOWN_GAP_TAG

BASELINE_FORMAT = "memwb-baseline/1"
#: Metrics the gate compares (all 0..1, higher is better).
CI_METRICS: tuple[str, ...] = ("pass", "hit@k", "recall@k", "mrr", "ndcg@k")
DEFAULT_MAX_DROP = 0.02



def _groups(queries: Sequence[QueryResult]) -> dict[str, list[QueryResult]]:
    out: dict[str, list[QueryResult]] = {"all": list(queries)}
    for q in queries:
        out.setdefault(f"category:{q.category}", []).append(q)
    return out


def make_baseline(run: EvalRun, metrics: Sequence[str] = CI_METRICS) -> dict[str, Any]:
    """Baseline document of ``run`` (per-group means and per-query values)."""
    groups = {}
    for g, qs in _groups(run.queries).items():
        agg = aggregate(qs, g)
        groups[g] = {m: agg.means.get(m) for m in metrics} | {"n_queries": agg.n_queries}
    queries = {
        q.key: {"category": q.category} | {m: q.scores().get(m) for m in metrics} for q in run.queries
    }
    return {
        "format": BASELINE_FORMAT,
        "run_id": run.run_id,
        "config_hash": run.config_hash,
        "git_commit": run.git_commit,
        "created_at": run.finished_at.isoformat(),
        "groups": groups,
        "queries": queries,
    }


def save_baseline(run: EvalRun, path: str | Path) -> dict[str, Any]:
    """Write (or overwrite) the baseline file; creates parent folders. Returns the document."""
    doc = make_baseline(run)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    return doc


def load_baseline(path: str | Path) -> dict[str, Any]:
    """Read a baseline file. Raises :class:`BaselineError` when missing or malformed."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise BaselineError("baseline file not found (create it with --update-baseline)", path=str(p)) from e
    except (OSError, json.JSONDecodeError) as e:
        raise BaselineError(f"cannot read baseline: {os_reason(e)}", path=str(p)) from e
    if not isinstance(doc, dict) or doc.get("format") != BASELINE_FORMAT:
        raise BaselineError(f"not a memwb baseline (expected format {BASELINE_FORMAT!r})", path=str(p))
    for key in ("groups", "queries"):
        if not isinstance(doc.get(key), dict):
            raise BaselineError(f"missing or malformed {key!r}", path=str(p))
    return doc


def _restricted_means(bq: dict[str, Any], keys: Sequence[str], metrics: Sequence[str]) -> dict[str, float | None]:
    """Means of the baseline's per-query values over ``keys`` (None when no key defines the metric)."""
    out: dict[str, float | None] = {}
    for m in metrics:
        vals = [bq[k][m] for k in keys if k in bq and bq[k].get(m) is not None]
        out[m] = sum(vals) / len(vals) if vals else None
    return out


@dataclass(frozen=True)
class MetricDelta:
    """One metric of one group: baseline mean, current mean, delta with its paired interval."""

    group: str
    metric: str
    baseline: float | None
    now: float | None
    interval: PairedDelta | None
    regressed: bool

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.now is None:
            return None
        return self.now - self.baseline


@dataclass(frozen=True)
class CiOutcome:
    """Verdict of the gate: ``exit_code`` 0 or 1 and the reasons for 1."""

    exit_code: int
    reasons: tuple[str, ...]
    deltas: tuple[MetricDelta, ...]
    summary: Summary

    @property
    def regressions(self) -> list[MetricDelta]:
        return [d for d in self.deltas if d.regressed]


def compare(
    run: EvalRun,
    baseline: dict[str, Any] | None,
    *,
    max_drop: float = DEFAULT_MAX_DROP,
    metrics: Sequence[str] = CI_METRICS,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    fail_on_regression: bool = True,
    restrict_baseline: bool = False,
) -> CiOutcome:
    """Gate ``run`` against ``baseline`` (``None``: only the absolute checks apply).

    A metric regresses when ``now < baseline - max_drop`` for the group
    (``all`` or ``category:<name>``) with both values defined. With
    ``fail_on_regression=False`` (accepting a new baseline) regressions are
    reported in ``deltas`` but do not fail the gate. ``restrict_baseline``
    (gating on one split part): the baseline's group means are recomputed from
    its per-query values over the queries of ``run`` only, so a test-only run is
    compared with the baseline's figures on the same test queries.
    """
    if max_drop < 0:
        raise ValidationError(f"max_drop must be >= 0, got {max_drop}")
    summary = summarize(run)
    reasons: list[str] = []
    for name in summary.must_pass_failed:
        reasons.append(f"must-pass case failed: {name}")
    # an irrelevant label returned by a query of a documented limitation (tag ``known-gap``, the case's
    # comment says why) is reported, not gated: a new dev case that still fails must be committable
    # without hiding its label; a leak (``not_contains``) always gates
    gated = [q for q in run.queries if KNOWN_GAP_TAG not in q.tags]
    violations = sum(len(q.irrelevant_violations) for q in gated)
    if violations:
        reasons.append(f"{violations} irrelevant violation(s)")
    if summary.overall.leaks:
        reasons.append(f"{summary.overall.leaks} not_contains leak(s)")
    deltas: list[MetricDelta] = []
    if baseline is not None:
        bq = baseline["queries"]
        # the metric gate leaves out the known-gap queries too: a documented limitation sits at the edge by
        # definition (a relevant memory at rank 5 or 6, under the floor by 0.01), so its outcome flips with the
        # last digits of a cosine or a tie broken by a random memory id, and one flip in a category of 35 is a
        # drop of 0.029; the baseline's means are then taken over the same gated queries
        for g, all_qs in _groups(run.queries).items():
            qs = [q for q in all_qs if KNOWN_GAP_TAG not in q.tags]
            if not qs:
                continue
            base_means = baseline["groups"].get(g)
            # the baseline's own group means only stand for the same queries: a run of some of the suites (or a
            # baseline of more) is compared with the baseline's values of the queries both have, else unchanged
            # code "drops" from the whole set's mean to one suite's
            covers = base_means is not None and base_means.get("n_queries") == len(all_qs) and all(
                q.key in bq for q in all_qs)
            if restrict_baseline or len(qs) < len(all_qs) or not covers:
                base_means = _restricted_means(bq, [q.key for q in qs], metrics)
            agg = aggregate(qs, g)
            for m in metrics:
                now = agg.means.get(m)
                base = base_means.get(m) if base_means else None
                pairs = [
                    (bq[q.key][m], q.scores()[m])
                    for q in qs
                    if q.key in bq and bq[q.key].get(m) is not None and q.scores().get(m) is not None
                ]
                interval = None
                if pairs:
                    b, n = zip(*pairs, strict=True)
                    interval = paired_bootstrap_delta(
                        b, n, confidence=confidence, n_resamples=n_resamples, seed=seed
                    )
                regressed = now is not None and base is not None and now < base - max_drop - 1e-12
                deltas.append(MetricDelta(g, m, base, now, interval, regressed))
                if regressed and fail_on_regression:
                    reasons.append(f"{g} {m} dropped {base:.3f} -> {now:.3f} (more than {max_drop})")
    return CiOutcome(1 if reasons else 0, tuple(reasons), tuple(deltas), summary)
