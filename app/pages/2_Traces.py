"""Traces: search and filter retrievals (paginated in SQL); one retrieval in detail (query, ranked hits with
score, routes and whether cited, the answer with citations highlighted, the user's writes around it, latency);
any memory opens its whole life (write, retrievals, citations, verdicts, supersession)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

from memory_engine import viz  # noqa: E402
from memory_engine.observability import traceview as tv  # noqa: E402

ui.setup("Traces")
st.title("Traces")
s = ui.provenance()
wh = ui.warehouse()
cur, _prev, _choice = ui.sidebar_filters(s, default_days=30)

PAGE = 50
search = st.text_input("Search the query text (or paste a span / trace id)", key="tr_search")
if st.session_state.get("tr_last_search") != (search, cur):  # a new search starts on the first page
    st.session_state["tr_last_search"] = (search, cur)
    st.session_state["tr_page"] = 0
page_no = st.session_state.get("tr_page", 0)
page = ui.cached(s, "traces.list", (cur, search, page_no),
                 lambda: ui.q.list_retrievals(wh, cur, search=search, limit=PAGE, offset=page_no * PAGE))
n_pages = max(1, -(-page.total // PAGE))
if page_no >= n_pages:
    page_no = st.session_state["tr_page"] = 0
st.caption(f"{page.total:,} retrievals match · page {page_no + 1} of {n_pages}")
p1, p2, _ = st.columns([1, 1, 6])
if p1.button("◀ Newer", key="tr_prev", disabled=page_no == 0):
    st.session_state["tr_page"] = page_no - 1
    st.rerun()
if p2.button("Older ▶", key="tr_next", disabled=page_no + 1 >= n_pages):
    st.session_state["tr_page"] = page_no + 1
    st.rerun()

if not page.rows:
    st.info("No retrieval in this window (no data).")
    if search:  # an id or text of a span that is not a retrieval (another agent's HTTP span, say)
        others = ui.cached(s, "traces.any", search, lambda: tv.search_traces(wh, search, limit=50))
        if others:
            st.caption(f"{len(others)} traces of any kind match {search!r}:")
            ui.trace_link(search, "Open them in the Trace view")
    st.stop()
table = pd.DataFrame(page.records()).rename(columns={"at": "started_at", "cited_count": "cited"})
# the short columns first, so that a long query text does not push them out of view
event = st.dataframe(table[["started_at", "user_id", "retrieved_count", "cited", "latency_ms", "degraded", "query",
                            "span_id"]], hide_index=True, width="stretch", on_select="rerun",
                     selection_mode="single-row", key="tr_table")  # fmt: skip
sel = event.selection.rows if event is not None and hasattr(event, "selection") else []
first = viz.first_with_hits(table["retrieved_count"].tolist())  # open on the newest retrieval that found something
default_span = table.iloc[sel[0]]["span_id"] if sel else table.iloc[first]["span_id"]
if not sel:
    st.caption("Showing the newest retrieval with hits on this page; select a row to open another.")
span_id = st.text_input("Retrieval span id", value=default_span, key=f"tr_span_{default_span}").strip()

detail = ui.cached(s, "traces.detail", span_id, lambda: ui.q.retrieval_detail(wh, span_id))
if detail is None:
    st.warning(f"No retrieval with span id {span_id!r}.")
    st.stop()
r = detail.retrieval
st.subheader("Retrieval")
c = st.columns(4)
c[0].metric("Latency", f"{r['latency_ms']:.1f} ms")
c[1].metric("Hits", r.get("retrieved_count") or 0)
c[2].metric("Cited", sum(1 for h in detail.hits if h.cited))
c[3].metric("Degraded", "yes" if r.get("degraded") else "no")
st.markdown(f"**Query** ({r.get('user_id')} / {r.get('tenant_id')}, {r['started_at']:%Y-%m-%d %H:%M:%S} UTC, "
            f"top_k {r.get('top_k')}, fusion {r.get('fusion')}, config `{r.get('config_hash')}`)")
st.write(r.get("query") or "(not recorded)")
ui.trace_link(r["trace_id"], f"Whole trace {r['trace_id']} (span tree, timeline)")
if r.get("rewritten_query"):
    st.caption(f"rewritten: {r['rewritten_query']}")
hits = pd.DataFrame(detail.hit_records(), columns=["rank", "memory_id", "score", "routes", "content", "cited"])
st.plotly_chart(viz.hits_figure(hits), width="stretch", key="tr_hits")
st.dataframe(hits, hide_index=True, width="stretch")

st.markdown("**Answer**")
if not detail.answers:
    st.caption("No answer linked to this retrieval.")
for a in detail.answers:
    st.markdown(viz.highlight_citations(a.get("answer_text") or "", list(r.get("retrieved_ids") or [])),
                unsafe_allow_html=True)

st.markdown("**The user's writes around it**")
if detail.writes and not detail.writes_in_window:
    st.caption(f"No writes of this user in the week before or the day after; the latest {len(detail.writes)} "
               "before the retrieval:")
if detail.writes:
    # the write's reason is not only a rejection reason (e.g. "supersedes", "promoted_candidate")
    writes = pd.DataFrame(detail.writes).rename(columns={"reject_reason": "reason", "at": "written_at"})
    st.dataframe(writes[["written_at", "after_retrieval", "outcome", "reason", "memory_id", "superseded_ids",
                         "memory_type", "content"]], hide_index=True, width="stretch")  # fmt: skip
else:
    st.caption("No writes of this user in the week before or the day after.")

st.subheader("A memory's life")
choices = [h.memory_id for h in detail.hits] + [w["memory_id"] for w in detail.writes if w.get("memory_id")]
mem = st.selectbox("Memory", list(dict.fromkeys(choices)), key="tr_mem") if choices else None
if mem:
    life = ui.cached(s, "traces.life", mem, lambda: ui.q.memory_timeline(wh, mem).records())
    if life:
        st.dataframe(pd.DataFrame(life)[["at", "event", "what", "detail", "text", "span_id"]], hide_index=True,
                     width="stretch")
    else:
        st.caption("No trace of this memory in the warehouse.")
