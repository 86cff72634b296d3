"""Trace view: any trace, memwb's or another agent's. Search by trace id, span id, service or text; the
span tree as a timeline (waterfall), every span's attributes, events and resource."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

from memory_engine import viz  # noqa: E402
from memory_engine.observability import traceview as tv  # noqa: E402

ui.setup("Trace view")
st.title("Trace view")
s = ui.provenance()
wh = ui.warehouse()

c1, c2 = st.columns([3, 1])
query = c1.text_input("Search: trace id, span id, service, or text in span names and attributes",
                      value=st.query_params.get("trace", ""), key="tv_search").strip()  # fmt: skip
svc_opts = ui.cached(s, "tv.services", (), lambda: tv.services(wh))
svc = c2.selectbox("Service", ["(all)", *svc_opts], key="tv_service")
service = None if svc == "(all)" else svc
found = ui.cached(s, "tv.search", (query, service), lambda: tv.search_traces(wh, query or None, service=service))
st.caption(f"{len(found)} traces match (newest first, at most 50)")
if not found:
    st.info("No trace matches." if query or service else "No spans in the warehouse yet (no data).")
    st.stop()
table = pd.DataFrame([{**asdict(t), "services": ", ".join(t.services)} for t in found])
event = st.dataframe(table[["started_at", "root_name", "services", "spans", "errors", "duration_ms", "trace_id"]],
                     hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                     key="tv_table")  # fmt: skip
sel = event.selection.rows if event is not None and hasattr(event, "selection") else []
trace_id = table.iloc[sel[0] if sel else 0]["trace_id"]

spans = ui.cached(s, "tv.tree", trace_id, lambda: tv.trace_tree(wh, trace_id))
st.subheader(f"Trace {trace_id}")
frame = pd.DataFrame([asdict(x) for x in spans])
st.plotly_chart(viz.waterfall_figure(frame, title=f"{len(spans)} spans"), width="stretch", key="tv_waterfall")
frame["span"] = ["  " * d + n for d, n in zip(frame["depth"], frame["name"], strict=True)]
picked = st.dataframe(frame[["span", "service", "kind", "status_code", "offset_ms", "duration_ms", "span_id",
                             "orphan"]], hide_index=True, width="stretch", on_select="rerun",
                      selection_mode="single-row", key="tv_spans")  # fmt: skip
rows = picked.selection.rows if picked is not None and hasattr(picked, "selection") else []
matching = [i for i, x in enumerate(spans) if x.span_id == query.lower()]
span = spans[rows[0] if rows else (matching[0] if matching else 0)]
st.markdown(f"**{span.name}** · span `{span.span_id}` · parent `{span.parent_span_id}` · {span.service} · "
            f"{span.duration_ms:.2f} ms · status {span.status_code}"
            + (f" ({span.status_message})" if span.status_message else ""))  # fmt: skip
if span.orphan:
    st.caption("Its parent span was never received: shown as a root.")
a, e, r = st.tabs(["Attributes", "Events", "Resource"])
a.json(dict(span.attributes), expanded=True)
if span.events:
    e.dataframe(pd.DataFrame([{"name": ev.get("name"), "offset_ms": (int(ev.get("time_ns") or 0) - span.start_ns) / 1e6,
                               "attributes": ev.get("attributes")} for ev in span.events]),
                hide_index=True, width="stretch")  # fmt: skip
else:
    e.caption("No events on this span.")
r.json(dict(span.resource), expanded=False)
