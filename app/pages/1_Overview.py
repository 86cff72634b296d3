"""Overview: KPI tiles (value, numerator/denominator, change against the previous period) and time series."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

from memory_engine import viz  # noqa: E402
from memory_engine.observability import metrics as m  # noqa: E402

ui.setup("Overview")
st.title("Overview")
s = ui.provenance()
wh = ui.warehouse()
cur, prev, choice = ui.sidebar_filters(s, default_days=14)
now = ui.now_utc().replace(minute=0, second=0, microsecond=0)  # hour granularity keeps the cache warm



def headline(f: m.Filters) -> dict[str, m.MetricValue]:
    out = {
        "hit": m.citation_hit_rate(wh, f),
        "acc": m.citation_accuracy(wh, f),
        "eff": m.write_efficacy(wh, f, now=now),
        "p95": m.retrieval_latency(wh, f, percentile=95),
    }
    return out


now_vals = ui.cached(s, "overview.headline", (cur, now), lambda: headline(cur))
prev_vals = ui.cached(s, "overview.headline", (prev, now), lambda: headline(prev))
rep, _facts = ui.health(s, now, tenant=choice.get("tenant_id"), user=choice.get("user_id"))

cols = st.columns(5)
tiles = [
    viz.kpi_tile("Citation hit rate", now_vals["hit"], prev_vals["hit"],
                 help="sum |cited ∩ retrieved| / sum |retrieved| over retrievals with an answer"),
    viz.kpi_tile("Citation accuracy", now_vals["acc"], prev_vals["acc"],
                 help="correct / (correct + incorrect) reviewer verdicts, Wilson 95% interval"),
    viz.kpi_tile("Write efficacy (7 d)", now_vals["eff"], prev_vals["eff"],
                 help="stored memories retrieved within 7 days of their write (mature writes only)"),
    viz.kpi_tile("Retrieval p95", now_vals["p95"], prev_vals["p95"], higher_is_better=False,
                 help="95th percentile of memory.retrieve span duration"),
    viz.kpi_tile("Health score", viz.Score(rep.composite, rep.extra.get("memories", 0)),
                 help="composite of freshness, coverage, consistency minus penalties (0..100), store snapshot now"),
]
for col, t in zip(cols, tiles, strict=True):
    ui.tile(col, t)
eff = now_vals["eff"]
if eff.extra.get("not_yet_mature"):
    st.caption(f"Write efficacy: {eff.extra['not_yet_mature']} writes in the window are younger than 7 days "
               "(not yet mature) and are not counted.")

st.subheader("Time series (by day, UTC)")
series = {
    "Citation hit rate": (m.Metric.CITATION_HIT_RATE, "ratio"),
    "Citation accuracy": (m.Metric.CITATION_ACCURACY, "ratio"),
    "Write efficacy (7 d), by write day": (m.Metric.WRITE_EFFICACY, "ratio"),
    "Retrieval latency p95": (m.Metric.LATENCY_P95, "ms"),
}
c1, c2 = st.columns(2)
for i, (title, (metric, unit)) in enumerate(series.items()):
    vals = ui.cached(s, "overview.series", (metric, cur, now),
                     lambda metric=metric: m.metric_timeseries(wh, metric, m.Bucket.DAY, cur, now=now))
    fig = viz.timeseries_figure(viz.series_frame(vals), title=title, unit=unit)
    (c1 if i % 2 == 0 else c2).plotly_chart(fig, width="stretch", key=f"ts_{metric.value}")
