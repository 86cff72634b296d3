"""The real engine's spans -> DuckDBSpanExporter -> warehouse: the TRACES.md contract holds end to end."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from memory_engine.observability import explore
from memory_engine.observability.exporter import DuckDBSpanExporter

pytestmark = pytest.mark.integration


def test_engine_spans_land_in_the_derived_tables(wh):
    from memory_engine import MemoryEngine

    eng = MemoryEngine.in_memory(span_processors=[SimpleSpanProcessor(DuckDBSpanExporter(wh))])
    try:
        w = eng.add("I prefer green tea over coffee", user_id="u1")
        res = eng.retrieve("I prefer green tea over coffee", user_id="u1")
        eng.record_answer(res, " ".join(f"[mem-{h.memory_id}]" for h in res.hits[:1]) or "no memory")
    finally:
        eng.close()
    assert wh.fetchone("SELECT count(*) FROM spans WHERE warnings IS NOT NULL")[0] == 0
    wrow = wh.fetch_dicts("SELECT memory_id, outcome, importance, user_id, config_hash FROM writes")[0]
    assert (wrow["memory_id"], wrow["outcome"], wrow["user_id"]) == (w.memory_id, w.outcome, "u1")
    assert wrow["importance"] == pytest.approx(w.importance) and wrow["config_hash"] == eng.config_hash
    rrow = wh.fetch_dicts("SELECT span_id, retrieved_ids, user_id, degraded FROM retrievals")[0]
    assert rrow["span_id"] == res.span_id and rrow["retrieved_ids"] == res.ids and rrow["degraded"] is False
    arow = wh.fetch_dicts("SELECT retrieve_span_id, cited_ids FROM answers")[0]
    assert arow["retrieve_span_id"] == res.span_id
    assert arow["cited_ids"] == res.ids[:1]
    kinds = [e.kind for e in explore.memory_timeline(wh, w.memory_id).events]
    assert kinds[0] == "write" and kinds.count("retrieved") == (1 if w.memory_id in res.ids else 0)
