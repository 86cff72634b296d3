"""Calibrate an embedder's similarity baselines and the relevance floor on the dev golden suites
(issue 16: "the floor calibrated per embedder on data, not picked by hand").

1. **Baselines.** Every query of a case against the memories of the other cases whose texts are not
   in its own case (the scenarios are disjoint, so these pairs are unrelated), split by script with
   ``retrieve.candidates.is_cjk``: en-en, zh-zh and cross-script. A baseline is the ``--percentile``
   (default 75) of its kind's unrelated cosines: ``embedding.similarity_baseline`` over the en-en and
   cross-script pairs (both are rescaled by it), ``embedding.cjk_similarity_baseline`` over zh-zh.
   e5-small packs Chinese pairs about 0.07 higher than English ones, hence two baselines.
2. **Floor.** The suites replayed through the engine with those baselines; per query the best
   candidate's relevance (``evaluation.quality.calibration_frame``); for each floor of the grid the
   share of answerable questions whose best candidate reaches it and of never-stored ones that stay
   silent (``floor_sweep``); the calibrated floor is the middle of the widest plateau of the best
   balanced accuracy (``pick_floor``).

Dev data only (``eval_sets/``; never the test split). Prints the percentiles, the baselines, the floor
table and the ``--set`` overrides to use; ``--json`` writes them.

    PYTHONPATH=. python benchmarks/calibrate.py eval_sets
    PYTHONPATH=. python benchmarks/calibrate.py eval_sets --set embedding.backend=sentence_transformers
    PYTHONPATH=. python benchmarks/calibrate.py eval_sets --baselines-only
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from memory_engine.config import load_config
from memory_engine.embedding import make_embedder
from memory_engine.evaluation.quality import calibration_frame, floor_sweep, pick_floor
from memory_engine.evaluation.runner import run_suites
from memory_engine.evaluation.suite import load_suites
from memory_engine.retrieve.candidates import is_cjk

PCTS = (10, 25, 50, 75, 90, 99)


def unrelated_cosines(emb: Any, suites: list[Any]) -> dict[str, list[float]]:
    """Cosines of unrelated (query, memory) pairs by kind: 'en-en', 'zh-zh', 'cross'."""
    cases = [c for s in suites for c in s.cases]
    docs = list(dict.fromkeys(e.text.strip() for c in cases for e in c.events))
    index = {t: i for i, t in enumerate(docs)}
    dvec = emb.embed_documents(docs)
    dzh = np.array([is_cjk(t) for t in docs])
    out: dict[str, list[float]] = {"en-en": [], "zh-zh": [], "cross": []}
    for c in cases:
        own = np.zeros(len(docs), dtype=bool)
        own[[index[e.text.strip()] for e in c.events]] = True
        for q in c.queries:
            cos = dvec @ emb.embed_query(q.text)
            qzh = is_cjk(q.text)
            for kind, mask in (("zh-zh" if qzh else "en-en", dzh == qzh), ("cross", dzh != qzh)):
                out[kind].extend(float(x) for x in cos[mask & ~own])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", type=Path, help="Dev suite files or folders (never the test split).")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="dotted.key=value (repeatable).")
    ap.add_argument("--percentile", type=float, default=75.0,
                    help="Percentile of the unrelated cosines taken as 'unrelated' (default 75).")
    ap.add_argument("--baselines-only", action="store_true", help="Skip the replay that calibrates the floor.")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    if any("eval_sets_test" in str(p) for p in a.paths):
        ap.error("calibrate on dev suites only")
    cfg = load_config(None, a.sets)
    suites = load_suites([str(p) for p in a.paths])
    emb = make_embedder(cfg.embedding)
    cos = unrelated_cosines(emb, suites)
    out: dict[str, Any] = {"embedding": emb.version, "percentiles": PCTS, "pairs": {}}
    print(f"{emb.version}: unrelated (query, memory) cosines, percentiles {PCTS}")
    for kind, xs in cos.items():
        p = np.percentile(xs, PCTS).round(3).tolist() if xs else []
        out["pairs"][kind] = {"n": len(xs), "percentiles": p}
        print(f"  {kind:6s} n={len(xs):6d}  {p}")
    general = [*cos["en-en"], *cos["cross"]]
    base = round(float(np.percentile(general, a.percentile)), 3) if general else None
    cjk = round(float(np.percentile(cos["zh-zh"], a.percentile)), 3) if cos["zh-zh"] else None
    out["similarity_baseline"], out["cjk_similarity_baseline"] = base, cjk
    print(f"p{a.percentile:g}: embedding.similarity_baseline={base}  embedding.cjk_similarity_baseline={cjk} "
          f"(configured: {cfg.embedding.similarity_baseline}, {cfg.embedding.cjk_similarity_baseline}; None = "
          "the backend's default)")
    if not a.baselines_only:
        over: dict[str, Any] = {"embedding.similarity_baseline": base}
        if cjk is not None:
            over["embedding.cjk_similarity_baseline"] = cjk
        run = run_suites(suites, cfg.with_overrides(over))
        df = calibration_frame([q for c in run.cases for q in c.queries])
        rows = floor_sweep(df, [round(0.05 * i, 2) for i in range(1, 13)])
        low, high, floor = pick_floor(rows)
        n_ans, n_una = int((df["kind"] == "answerable").sum()), int((df["kind"] == "unanswerable").sum())
        print(f"floor sweep ({n_ans} answerable, {n_una} never-stored queries): floor answered silent balanced")
        for r in rows:
            print(f"  {r['floor']:.2f}  {r['answered']:.3f}  {r['silent']:.3f}  {r['balanced']:.3f}")
        print(f"plateau {low:.2f}-{high:.2f}: retrieval.floor={floor} (configured {cfg.retrieval.floor})")
        out.update(floor_rows=rows, plateau=[low, high], floor=floor)
    if a.json:
        a.json.write_text(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
