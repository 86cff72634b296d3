"""Golden-case evaluation: suite loader, replay runner, rank metrics, ragas
bridge, CI gate, reports and importers for public memory benchmarks.

Works without the app (like phoenix-evals without the Phoenix server)::

    from memory_engine.evaluation import load_suites, run_suites, summarize
    run = run_suites(load_suites(["eval_sets"]), EngineConfig())
    print(summarize(run).overall.means["recall@k"])

Contract of the suite format: ``GOLDEN_CASES.md``. Submodules import lazily
heavy parts (the engine, ragas, plotly) only when used.
"""

from .aggregate import Aggregate, Summary, WriteStats, summarize
from .ci import BaselineError, CiOutcome, compare, load_baseline, make_baseline, save_baseline
from .metrics import hit_at_k, ndcg_at_k, paired_bootstrap_delta, recall_at_k, reciprocal_rank
from .runner import CaseResult, EvalRun, Miss, MissKind, QueryResult, run_case, run_suites
from .suite import ResolvedSuite, SuiteErrors, load_suite, load_suites, parse_suite

__all__ = [
    "Aggregate",
    "BaselineError",
    "CaseResult",
    "CiOutcome",
    "EvalRun",
    "Miss",
    "MissKind",
    "QueryResult",
    "ResolvedSuite",
    "Summary",
    "SuiteErrors",
    "WriteStats",
    "compare",
    "hit_at_k",
    "load_baseline",
    "load_suite",
    "load_suites",
    "make_baseline",
    "ndcg_at_k",
    "paired_bootstrap_delta",
    "parse_suite",
    "recall_at_k",
    "reciprocal_rank",
    "run_case",
    "run_suites",
    "save_baseline",
    "summarize",
]
