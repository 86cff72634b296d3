"""Sweep throughput: retrieval-only trials (reused memory spaces) vs write-parameter trials (replays
with cached embeddings), per minute, on golden suites cut to about ``--queries`` queries.

    PYTHONPATH=. python benchmarks/sweep.py --queries 100 [--suites eval_sets] [--jobs 1]

Prints one line per kind: trials, median seconds per trial, trials per minute, queries per second.
The first evaluation (model load, embeddings, first write) is reported separately as "cold".
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace

from memory_engine.config import EngineConfig
from memory_engine.evaluation.suite import load_suites
from memory_engine.evaluation.sweep import SearchMode, parse_metric, parse_params
from memory_engine.evaluation.sweep_study import SweepSpec, run_sweep


def cut(suites, n_queries):
    out, total = [], 0
    for s in suites:
        cases = []
        for c in s.cases:
            if total >= n_queries:
                break
            cases.append(c)
            total += len(c.queries)
        if cases:
            out.append(replace(s, cases=tuple(cases)))
    return out, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--suites", nargs="+", default=["eval_sets"])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    suites, n = cut(load_suites(args.suites), args.queries)
    base = EngineConfig().with_overrides({"workspace": tempfile.mkdtemp(prefix="memwb-bench-")})
    storage = f"sqlite:///{base.workspace}/sweeps.sqlite3" if args.jobs > 1 else None
    kinds = {
        "retrieval-only": ["retrieval.floor=0.3:0.6:0.05", "retrieval.fusion=weighted,five_term,rrf"],
        "write-param": ["write.threshold=0.5:0.7:0.05"],
    }
    print(f"{n} queries in {sum(len(s.cases) for s in suites)} cases; jobs={args.jobs}")
    for kind, params in kinds.items():
        spec = SweepSpec(tuple(args.suites), parse_params(params, base), SearchMode.GRID, (parse_metric("ndcg@k"),))
        t0 = time.perf_counter()
        run = run_sweep(spec, base, suites=suites, storage=storage, jobs=args.jobs, study_name=f"bench-{kind}")
        wall = time.perf_counter() - t0
        base_s = run.study.user_attrs["memwb_baseline"]["duration_s"]
        durs = [t.user_attrs["duration_s"] for t in run.study.trials if t.user_attrs.get("duration_s")]
        replayed = [t.user_attrs.get("replayed") for t in run.study.trials]
        med = statistics.median(durs)
        trials_wall = wall - base_s
        print(f"{kind:15s} trials={len(durs):3d} replayed={sum(bool(r) for r in replayed):3d} "
              f"median={med:.3f}s/trial  {60 / med:.0f} trials/min (per trial), "
              f"{len(durs) * 60 / trials_wall:.0f} trials/min (wall incl. bookkeeping), "
              f"{n / med:.0f} queries/s; baseline (cold for the first kind) {base_s:.1f}s")


if __name__ == "__main__":
    main()
