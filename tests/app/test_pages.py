"""Every workbench page under streamlit.testing AppTest on the seeded demo workspace."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = [pytest.mark.app, pytest.mark.integration]

APP = Path(__file__).resolve().parents[2] / "app"
PAGES = {
    "home": APP / "Home.py",
    "overview": APP / "pages" / "1_Overview.py",
    "traces": APP / "pages" / "2_Traces.py",
    "review": APP / "pages" / "3_Citation_review.py",
    "eval": APP / "pages" / "4_Golden_eval.py",
    "sweeps": APP / "pages" / "5_Parameter_sweeps.py",
    "explorer": APP / "pages" / "6_Memory_explorer.py",
    "health": APP / "pages" / "7_Health.py",
    "ingest": APP / "pages" / "8_Ingest.py",
    "trace_view": APP / "pages" / "9_Trace_view.py",
}
NUMBER = re.compile(r"\d")


def run(name: str) -> AppTest:
    at = AppTest.from_file(str(PAGES[name]), default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_every_page_file_is_covered():
    assert sorted(p.name for p in (APP / "pages").glob("*.py")) == sorted(
        p.name for k, p in PAGES.items() if k != "home")


def test_home_names_the_data_source(demo_ws):
    at = run("home")
    assert any("demo replay" in c.value for c in at.caption)
    assert at.metric[0].value.replace(",", "").isdigit()


def test_overview_tiles_have_numbers_and_counts(demo_ws):
    at = run("overview")
    tiles = {m.label: m.value for m in at.metric}
    assert set(tiles) == {"Citation hit rate", "Citation accuracy", "Write efficacy (7 d)", "Retrieval p95",
                          "Health score"}
    assert all(NUMBER.search(v) for v in tiles.values()), tiles
    assert any(re.fullmatch(r"\d+/\d+", c.value) for c in at.caption)
    assert [s.key for s in at.sidebar.selectbox] == ["f_tenant_id", "f_user_id", "f_service", "f_config_hash"]
    assert len(at.sidebar.date_input) == 1
    # a window holding no data says so instead of 0
    at.sidebar.date_input(key="f_dates").set_value((date(2020, 1, 1), date(2020, 1, 2))).run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Citation hit rate"] == "no data"


def test_traces_list_detail_and_memory_life(demo_ws):
    at = run("traces")
    assert any("retrievals match" in c.value for c in at.caption)
    labels = {m.label for m in at.metric}
    assert {"Latency", "Hits", "Cited"} <= labels
    assert {m.label: m.value for m in at.metric}["Hits"] not in ("0", 0)  # opens on a retrieval that found something
    assert at.selectbox(key="tr_mem").options
    if at.button(key="tr_next").disabled:  # one page only: the pager says so
        assert any("page 1 of 1" in c.value for c in at.caption)
    else:
        at.button(key="tr_next").click().run()
        assert not at.exception and any("page 2 of" in c.value for c in at.caption)


def test_review_verdict_lands_in_the_warehouse(demo_ws, wh):
    at = run("review")
    at.sidebar.text_input(key="reviewer_input").set_value("alice").run()
    assert {b.key for b in at.button} >= {"v_correct", "v_incorrect", "v_unsure", "v_next"}
    before = wh.fetchone("SELECT count(*) FROM verdicts WHERE reviewer = 'alice'")[0]
    at.text_input(key="note_0").set_value("matches the order").run()
    at.button(key="v_incorrect").click().run()
    assert not at.exception
    rows = wh.fetchall("SELECT verdict, note FROM verdicts WHERE reviewer = 'alice'")
    assert len(rows) == before + 1 and ("incorrect", "matches the order") in rows
    assert "alice" in at.dataframe[0].value["reviewer"].tolist()


def test_golden_eval_page_runs_and_compares(demo_ws, tmp_path):
    suites = Path(__file__).resolve().parents[1] / "fixtures" / "suites"
    at = run("eval")
    at.sidebar.text_input(key="ge_dir").set_value(str(suites)).run()
    at.multiselect(key="ge_suites").set_value(["tiny_recall.yaml"]).run()
    at.button(key="ge_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("stored" in s.value for s in at.success)
    at.button(key="ge_run").click().run()  # a second run to compare
    at.selectbox(key="ge_b").select(at.selectbox(key="ge_b").options[2]).run()
    assert not at.exception
    assert any("against" in h.value for h in at.subheader)


def test_sweep_runs_from_the_page_and_offers_the_best_toml(demo_ws, wh):
    at = run("sweeps")
    at.multiselect(key="sw_suites").set_value(["seed_golden.yaml"])
    at.text_area(key="sw_params").set_value("retrieval.floor=0.4,0.5")
    at.button(key="sw_go").click().run()
    assert not at.exception and any("2 trials run" in x.value for x in at.success)
    assert at.get("download_button")[0].key == "sw_dl" and at.get("plotly_chart")
    assert wh.fetchone("SELECT count(*) FROM sweep_trials")[0] >= 2
    assert at.selectbox(key="sw_pick").options


def test_health_ingest_pages_render(demo_ws):
    h = run("health")
    assert h.metric[0].label == "Composite health" and NUMBER.search(h.metric[0].value)
    i = run("ingest")
    assert any(m.label == "received" for m in i.metric)
    assert any("/v1/traces" in c.value for c in i.code)


def test_explorer_erase_removes_the_users_memories(demo_ws):
    at = run("explorer")
    owners = [o for o in at.sidebar.selectbox(key="ex_owner").options if o.startswith("shop /")]
    assert owners
    at.sidebar.selectbox(key="ex_owner").select(owners[0]).run()
    tenant, user = owners[0].split(" / ")
    assert any(re.search(r": [1-9]\d* memories", s.value) for s in at.subheader)
    at.text_input(key="ex_erase_confirm").set_value("wrong").run()
    at.button(key="ex_erase").click().run()
    assert any("does not match" in w.value for w in at.warning)
    at.text_input(key="ex_erase_confirm").set_value(user).run()
    at.button(key="ex_erase").click().run()
    assert not at.exception
    assert any(f"Erased {user}" in s.value for s in at.success)
    from memory_engine.observability.explore import known_owners
    from memory_engine.observability.warehouse import Warehouse

    wh = Warehouse.open(demo_ws)
    assert (tenant, user) not in known_owners(wh)
    at.sidebar.text_input(key="ex_tenant").set_value(tenant)
    at.sidebar.text_input(key="ex_user").set_value(user).run()
    assert any(": 0 memories" in s.value for s in at.subheader)
