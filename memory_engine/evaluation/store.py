"""Persist evaluation runs into the DuckDB warehouse (so the app can show and compare them).

One run row (run id, config, config hash, git commit, timestamps, summary
metrics) plus one row per query. Case ids are stored as ``<suite>/<case>`` so
a run over several suites keeps its rows distinct.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .aggregate import summarize, to_jsonable
from .quality import quality_figures
from .runner import EvalRun


def query_rows(run: EvalRun) -> list[dict[str, Any]]:
    """Per-query rows: ``case_id`` (``suite/case``), ``query_id``, ``metrics``, ``details``
    (``details.split`` is ``dev``/``test`` when the run records a split, else None)."""
    rows = []
    membership = (run.extras.get("split") or {}).get("membership") or {}
    for q in run.queries:
        rows.append({
            "case_id": f"{q.suite}/{q.case_id}",
            "query_id": q.query_id,
            "metrics": q.scores() | {"latency_ms": q.latency_ms},
            "details": {
                "suite": q.suite, "category": q.category, "lang": q.lang, "tags": list(q.tags), "text": q.text,
                "k": q.k, "passed": q.passed, "must_pass": q.must_pass,
                "assertions": to_jsonable(q.assertions), "relevant_ranks": q.relevant_ranks,
                "retrieved": to_jsonable(q.retrieved), "misses": to_jsonable(q.misses),
                "irrelevant_violations": list(q.irrelevant_violations), "leaks": list(q.leaks),
                "split": membership.get(f"{q.suite}/{q.case_id}"),
                "unanswerable": q.unanswerable, "stale_ranks": q.stale_ranks,
            },
        })
    return rows


def save_run(run: EvalRun, *, workspace: str | Path | None = None, warehouse: Any = None) -> str:
    """Store ``run`` in ``warehouse`` (default: the workspace warehouse). Returns the run id.

    Raises :class:`~memory_engine.errors.WarehouseError` when DuckDB fails.
    """
    if warehouse is None:  # beside a running app the run goes through it (the spool), never the file lock
        from ..observability.spool import open_writer
        from ..observability.warehouse import default_path

        warehouse = open_writer(default_path(workspace).parent)
    s = summarize(run)
    warehouse.save_eval_run(
        run.run_id,
        suite=",".join(name for name, _ in run.suites),
        config=run.config,
        config_hash=run.config_hash,
        git_commit=run.git_commit,
        started_at=run.started_at,
        finished_at=run.finished_at,
        metrics=to_jsonable(s.overall.means) | {
            "n_queries": s.overall.n_queries, "irrelevant_violations": s.overall.irrelevant_violations,
            "leaks": s.overall.leaks, "cases_passed": s.cases_passed, "n_cases": s.n_cases,
        },
        meta={
            "suites": [{"name": n, "path": p} for n, p in run.suites],
            "by_category": to_jsonable({k: v.means for k, v in s.by_category.items()}),
            "writes": to_jsonable(s.writes),
            "miss_kinds": s.miss_kinds,
            "ragas": to_jsonable(run.extras.get("ragas")),
            "duration_s": run.duration_s,
            "split": {k: v for k, v in (run.extras.get("split") or {}).items() if k != "membership"} or None,
            "by_split": to_jsonable({k: v.means | {"n_queries": v.n_queries} for k, v in s.by_split.items()}),
            "quality": to_jsonable(quality_figures(run.queries)),
        },
        queries=query_rows(run),
    )
    return run.run_id
