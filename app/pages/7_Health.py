"""Health: the composite score (0..100) and each component (freshness, coverage, consistency, penalties),
alerts and the records that cause them; plus ingestion health of the warehouse."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

from memory_engine import viz  # noqa: E402
from memory_engine.observability import metrics as m  # noqa: E402

ui.setup("Health")
st.title("Health")
s = ui.provenance()
wh = ui.warehouse()
cur, prev, choice = ui.sidebar_filters(s, default_days=14)
now = ui.now_utc().replace(minute=0, second=0, microsecond=0)

rep, facts = ui.health(s, now, tenant=choice.get("tenant_id"), user=choice.get("user_id"))
scope = " · ".join(f"{k} {choice[c]}" for c, k in (("tenant_id", "tenant"), ("user_id", "user")) if choice.get(c))
st.caption(f"Store snapshot{' of ' + scope if scope else ''}: {rep.extra.get('memories', 0)} memories, "
           f"{rep.extra.get('facts', 0)} facts, {rep.extra.get('users', 0)} users (owners seen in the warehouse).")
c0, c1 = st.columns([1, 3])
ui.tile(c0, viz.kpi_tile("Composite health", viz.Score(rep.composite, rep.extra.get("memories", 0))))
comps = viz.health_components_frame(rep)
c1.plotly_chart(viz.components_figure(comps.rename(columns={"score": "value"})), width="stretch",
                key="h_components")  # fmt: skip
st.dataframe(comps, hide_index=True, width="stretch")
st.caption("score: 0..1, higher is better; the composite is 100 × the weighted mean of the scores of the "
           "components with data, minus penalties. share: what the alert rule looks at (see 'measures').")
if rep.penalties:
    st.dataframe(viz.records_frame(rep.penalties, ["name", "points", "count", "detail"]), hide_index=True,
                 width="stretch")
st.subheader("Alerts")
if not rep.alerts:
    st.success("No alert.")
for a in rep.alerts:
    st.warning(a)
st.markdown("**Records behind the freshness component** (facts older than the freshness window are stale)")
ages = viz.fact_ages_frame(facts, now=now.timestamp(), days=ui.health_config().freshness_days)
st.dataframe(ages, hide_index=True, width="stretch")

st.subheader("Service signals")
deg = ui.cached(s, "health.degraded", cur, lambda: m.degraded_share(wh, cur))
deg_prev = ui.cached(s, "health.degraded", prev, lambda: m.degraded_share(wh, prev))
p99 = ui.cached(s, "health.p99", cur, lambda: m.retrieval_latency(wh, cur, percentile=99))
cols = st.columns(3)
ui.tile(cols[0], viz.kpi_tile("Degraded retrievals", deg, deg_prev, higher_is_better=False))
ui.tile(cols[1], viz.kpi_tile("Retrieval p99", p99, higher_is_better=False))
ih = ui.cached(s, "health.ingest", (), wh.ingestion_health)
cols[2].metric("Rejected / orphaned spans", f"{ih.rejected:,} / {ih.orphaned_parents:,}", border=True)
series = ui.cached(s, "health.degraded_series", cur,
                   lambda: m.metric_timeseries(wh, m.Metric.DEGRADED_SHARE, m.Bucket.DAY, cur))
st.plotly_chart(viz.timeseries_figure(viz.series_frame(series), title="Degraded share by day"), width="stretch",
                key="h_degraded")
