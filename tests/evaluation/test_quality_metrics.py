"""Stale memories in the top k, context-level figures, abstention, and the benchmarks' official
metrics (LongMemEval recall_all/recall_any/ndcg_any at turn and session level, LoCoMo recall)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memory_engine.config import EngineConfig
from memory_engine.evaluation.importers import import_longmemeval
from memory_engine.evaluation.official import (
    lme_dcg,
    lme_evaluate,
    lme_turn2session,
    locomo_recall,
    longmemeval_metrics,
)
from memory_engine.evaluation.quality import calibration_frame, quality_figures, render_quality
from memory_engine.evaluation.reports import render_table, run_to_dict
from memory_engine.evaluation.runner import run_suites
from memory_engine.evaluation.suite import load_suites

HERE = Path(__file__).resolve().parent
PROBE = HERE / "fixtures" / "quality_probe.yaml"
DATA = next((p for p in (Path(os.environ.get("MEMWB_SHARED_DATA", "/nonexistent")),
                         HERE.parents[2] / "shared" / "data") if p.is_dir()), HERE.parents[2] / "shared" / "data")
LME = DATA / "longmemeval" / "longmemeval_oracle_1q_sample.json"
needs_lme = pytest.mark.skipif(not LME.exists(), reason="../shared/data not present")


def test_longmemeval_dcg_and_recall_follow_the_official_script():
    # the script's DCG does not discount rank 2: 1 + 1/log2(2) + 1/log2(3)
    assert lme_dcg([1, 1, 1], 3) == pytest.approx(2 + 1 / 1.5849625)
    corpus = ["a:0", "a:1", "b:0", "b:1", "c:0"]
    ranked = [("b:1",), ("c:0",), ("a:1",)]
    ra, rl, nd = lme_evaluate(ranked, ["a:1", "b:0"], corpus, 3)
    assert (ra, rl) == (1.0, 0.0)  # a:1 found, b:0 not: any yes, all no
    assert nd == pytest.approx((1 / 1.5849625) / (1 + 1))  # relevant at rank 3; ideal: two relevant at 1, 2
    assert lme_evaluate(ranked, ["a:1"], corpus, 2)[:2] == (0.0, 0.0)
    # session level: b:1 -> b (answer session), c:0 -> c, a:1 -> a; evidence sessions a, b
    ra, rl, nd = lme_turn2session(ranked, ["a:1", "b:0"], corpus, 2)
    assert (ra, rl) == (1.0, 0.0)
    ra, rl, _ = lme_turn2session(ranked, ["a:1", "b:0"], corpus, 3)
    assert (ra, rl) == (1.0, 1.0)
    # k grows until the top k holds k distinct sessions: b, b, a -> effective k 3 for k=2
    ra, rl, _ = lme_turn2session([("b:0",), ("b:1",), ("a:1",)], ["a:0"], corpus, 2)
    assert rl == 1.0
    m = longmemeval_metrics(ranked, ["a:1", "b:0"], corpus, top_k=10)
    assert set(m) == {f"{lvl}:{n}@{k}" for lvl in ("turn", "session") for n in ("recall_any", "recall_all", "ndcg_any")
                      for k in (5, 10)}  # @50 needs top_k 50


def test_locomo_recall_dialog_ids_and_session_summaries():
    assert locomo_recall(["D1:3", "D2:5"], ["D1:3", "D4:1"]) == 0.5
    assert locomo_recall(["S1", "S4"], ["D1:3", "D4:1", "D2:2"]) == pytest.approx(2 / 3)
    assert locomo_recall([], []) == 1.0  # the script counts a question without evidence as recalled


@needs_lme
def test_longmemeval_sample_reports_recall_all_and_recall_any_and_sets_abstention_apart(tmp_path):
    rec = json.loads(LME.read_text())[0]
    abs_rec = dict(rec, question_id=rec["question_id"] + "_abs", question="What was my time in the charity 10K swim?",
                   haystack_dates=rec["haystack_dates"][:1], haystack_session_ids=rec["haystack_session_ids"][:1],
                   haystack_sessions=[rec["haystack_sessions"][0][:4]])  # a short haystack keeps the test fast
    src = tmp_path / "lme.json"
    src.write_text(json.dumps([rec, abs_rec]))
    import_longmemeval(src, tmp_path / "suites")
    run = run_suites(load_suites([tmp_path / "suites"]), EngineConfig())
    answerable, abstain = run.queries
    assert abstain.unanswerable and abstain.official == {}  # _abs questions are excluded from recall
    o = answerable.official
    for lvl in ("turn", "session"):
        for k in (5, 10):
            assert o[f"{lvl}:recall_any@{k}"] >= o[f"{lvl}:recall_all@{k}"]
            assert 0.0 <= o[f"{lvl}:ndcg_any@{k}"] <= 1.0
    # the turn-level figures agree with our own rank metrics on the same hits
    assert o["turn:recall_any@10"] == answerable.hit
    assert o["turn:recall_all@10"] == (1.0 if answerable.recall == 1.0 else 0.0)
    figs = quality_figures(run.queries)
    assert figs.official["longmemeval"]["all"]["n"] == 1  # abstention excluded
    assert "type:knowledge-update" in figs.official["longmemeval"]
    assert figs.abstention.n == 1
    text = render_table(run)
    assert "official longmemeval metrics:" in text and "session:recall_all@5" in text and "turn:recall_any@5" in text


def test_stale_context_and_abstention_on_the_probe_suite():
    run = run_suites(load_suites([PROBE]), EngineConfig())
    q = {x.case_id: x for x in run.queries}
    # no correction word: the engine keeps the old colour live and ranks it first, a stale hit
    assert q["colour-drift"].stale_ranks == {"m_old": 1} and q["colour-drift"].stale_at_k == 1.0
    # an explicit correction supersedes Berlin: out of the top k
    assert q["moved"].stale_ranks == {"m_berlin": None} and q["moved"].stale_at_k == 0.0
    assert q["never-said"].stale_ranks is None and q["never-said"].unanswerable
    c = q["colour-drift"].context
    assert c.stale == 1 and c.wasted_tokens > 0 and c.tokens > 0 and c.relevant_inside == 0.0
    assert q["moved"].context.relevant_inside == 1.0 and q["moved"].context.full_tokens > 0
    f = quality_figures(run.queries)
    assert (f.stale.n_scope, f.stale.n_stale, f.stale.at_rank_1) == (2, 1, 0.5)
    assert f.abstention.n == 1 and f.abstention.share_returned == 0.0
    lines = "\n".join(render_quality(f))
    assert "stale@k: 1/2" in lines and "tokens per query" in lines and "abstention: 0/1" in lines
    # the same figures from warehouse-shaped rows (what the Golden eval page reads)
    from memory_engine.evaluation.store import query_rows

    assert quality_figures(query_rows(run)).stale == f.stale
    cal = calibration_frame(run.queries)
    assert set(cal["kind"]) == {"answerable", "unanswerable"}
    assert run_to_dict(run)["quality"]["stale"]["n_stale"] == 1


def test_sweeps_can_optimise_or_constrain_the_new_figures():
    from memory_engine.evaluation.sweep import Direction, compute_metrics, objective_support, parse_metric

    suites = load_suites([PROBE])
    stale, unans = parse_metric("stale@k"), parse_metric("unanswerable_returned")
    assert stale.direction == unans.direction == Direction.MINIMIZE
    assert parse_metric("context_recall").direction == Direction.MAXIMIZE
    assert objective_support(suites, stale) == 2 and objective_support(suites, unans) == 1
    assert objective_support(suites, parse_metric("ndcg@k")) == 2
    run = run_suites(suites, EngineConfig())
    m = compute_metrics(run.cases, ["stale@k", "unanswerable_returned", "context_tokens"], per_query=(stale,))
    assert m.overall["stale@k"] == 0.5 and m.overall["unanswerable_returned"] == 0.0
    assert m.by_category["conflict_update"]["stale@k"] == 0.5
    assert sorted(v for v in m.per_query["stale@k"].values() if v is not None) == [0.0, 1.0]


def test_official_tables_group_locomo_by_official_category_and_memdaily_by_type():
    rows = [
        ({"locomo:recall": 1.0, "recall@k": 1.0}, {"tags": ["locomo", "locomo-cat-4:single-hop"], "category": "locomo"}),
        ({"locomo:recall": 0.5, "recall@k": 0.5}, {"tags": ["locomo", "locomo-cat-1:multi-hop"], "category": "locomo"}),
        ({"locomo:recall": 0.0, "recall@k": 0.0}, {"tags": ["locomo", "locomo-cat-1:multi-hop"], "category": "locomo"}),
        ({"recall@k": 1.0, "ndcg@k": 0.5}, {"tags": ["memdaily:01_simple_events"], "category": "memdaily_01_simple_events"}),
    ]
    from memory_engine.evaluation.quality import official_tables

    t = official_tables(rows)
    assert t["locomo"]["all"] == {"n": 3.0, "locomo:recall": 0.5}
    assert t["locomo"]["category:1 multi-hop"]["locomo:recall"] == 0.25
    assert t["locomo"]["category:4 single-hop"]["n"] == 1.0
    assert t["memdaily"]["type:01_simple_events"] == {"n": 1.0, "recall@k": 1.0, "ndcg@k": 0.5}
