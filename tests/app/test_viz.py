"""Pure figure builders and display shaping (no Streamlit)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd
import pytest

from memory_engine import viz
from memory_engine.engine import parse_citations
from memory_engine.errors import ValidationError
from memory_engine.observability.metrics import MetricValue

pytestmark = pytest.mark.unit


def test_kpi_tile_ratio_with_delta_and_interval():
    cur = MetricValue("citation_accuracy", 0.75, 30, 40, low=0.6, high=0.86)
    prev = MetricValue("citation_accuracy", 0.5, 10, 20)
    t = viz.kpi_tile("Acc", cur, prev)
    assert (t.value, t.delta, t.delta_color) == ("0.75", "+0.25", "normal")
    assert t.detail == "30/40, 95% CI 0.60–0.86"


def test_kpi_tile_latency_lower_is_better_and_empty_window():
    t = viz.kpi_tile("p95", MetricValue("p95", 41.25, None, 50, unit="ms"), MetricValue("p95", 50.0, None, 9, unit="ms"),
                     higher_is_better=False)
    assert (t.value, t.detail, t.delta, t.delta_color) == ("41.2 ms", "n=50", "-8.8 ms vs n=9", "inverse")
    empty = viz.kpi_tile("hit", MetricValue("hit", None, 0, 0), MetricValue("hit", 0.4, 2, 5))
    assert empty.value == viz.NO_DATA and empty.delta is None and empty.detail == "0/0"


def test_series_frame_and_timeseries_figure():
    vals = [MetricValue("h", 0.5, 1, 2, bucket=datetime(2026, 1, 1)), MetricValue("h", 1.0, 3, 3, bucket=datetime(2026, 1, 2))]
    df = viz.series_frame(vals)
    assert list(df.columns) == ["bucket", "value", "numerator", "denominator", "low", "high"]
    assert df["bucket"].dt.tz is not None and df["value"].tolist() == [0.5, 1.0]
    fig = viz.timeseries_figure(df, title="hit rate")
    assert list(fig.data[-1].y) == [0.5, 1.0]
    assert [list(c) for c in fig.data[-1].customdata] == [[1.0, 2], [3.0, 3]]
    empty = viz.timeseries_figure(viz.series_frame([]), title="x")
    assert not empty.data and empty.layout.annotations[0].text == viz.NO_DATA


def test_highlight_citations_escapes_and_marks():
    a = "Blue <b> [mem-0123456789abcdef] and [mem-fedcba9876543210]"
    out = viz.highlight_citations(a, ["0123456789abcdef"])
    assert "&lt;b&gt;" in out
    assert '<mark class="cited">[mem-0123456789abcdef]</mark>' in out
    assert '<mark class="cited-unknown">[mem-fedcba9876543210]</mark>' in out


def test_first_with_hits_skips_empty_retrievals():
    assert viz.first_with_hits([0, None, float("nan"), 3, 5]) == 3
    assert viz.first_with_hits([0, 0]) == 0 and viz.first_with_hits([]) == 0


def test_hits_and_bar_figures_read_their_columns():
    hits = pd.DataFrame({"rank": [2, 1], "memory_id": ["b", "a"], "score": [0.2, 0.9], "cited": [False, True]})
    fig = viz.hits_figure(hits)
    assert list(fig.data[0].x) == [0.9, 0.2] and list(fig.data[0].marker.color) == ["#2ca02c", "#9aa0a6"]
    df = pd.DataFrame({"group": ["en", "zh", "en"], "metric": ["mrr", "mrr", "pass"], "value": [0.5, 0.7, 1.0]})
    g = viz.grouped_bar_figure(df, x="group", y="value", color="metric", title="t")
    assert [t.name for t in g.data] == ["mrr", "pass"]
    long = df.assign(group=df["group"].map({"en": "correction_supersedes", "zh": "tenant_isolation"}))
    g_long = viz.grouped_bar_figure(long, x="group", y="value", color="metric", title="t")
    assert g_long.layout.xaxis.automargin and g_long.layout.height > g.layout.height  # room for the labels
    counts = pd.DataFrame({"memory_type": ["fact", "fact"], "status": ["current", "deprecated"], "count": [2, 1]})
    assert len(viz.stacked_count_figure(counts, x="memory_type", color="status", title="t").data) == 2
    comps = pd.DataFrame({"component": ["freshness"], "value": [0.8]})
    assert list(viz.components_figure(comps).data[0].y) == [0.8]


def _row(case, q, passed=True, **metrics):
    return {"case_id": case, "query_id": q, "metrics": metrics,
            "details": {"category": "c1" if case < "m" else "c2", "lang": "en", "passed": passed, "text": "t",
                        "relevant_ranks": {"L1": None}, "retrieved": [{"rank": 1, "labels": ["L2"], "content": "x",
                                                                       "score": 0.3}],
                        "misses": [{"label": "L1", "kind": "below_floor", "detail": "why"}], "assertions": []}}


def test_eval_groups_frame_means_and_leaves_undefined_out():
    rows = [_row("a", "q1", mrr=1.0, **{"recall@k": None}), _row("b", "q1", mrr=0.5), _row("x", "q1", mrr=0.0)]
    df = viz.eval_groups_frame(rows, "category", metrics=("mrr", "recall@k"))
    assert df.to_dict("records") == [
        {"group": "c1", "metric": "mrr", "value": 0.75, "n": 2},
        {"group": "c2", "metric": "mrr", "value": 0.0, "n": 1},
    ]


def test_eval_groups_frame_pools_the_smallest_groups_into_other():
    rows = []
    for i in range(20):  # category g00 has 20 queries, g01 19, ..., g19 1
        rows += [{"metrics": {"mrr": float(i % 2)}, "details": {"category": f"g{i:02d}"}} for _ in range(20 - i)]
    df = viz.eval_groups_frame(rows, "category", metrics=("mrr",), top=5)
    assert df["group"].tolist() == ["g00", "g01", "g02", "g03", "g04", "other (15 groups)"]
    other = df.iloc[-1]
    pooled = [float(i % 2) for i in range(5, 20) for _ in range(20 - i)]
    assert other["n"] == len(pooled) == 120 and other["value"] == pytest.approx(sum(pooled) / len(pooled))
    assert len(viz.eval_groups_frame(rows, "category", metrics=("mrr",), top=19)) == 20  # one left: no "other"
    assert viz.eval_groups_frame(rows, "category", metrics=("mrr",))["group"].nunique() == 20  # no top: all
    fig = viz.grouped_bar_figure(df, x="group", y="value", color="metric", title="By category")
    assert len(set(fig.data[0].x)) == 6
    with pytest.raises(ValidationError):
        viz.eval_groups_frame(rows, "category", top=0)


def test_compare_runs_frame_pairs_by_query():
    a = [_row("a", "q1", mrr=0.0), _row("a", "q2", mrr=1.0), _row("a", "only_a", mrr=1.0)]
    b = [_row("a", "q1", mrr=1.0), _row("a", "q2", mrr=1.0)]
    df = viz.compare_runs_frame(a, b, metrics=("mrr", "pass"))
    assert df["metric"].tolist() == ["mrr"]
    r = df.iloc[0]
    assert (r["a"], r["b"], r["delta"], r["n"]) == (0.5, 1.0, 0.5, 2)


def test_failed_queries_frame():
    rows = [_row("a", "q1", passed=False), _row("a", "q2")]
    out = viz.failed_queries_frame(rows)
    assert len(out) == 1 and out[0]["key"] == "a/q1" and out[0]["expected"] == {"L1": None}
    assert out[0]["misses"][0]["kind"] == "below_floor" and out[0]["retrieved"][0]["labels"] == "L2"


@dataclass(frozen=True)
class _Rec:
    id: str
    content: str
    status: str = "current"
    superseded_by: str | None = None


def test_supersede_edges_follow_chain_to_head():
    recs = [_Rec("a", "v1", "deprecated", "b"), _Rec("b", "v2", "deprecated", "c"), _Rec("c", "v3")]
    df = viz.supersede_edges(recs)
    assert df[["old_id", "new_id", "head"]].values.tolist() == [["a", "b", "c"], ["b", "c", "c"]]
    assert viz.supersede_edges([_Rec("x", "y")]).empty


def test_fact_ages_frame_marks_stale():
    now = datetime(2026, 3, 10, tzinfo=UTC).timestamp()
    facts = [{"key": "k1", "value": 1, "updated_at": now - 10 * 86400, "user_id": "u"},
             {"key": "k2", "value": 2, "updated_at": now - 86400, "user_id": "u"}]
    df = viz.fact_ages_frame(facts, now=now, days=7)
    assert df["key"].tolist() == ["k1", "k2"] and df["stale"].tolist() == [True, False]
    assert df["age_days"].round(6).tolist() == [10.0, 1.0]


def test_highlight_round_trips_with_engine_parser():
    ans = "x [mem-00000000000000aa] y"
    assert parse_citations(ans) == ["00000000000000aa"]
