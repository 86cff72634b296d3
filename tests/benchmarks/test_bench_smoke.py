"""Smoke tests: each benchmark script runs end to end on a tiny input and
writes JSON with the figures the issue asks for. The figures themselves are
not asserted against thresholds (benchmarks are not timed tests); their shape
and internal consistency are."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10_dev.json"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve their module
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.unit
def test_label_metrics_recall_and_rr():
    m = _load("locomo")
    ranked = [frozenset({"D1:1"}), frozenset({"D1:2", "D1:3"}), frozenset(), frozenset({"D2:1"})]
    rec, rr = m.label_metrics(ranked, {"D1:3", "D2:1"}, cutoffs=(2, 10))
    assert rec == {2: 0.5, 10: 1.0}
    assert rr == pytest.approx(0.5)  # the merged memory at rank 2 carries D1:3
    rec, rr = m.label_metrics([frozenset({"x"})] * 12 + [frozenset({"D9:9"})], {"D9:9"})
    assert rec == {5: 0.0, 10: 0.0} and rr == 0.0  # rank 13 is outside MRR@10
    with pytest.raises(ValueError):
        m.label_metrics(ranked, set())


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.is_file(), reason="LoCoMo data not present")
def test_locomo_script_runs_on_one_conversation(tmp_path, capsys):
    m = _load("locomo")
    out = tmp_path / "locomo.json"
    pq = tmp_path / "per_question.json"
    args = [str(LOCOMO), "--limit-conversations", "1", "--limit-questions", "6", "--window", "10", "--out", str(out),
            "--per-question", str(pq)]
    assert m.main(args) == 0
    printed = capsys.readouterr().out
    assert "ratios against dense-only" in printed and "DRAGON" in printed
    res = json.loads(out.read_text())
    rows = {r["name"]: r for r in res["strategies"]}
    assert list(rows) == ["full-context", "window-10", "dense", "keyword", "hybrid-weighted", "hybrid-five_term",
                          "hybrid-rrf", "hybrid-hybrid", "defaults-every-turn", "engine-defaults"]
    turns = res["data"]["turns"]
    assert res["data"]["questions_run"] == 6
    for name, r in rows.items():
        assert r["n_queries"] == 6, name
        assert 0.0 <= r["ctx_recall"] <= 1.0
        if name != "full-context":
            assert 0.0 <= r["recall_at_5"] <= r["recall_at_10"] <= 1.0
            assert 0.0 <= r["mrr_at_10"] <= 1.0
    full = rows["full-context"]
    assert full["recall_at_5"] is None and full["ctx_recall"] == 1.0 and full["records"] == turns
    assert rows["window-10"]["records"] == 10
    # every turn stored for the retrieval-only strategies; the write path keeps every substantive turn
    # (issue 16) and merges duplicates, so it holds at most as many
    assert rows["dense"]["records"] == turns
    assert 0 < rows["engine-defaults"]["records"] <= turns
    # the point of retrieval: far fewer tokens than the whole transcript
    assert full["tokens_per_query"] > 10 * rows["dense"]["tokens_per_query"] > 0
    ed = rows["engine-defaults"]
    assert sum(ed["extra"]["write_outcomes"].values()) == turns
    # nothing the write pipeline dropped can be retrieved
    assert ed["recall_at_10"] <= ed["extra"]["evidence_kept_by_pipeline"] + 1e-9
    # --per-question: every ranking strategy, one row per question, whose means are the summary's figures
    per_q = json.loads(pq.read_text())
    assert set(per_q) == set(rows) - {"full-context"}
    for name, qrows in per_q.items():
        assert len(qrows) == 6 and len({(r["conversation"], r["query"]) for r in qrows}) == 6, name
        assert sum(r["recall@10"] for r in qrows) / 6 == pytest.approx(rows[name]["recall_at_10"]), name
        assert sum(r["rr"] for r in qrows) / 6 == pytest.approx(rows[name]["mrr_at_10"]), name
        assert all(len(r["top"]) <= 10 and r["relevant"] and r["question"] for r in qrows), name


@pytest.mark.integration
@pytest.mark.slow
def test_scale_script_runs_on_a_small_store(tmp_path, capsys):
    m = _load("scale")
    out = tmp_path / "scale.json"
    args = ["--sizes", "500", "--users", "50", "--queries", "20", "--e5-queries", "3", "--single-adds", "5",
            "--probe-queries", "5", "--client-queries", "3", "--dir", str(tmp_path / "shards"), "--out", str(out)]
    assert m.main(args) == 0
    assert "edge (default)" in capsys.readouterr().out
    res = json.loads(out.read_text())
    (s,) = res["sizes"]
    e = s["edge"]
    assert s["size"] == 500 and s["per_user"] == 10
    assert e["dense_recall_at_10_vs_floor"] == pytest.approx(1.0)  # filtered search over 10 points is exact
    assert e["retrieve"]["n"] == 20 and e["retrieve"]["p50_ms"] > 0 and e["retrieve_mean_hits"] > 0
    assert e["retrieve_with_e5_query"]["n"] == 3
    assert e["batched_upsert_per_s"] > 0 and e["single_add"]["outcomes"] == {"stored": 5}
    assert e["probe"]["open_s"] > 0 and e["disk_mb"] > 0
    assert s["client_memory"]["queries"] == 3 and s["client_memory"]["dense_recall_at_10_vs_floor"] == pytest.approx(1.0)


@pytest.mark.integration
def test_gate_scenes_runs_and_counts_both_kinds(tmp_path):
    m = _load("gate_scenes")
    out = tmp_path / "gate.json"
    assert m.main(["--limit", "2", "--out", str(out)]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    s = got["summary"]
    assert s["answerable"][1] == 2 and s["near_miss"][1] == 2 and len(got["rows"]) == 4
    for r in got["rows"]:  # pass is what the rule says: answerable in the top 3, a near miss empty
        assert r["pass"] == ((r["memory_rank"] or 99) <= 3 if r["kind"] == "ans" else not r["hits"])
    assert len({(r["kind"], r["question"]) for r in got["rows"]}) == 4
    assert not s["not_stored"]
