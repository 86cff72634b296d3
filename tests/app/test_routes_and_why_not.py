"""The workbench shows what the engine knows about a hit and a miss: the Traces page's hits table names every
route a hit came from (the entity hop's too), and the Golden eval page's why-not of a floor miss gives the
check it missed (the floor's gate or the candidate floor) with the value, the threshold and the margin.
Real engine and warehouse in a temporary workspace, pages under streamlit.testing AppTest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_engine import EngineConfig
from memory_engine.workspace import open_workspace

pytestmark = [pytest.mark.app, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "app" / "pages" / "2_Traces.py"
EVAL = ROOT / "app" / "pages" / "4_Golden_eval.py"
FIX = ROOT / "tests" / "sweep" / "fixtures"
T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)


@pytest.mark.slow  # the bundled model and a page run
def test_traces_hits_table_names_the_hop_route(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    with open_workspace(EngineConfig(workspace=str(ws))) as opened:
        eng = opened.engine
        for i, text in enumerate(("Nadia leads the mobile onboarding revamp",
                                  "The mobile onboarding revamp relies on the new identity API",
                                  "The identity API launch is on hold until legal approves the consent text")):
            eng.add(text, user_id="u1", session_id=f"s{i}", now=T0 + timedelta(days=i))
        res = eng.retrieve("Is Nadia's work going to slip?", user_id="u1", now=T0 + timedelta(days=6))
        assert any("hop" in h.sources for h in res.hits)
    monkeypatch.setenv("MEMWB_HOME", str(ws))
    at = AppTest.from_file(str(TRACES), default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    hits = next(d.value for d in at.dataframe if {"routes", "content"} <= set(d.value.columns))
    blocker = hits[hits["content"].str.contains("consent text")]
    assert len(blocker) == 1 and "hop" in blocker["routes"].iloc[0].split("+")


@pytest.mark.slow  # measured 10-40 s on 2 shared cores
def test_golden_eval_why_not_gives_the_floor_numbers(demo_ws):
    at = AppTest.from_file(str(EVAL), default_timeout=240).run()
    assert not at.exception, [e.value for e in at.exception]
    at.sidebar.text_input(key="ge_dir").set_value(str(FIX)).run()
    at.multiselect(key="ge_suites").set_value(["overfit_dev.yaml"]).run()
    at.text_area(key="ge_overrides").set_value("retrieval.floor=0.45")  # the weak paraphrases miss it
    at.button(key="ge_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    why = [d.value for d in at.dataframe if {"label", "kind", "detail"} <= set(d.value.columns)]
    floor = [x for f in why for x in f[f["kind"] == "below_floor"]["detail"]]
    assert floor, why
    for detail in floor:
        # candidate_floor is None: both checks read retrieval.floor, and the text names the field to change
        assert "< retrieval.floor 0.450 (margin -" in detail, detail
