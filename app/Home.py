"""memwb workbench: landing page (workspace, data provenance, where to go next)."""

from __future__ import annotations

import streamlit as st
import workbench_ui as ui

ui.setup("Home")
st.title("memwb workbench")
s = ui.provenance()
wh = ui.warehouse()
c1, c2, c3 = st.columns(3)
c1.metric("Spans in the warehouse", f"{s.spans:,}")
c2.metric("First span (UTC)", s.first.strftime("%Y-%m-%d %H:%M") if s.first else "no data")
c3.metric("Last span (UTC)", s.last.strftime("%Y-%m-%d %H:%M") if s.last else "no data")
st.subheader("Sources")
if s.sources:
    st.table([{"source": src, "meaning": ui.q.describe_source(src), "spans": n} for src, n in s.sources])
else:
    st.write("No spans yet: run the engine, ingest an OTLP file (Ingest page) or point an agent's OTLP exporter at the app (Ingest page shows the URL).")
st.subheader("Pages")
for page, what in (
    ("pages/1_Overview.py", "KPI tiles and time series"),
    ("pages/2_Traces.py", "retrievals, their hits, answers and the memories' lives"),
    ("pages/3_Citation_review.py", "judge cited memories (keyboard: 1 / 2 / 3, n = next)"),
    ("pages/4_Golden_eval.py", "run golden suites, compare runs"),
    ("pages/5_Parameter_sweeps.py", "optuna sweeps over config fields"),
    ("pages/6_Memory_explorer.py", "one user's memories, facts, forget / erase"),
    ("pages/7_Health.py", "health score and its components"),
    ("pages/8_Ingest.py", "upload OTLP files, collector endpoint"),
    ("pages/9_Trace_view.py", "any trace (memwb's or another agent's): span tree, timeline, attributes"),
):
    st.page_link(page, label=f"{page.split('_', 1)[1][:-3].replace('_', ' ')} — {what}")
