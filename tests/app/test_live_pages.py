"""Overview's default window and the Trace view, on a workspace mixing memwb's spans with another agent's."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from streamlit.testing.v1 import AppTest

from memory_engine.observability.exporter import DuckDBSpanExporter
from memory_engine.observability.records import SpanRecord
from memory_engine.observability.synthetic import emit_workload
from memory_engine.observability.warehouse import Warehouse

pytestmark = [pytest.mark.app, pytest.mark.integration]

APP = Path(__file__).resolve().parents[2] / "app"
DAY = 86_400 * 10**9
MEMWB_START = int(datetime(2026, 9, 1, tzinfo=UTC).timestamp()) * 10**9
FOREIGN_AT = int(datetime(2026, 11, 20, tzinfo=UTC).timestamp()) * 10**9  # 80 days after memwb's data
FOREIGN_TRACE = "f0" * 16


@pytest.fixture(scope="module")
def mixed_ws(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("mixed")
    wh = Warehouse.open(ws)
    tp = TracerProvider(resource=Resource.create({"service.name": "memwb"}))
    tp.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(wh)))
    emit_workload(tp.get_tracer("memwb"), start_ns=MEMWB_START, days=5, users=2, seed=3)
    tp.shutdown()
    # two spans of another agent, much newer than every memwb span, feeding no metric
    wh.insert_spans([
        SpanRecord(FOREIGN_TRACE, "a1" * 8, None, "GET /search", FOREIGN_AT, FOREIGN_AT + 40 * 10**6,
                   kind="SERVER", service="shop-api", attributes={"http.route": "/search", "q": "blue kettle"}),
        SpanRecord(FOREIGN_TRACE, "a2" * 8, "a1" * 8, "SELECT products", FOREIGN_AT + 5 * 10**6,
                   FOREIGN_AT + 30 * 10**6, kind="CLIENT", service="shop-db", status_code="ERROR",
                   status_message="timeout", events=({"name": "retry", "time_ns": FOREIGN_AT + 10**7,
                                                      "attributes": {"n": 1}},)),
    ], source="http")  # fmt: skip
    return ws


def _run(page: str, ws: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("MEMWB_HOME", str(ws))
    at = AppTest.from_file(str(APP / page), default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_overview_default_window_ends_at_the_metrics_data(mixed_ws, monkeypatch):
    """Before: the window ended at the newest span of any source (the foreign one), so every tile said
    'no data' while the warehouse held 5 days of memwb metrics."""
    at = _run("pages/1_Overview.py", mixed_ws, monkeypatch)
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Citation hit rate"] != "no data" and tiles["Retrieval p95"] != "no data", tiles
    d0, d1 = at.sidebar.date_input(key="f_dates").value
    assert d1 == datetime(2026, 9, 5, tzinfo=UTC).date()
    # the service filter offers memwb's service; choosing it keeps the numbers
    assert "memwb" in at.sidebar.selectbox(key="f_service").options
    at.sidebar.selectbox(key="f_service").set_value("memwb").run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Citation hit rate"] != "no data"


def test_trace_view_shows_another_agents_trace(mixed_ws, monkeypatch):
    at = _run("pages/9_Trace_view.py", mixed_ws, monkeypatch)
    assert any("traces match" in c.value for c in at.caption)
    # search by span id of the child: the trace opens on that span
    at.text_input(key="tv_search").set_value("a2" * 8).run()
    assert not at.exception
    assert any(f"Trace {FOREIGN_TRACE}" in h.value for h in at.subheader)
    assert any("SELECT products" in m.value and "timeout" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 1
    # by service and by text
    for q in ("shop-api", "kettle"):
        at.text_input(key="tv_search").set_value(q).run()
        assert any(f"Trace {FOREIGN_TRACE}" in h.value for h in at.subheader), q
    at.text_input(key="tv_search").set_value("no-such-thing-anywhere").run()
    assert any("No trace matches" in i.value for i in at.info)


def test_traces_search_of_a_foreign_trace_id_points_to_the_trace_view(mixed_ws, monkeypatch):
    """Before: searching another agent's trace id in Traces found nothing and said nothing more."""
    at = _run("pages/2_Traces.py", mixed_ws, monkeypatch)
    at.text_input(key="tr_search").set_value(FOREIGN_TRACE).run()
    assert not at.exception
    assert any("traces of any kind match" in c.value for c in at.caption)
