"""``memwb compare``: two stored runs side by side: parameter diff (not hashes), per-category
deltas with paired-bootstrap intervals, and the queries that flipped."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memory_engine.evaluation.compare import config_diff, item_frame

FIX = Path(__file__).resolve().parents[1] / "sweep" / "fixtures"
SUITES = [str(FIX / "overfit_dev.yaml"), str(FIX / "overfit_test_abstain.yaml")]


def test_config_diff_names_parameters_and_ignores_paths():
    a = {"retrieval": {"floor": 0.45, "top_k": 5}, "workspace": "/a", "tracing": {"enabled": True}}
    b = {"retrieval": {"floor": 0.0, "top_k": 5}, "workspace": "/b", "tracing": {"enabled": False}}
    d = config_diff(a, b)
    assert d.to_dict("records") == [{"parameter": "retrieval.floor", "a": "0.45", "b": "0.0"}]


def test_item_frame_orders_flips_first():
    def row(case, passed, text="t"):
        return {"case_id": case, "query_id": "q", "metrics": {"pass": passed}, "details": {"text": text,
                "category": "c", "retrieved": [{"labels": ["m"], "content": "x"}]}}

    df = item_frame([row("s/a", 1.0), row("s/b", 0.0), row("s/c", 1.0)],
                    [row("s/a", 1.0), row("s/b", 1.0), row("s/c", 0.0), row("s/d", 1.0)])
    assert df["change"].tolist() == ["broke", "fixed", "only B", "same"]
    assert df.loc[0, "top_a"] == "m: x"


def test_cli_compare_two_stored_runs(tmp_path, monkeypatch):
    from memory_engine.cli import load_commands

    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    app, runner = load_commands(), CliRunner()
    for extra in (["--set", "retrieval.floor=0.45"], ["--set", "retrieval.floor=0.0"]):  # explicit: defaults move
        res = runner.invoke(app, ["eval", *SUITES, "--no-ragas", "-q", *extra])
        assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["compare"])  # newest (floor 0.0) against the one before
    assert res.exit_code == 0, res.output
    out = res.output
    assert "retrieval.floor: 0.45 -> 0.0" in out
    assert "flipped queries: 3 broke (pass -> fail), 3 fixed (fail -> pass)" in out
    assert "abstention" in out and "paraphrase" in out and "[" in out  # per category, with intervals
    res = runner.invoke(app, ["compare", "--format", "json"])
    doc = json.loads(res.stdout)
    assert {f["change"] for f in doc["flipped"]} == {"broke", "fixed"}
    ab = next(d for d in doc["deltas"] if d["group"] == "abstention" and d["metric"] == "pass")
    assert ab["delta"] == -1.0 and ab["significant"]
    assert runner.invoke(app, ["compare", "nope", "nada"]).exit_code == 2
