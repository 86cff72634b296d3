"""Defects a fresh user found (issue 13, item 7): each fails on the code before the fix."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from memory_engine import viz
from memory_engine.cli import load_commands

APP = Path(__file__).resolve().parents[2] / "app"


def test_ingest_of_a_missing_file_is_a_usage_error_exit_2(tmp_path):
    """Before: counted as 'malformed', exit 1."""
    r = CliRunner().invoke(load_commands(), ["ingest", "-w", str(tmp_path / "ws"), "--no-progress",
                                             str(tmp_path / "nope.json")])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "nope.json" in r.output


def test_ingest_banner_is_not_green_when_every_file_failed():
    """Before: 'Ingest finished.' in green after every file failed."""
    failed = [{"file": "a.json", "error": "cannot read"},
              {"file": "b.json", "ingested": 0, "duplicate": 0, "rejected": 0, "malformed": 3}]  # fmt: skip
    level, msg = viz.ingest_outcome(failed)
    assert level == "error" and "all 2 files failed" in msg
    level, msg = viz.ingest_outcome([*failed, {"file": "c.json", "ingested": 5, "duplicate": 0, "rejected": 0,
                                               "malformed": 0}])  # fmt: skip
    assert level == "warning" and "2 of 3 files" in msg
    assert viz.ingest_outcome([{"file": "c.json", "ingested": 5, "duplicate": 1, "rejected": 0, "malformed": 0}])[0] \
        == "success"  # fmt: skip
    assert viz.ingest_outcome([{"file": "c.json", "ingested": 0, "duplicate": 4, "rejected": 0, "malformed": 0}])[0] \
        == "success"  # re-ingesting adds nothing and is not a failure  # fmt: skip


def test_ingest_banner_says_why_a_reupload_stored_nothing():
    """Session 13 trial: re-uploading a file with two valid spans and two malformed lines said 'Ingested 0
    spans; 1 of 1 files had problems', as if the valid spans had been lost."""
    level, msg = viz.ingest_outcome([{"file": "a.jsonl", "ingested": 0, "duplicate": 2, "rejected": 0, "malformed": 2}])
    assert level == "warning" and "0 new spans (2 already stored)" in msg and "1 of 1 files" in msg
    assert viz.ingest_outcome([{"file": "c.json", "ingested": 0, "duplicate": 4, "rejected": 0, "malformed": 0}])[1] \
        == "Ingest finished: 0 new spans (4 already stored) from 1 files."  # fmt: skip


@pytest.mark.app
@pytest.mark.integration
def test_review_page_uses_no_deprecated_component_api(demo_ws, caplog):
    """Before: every run of the review page logged 'Please replace st.components.v1.html with st.iframe'
    (12 times in a session) from the shortcuts helper package."""
    caplog.set_level(logging.WARNING)
    logging.getLogger("streamlit").propagate = True
    try:
        at = AppTest.from_file(str(APP / "pages" / "3_Citation_review.py"), default_timeout=180)
        at.session_state["reviewer"] = "ana"
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        at.sidebar.text_input(key="reviewer_input").set_value("ana").run()
        assert not at.exception
    finally:
        logging.getLogger("streamlit").propagate = False
    assert any("Keyboard: 1 = correct" in c.value for c in at.caption)
    assert "components.v1.html" not in caplog.text


def test_fact_history_times_are_dates_not_epoch_seconds():
    """Before: the Memory explorer's fact history showed created_at as 1764590400.0."""
    from types import SimpleNamespace

    hist = [SimpleNamespace(id="m1", fact_value="SF", status="superseded", created_at=1764590400.0, superseded_by="m2"),
            SimpleNamespace(id="m2", fact_value="JD", status="current", created_at=1764676800.5, superseded_by=None)]  # fmt: skip
    df = viz.records_frame(hist, ["id", "fact_value", "status", "created_at", "superseded_by"])
    assert str(df["created_at"].iloc[0]) == "2025-12-01 12:00:00+00:00"
    assert str(df["created_at"].iloc[1]) == "2025-12-02 12:00:00+00:00"
    assert viz.records_frame([], ["id", "created_at"]).empty


def test_run_labels_show_changed_parameters_not_hashes():
    """Before: run selectors read 'cfg 3f9a1c2b7d10', which says nothing about the run."""
    from memory_engine.config import EngineConfig

    base = EngineConfig.defaults()
    assert viz.config_label(base.to_dict(), "abc") == "defaults"
    tuned = base.with_overrides({"retrieval.floor": 0.41, "retrieval.top_k": 7, "workspace": "/elsewhere"})
    assert viz.config_label(tuned.to_dict(), tuned.config_hash()) == "retrieval.floor=0.41, retrieval.top_k=7"
    assert viz.config_label(None, "abc123") == "cfg abc123"
    many = base.with_overrides({k: v for k, v in (("retrieval.floor", 0.1), ("retrieval.top_k", 3),
                                                  ("retrieval.rrf_k", 10), ("retrieval.tau_days", 2.0),
                                                  ("write.threshold", 0.2))})  # fmt: skip
    assert viz.config_label(many.to_dict()).endswith(", +1 more")


def test_health_components_say_what_counts_in_the_composite():
    """Before: coverage 'no data (0/0)' sat in the table like a 0 and 'value'/'share' were unexplained."""
    from memory_engine.observability.health import health_report

    facts = [{"key": "city", "value": "Lyon", "updated_at": 0.0, "user_id": "u1"}]
    memories = [{"user_id": "u1", "tenant_id": "t", "memory_type": "semantic", "status": "current",
                 "content": "lives in Lyon", "embedding_version": "e", "fact_key": "city"}]  # fmt: skip
    rep = health_report(memories, facts, now=30 * 86_400.0)  # no key attributes: coverage has no data
    df = viz.health_components_frame(rep).set_index("component")
    assert df.loc["coverage", "in composite"] == "no: no data"
    assert df.loc["coverage", "counts"] == "no data (0/0)"
    assert df.loc["freshness", "in composite"] == "yes" and df.loc["freshness", "counts"] == "1/1"
    assert "stale" in df.loc["freshness", "measures"] and "conflict" in df.loc["consistency", "measures"]
    # the composite averages exactly the components marked 'yes'
    used = df[df["in composite"] == "yes"]["score"]
    assert rep.composite == 100 * used.mean()


@pytest.mark.app
@pytest.mark.integration
def test_health_composite_follows_the_tenant_filter(demo_ws):
    """Before: the composite and the store snapshot stayed the same whatever tenant the sidebar chose."""
    at = AppTest.from_file(str(APP / "pages" / "7_Health.py"), default_timeout=180).run()
    assert not at.exception
    tenants = at.sidebar.selectbox(key="f_tenant_id").options[1:]
    if len(tenants) < 2:
        pytest.skip("the demo workspace has one tenant")

    def snapshot(a: AppTest) -> str:
        return next(c.value for c in a.caption if c.value.startswith("Store snapshot"))

    everyone = snapshot(at)
    at.sidebar.selectbox(key="f_tenant_id").set_value(tenants[0]).run()
    assert not at.exception
    one = snapshot(at)
    assert f"tenant {tenants[0]}" in one and one != everyone


@pytest.mark.app
@pytest.mark.integration
def test_explorer_shows_a_long_chinese_memory_whole(tmp_path, monkeypatch):
    """Session 13 trial: the explorer's grid cut a long Chinese memory at the column's edge (the address's room
    number was out of view, with no way to read it); the selected (else first) row is now shown whole."""
    import json

    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    text = "我上个月搬到了杭州西湖区文三路，新地址是文三路478号华星时代广场B座1203室，快递请都寄到这里，周末不在家的话放丰巢快递柜就行"
    r = CliRunner().invoke(load_commands(), ["add", text, "--user", "trial-zh"])
    assert r.exit_code == 0, r.output
    mid = json.loads(r.output.strip().splitlines()[-1])["memory_id"]
    at = AppTest.from_file(str(APP / "pages" / "6_Memory_explorer.py"), default_timeout=180).run()
    at.sidebar.text_input(key="ex_tenant").set_value("default")
    at.sidebar.text_input(key="ex_user").set_value("trial-zh").run()
    assert not at.exception, [e.value for e in at.exception]
    assert text in [t.value for t in at.text]
    assert any(mid in c.value for c in at.caption)
