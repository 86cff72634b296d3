"""Trace search and the span tree (memory_engine.observability.traceview) on a real DuckDB file."""

from __future__ import annotations

from dataclasses import asdict

import pandas as pd

from memory_engine import viz
from memory_engine.observability import traceview as tv
from memory_engine.observability.records import SpanRecord

T = "ab" * 16
U = "cd" * 16


def _seed(wh):
    wh.insert_spans([
        SpanRecord(T, "01" * 8, None, "agent run", 1_000_000, 11_000_000, service="agent", attributes={"x": "hello"}),
        SpanRecord(T, "03" * 8, "01" * 8, "llm", 6_000_000, 9_000_000, service="agent"),
        SpanRecord(T, "02" * 8, "01" * 8, "retriever", 2_000_000, 5_000_000, service="vec", status_code="ERROR",
                   status_message="slow", events=({"name": "e", "time_ns": 3_000_000, "attributes": {"k": 1}},)),
        SpanRecord(T, "04" * 8, "02" * 8, "http", 2_500_000, 4_000_000, service="vec"),
        SpanRecord(T, "05" * 8, "ee" * 8, "late orphan", 7_000_000, 8_000_000, service="agent"),
        SpanRecord(U, "06" * 8, None, "memory.retrieve", 50_000_000, 51_000_000, service="memwb"),
    ])  # fmt: skip


def test_search_by_id_service_and_text(wh):
    _seed(wh)
    assert [t.trace_id for t in tv.search_traces(wh)] == [U, T]  # newest first
    for q in (T, T[:8], T.upper(), "02" * 8, "VEC", "hello", "slow", "RETRIEVER"):
        assert [t.trace_id for t in tv.search_traces(wh, q)] == [T], q
    assert [t.trace_id for t in tv.search_traces(wh, None, service="memwb")] == [U]
    assert tv.search_traces(wh, "nothing like this") == []
    s = tv.search_traces(wh, T)[0]
    assert (s.root_name, s.services, s.spans, s.errors, s.duration_ms) == ("agent run", ("agent", "vec"), 5, 1, 10.0)
    assert tv.services(wh)[0] == "agent"


def test_tree_order_depth_offsets_and_orphans(wh):
    _seed(wh)
    tree = tv.trace_tree(wh, T)
    assert [(x.name, x.depth, x.orphan) for x in tree] == [
        ("agent run", 0, False), ("retriever", 1, False), ("http", 2, False), ("llm", 1, False),
        ("late orphan", 0, True),
    ]  # fmt: skip
    assert [x.offset_ms for x in tree] == [0.0, 1.0, 1.5, 5.0, 6.0]
    r = tree[1]
    assert r.events[0]["attributes"] == {"k": 1} and r.status_message == "slow"
    assert tree[0].attributes == {"x": "hello"}
    assert tv.trace_tree(wh, "00" * 16) == []
    fig = viz.waterfall_figure(pd.DataFrame([asdict(x) for x in tree]))
    bars = {trace.name: list(trace.base) for trace in fig.data}
    assert bars == {"agent": [0.0, 5.0, 6.0], "vec": [1.0, 1.5]}
