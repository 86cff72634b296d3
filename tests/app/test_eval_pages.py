"""Golden eval and Parameter sweeps pages: the new run shows after Run (issue 13 defect 4), the
sweep page's defaults give scored trials and a best config (defect 5), dev/test split figures,
the generalization check, and two runs compared item by item."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = [pytest.mark.app, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
EVAL = ROOT / "app" / "pages" / "4_Golden_eval.py"
SWEEPS = ROOT / "app" / "pages" / "5_Parameter_sweeps.py"
FIX = ROOT / "tests" / "sweep" / "fixtures"


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


@pytest.mark.slow  # measured 7-30 s on 2 shared cores; still runs in make test
def test_golden_eval_shows_the_new_run_split_scores_and_compares_two_runs(demo_ws, tmp_path):
    test_dir = tmp_path / "held_out"
    test_dir.mkdir()
    shutil.copy(FIX / "overfit_test_abstain.yaml", test_dir)
    at = AppTest.from_file(str(EVAL), default_timeout=240).run()
    assert not at.exception, [e.value for e in at.exception]
    at.sidebar.text_input(key="ge_dir").set_value(str(FIX)).run()
    for t in at.sidebar.text_input:
        if t.key == "ge_test_dir":
            t.set_value(str(test_dir))
    at.multiselect(key="ge_suites").set_value(["overfit_dev.yaml"]).run()
    at.text_area(key="ge_overrides").set_value("retrieval.floor=0.45")  # explicit: the default floor may move
    at.button(key="ge_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert _metric(at, "recall@k") == "0.000"  # floor 0.45: the weak paraphrases are missed
    old_id = next(x.value for x in at.success if "stored" in x.value).split()[1]
    # a second run that finds them: tiles and charts must show it, not the run newest at page load
    at.text_area(key="ge_overrides").set_value("retrieval.floor=0.0")
    at.button(key="ge_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    new_id = next(x.value for x in at.success if "stored" in x.value).split()[1]
    assert at.selectbox(key="ge_a").value == new_id
    assert _metric(at, "recall@k") == "1.000"
    # split membership and both scores
    assert any(h.value == "Dev and test" for h in at.subheader)
    assert _metric(at, "dev pass rate (3 queries)") == "1.000"
    assert _metric(at, "test pass rate (3 queries)") == "0.000"  # floor 0.0 answers never-stored questions
    assert _metric(at, "unanswerable that returned something") == "100.0%"
    # B = the default-floor run against A = floor 0.0: parameters, flips, per-category deltas
    at.selectbox(key="ge_b").select(old_id).run()
    assert not at.exception, [e.value for e in at.exception]
    frames = [d.value for d in at.dataframe]
    diff = next(f for f in frames if "parameter" in f.columns)
    assert diff["parameter"].tolist() == ["retrieval.floor"]
    assert any("3 broke, 3 fixed" in m.value for m in at.markdown)
    per_cat = next(f for f in frames if {"group", "delta", "low", "high"} <= set(f.columns))
    assert {"paraphrase", "abstention"} <= set(per_cat["group"])


def test_sweep_page_defaults_give_a_best_config(demo_ws):
    at = AppTest.from_file(str(SWEEPS), default_timeout=300).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="sw_suites").value  # a suite whose queries can score ndcg@k
    at.button(key="sw_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("trials run" in x.value for x in at.success)
    assert not any("undefined" in c.value for c in at.caption)
    assert [b.key for b in at.get("download_button")] == ["sw_dl"]


@pytest.mark.slow  # measured 7-30 s on 2 shared cores; still runs in make test
def test_sweep_page_reports_the_chosen_config_on_held_out_suites(demo_ws):
    at = AppTest.from_file(str(SWEEPS), default_timeout=300).run()
    at.multiselect(key="sw_suites").set_value(["abstention.yaml", "seed_golden.yaml"])
    test_files = at.multiselect(key="sw_test").options
    assert test_files, "the frozen test split is missing"
    at.multiselect(key="sw_test").set_value([test_files[0]])
    at.text_area(key="sw_params").set_value("retrieval.floor=0.0,0.45")
    at.text_input(key="sw_obj").set_value("pass")
    at.button(key="sw_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    gen = next(d.value for d in at.dataframe if "split" in d.value.columns and "chosen" in d.value.columns)
    assert gen["split"].tolist() == ["dev", "test"]
    assert any(m.label.startswith("Generalization gap") for m in at.metric)
    assert at.warning or any("carries over" in x.value for x in at.success)


def test_by_category_chart_names_at_most_the_top_categories(demo_ws, wh):
    """The demo run spans every golden suite (more categories than the axis can label): the chart shows the
    GROUP_CHART_TOP largest and pools the rest into one "other" bar."""
    import json

    from memory_engine import viz

    runs = wh.list_eval_runs(limit=1000)
    cats = {r["run_id"]: {(q.get("details") or {}).get("category") for q in wh.eval_queries(r["run_id"])} for r in runs}
    widest = max(cats, key=lambda i: len(cats[i]))
    assert len(cats[widest]) > viz.GROUP_CHART_TOP + 1  # otherwise nothing would be pooled
    at = AppTest.from_file(str(EVAL), default_timeout=240).run()
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="ge_a").select(widest).run()
    assert not at.exception, [e.value for e in at.exception]
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    (fig,) = [f for f in specs if (f.get("layout", {}).get("title") or {}).get("text") == "By category"]
    shown = {x for trace in fig["data"] for x in trace["x"]}
    assert len(shown) <= viz.GROUP_CHART_TOP + 1
    assert any(x.startswith("other (") for x in shown)


@pytest.mark.slow  # a two-trial CLI sweep plus one page run
def test_a_sweep_run_from_the_cli_shows_its_figures_on_the_sweeps_page(tmp_path, monkeypatch):
    """`memwb sweep` keeps its optuna study in the workspace (sweeps.sqlite3): the page draws the same figures for
    it as for a sweep started in the app, not only the trials table."""
    from typer.testing import CliRunner

    from memory_engine.cli import load_commands

    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    res = CliRunner().invoke(load_commands(), [
        "sweep", str(FIX / "tiny_sweep.yaml"), "--param", "retrieval.floor=0.0,0.45", "--param",
        "retrieval.top_k=3,5", "--objective", "recall@k", "--study", "cli-study", "-q",
    ])
    assert res.exit_code == 0, res.output
    at = AppTest.from_file(str(SWEEPS), default_timeout=300).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="sw_pick").value == "cli-study"
    keys = [c.proto.id for c in at.get("plotly_chart")]
    assert any("sw_stored_parallel" in k for k in keys), keys
    assert any("sw_stored_heat" in k for k in keys), keys  # two parameters: the contour too
    assert [b.key for b in at.get("download_button")] == ["sw_stored_dl"]
