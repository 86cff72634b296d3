"""Pure figure builders and display shaping for the workbench (no Streamlit).

Every figure builder is ``(DataFrame, ...) -> plotly.graph_objects.Figure``:
it reads the named columns, never mutates its input and draws a "no data"
annotation for an empty frame (an empty window is "no data", never 0).
Display helpers turn :class:`~memory_engine.observability.metrics.MetricValue`
objects into tile text and frames. Tested without Streamlit.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from .errors import ValidationError

NO_DATA = "no data"

_SERIES_COLS = ("bucket", "value", "numerator", "denominator", "low", "high")


# --- shaping ---------------------------------------------------------------------------------------
def series_frame(values: Sequence[Any]) -> pd.DataFrame:
    """A time series of MetricValue-like objects as a frame with columns
    ``bucket, value, numerator, denominator, low, high`` (one row per bucket;
    buckets with ``value=None`` are kept with NaN so gaps show)."""
    rows = [
        {
            "bucket": getattr(v, "bucket", None),
            "value": getattr(v, "value", None),
            "numerator": getattr(v, "numerator", None),
            "denominator": getattr(v, "denominator", 0),
            "low": getattr(v, "low", None),
            "high": getattr(v, "high", None),
        }
        for v in values
    ]
    df = pd.DataFrame(rows, columns=list(_SERIES_COLS))
    if not df.empty:
        df["bucket"] = pd.to_datetime(df["bucket"], utc=True)
        for c in ("value", "numerator", "low", "high"):
            df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


@dataclass(frozen=True)
class Tile:
    """Text of one KPI tile: ``value`` ("0.62", "41.2 ms" or "no data"),
    ``detail`` the counts ("31/50", "n=50"), ``delta`` the change against the
    previous period ("+0.05", "-3.1 ms") or None when either side is empty,
    ``delta_color`` for ``st.metric`` ("normal" when higher is better, else "inverse")."""

    label: str
    value: str
    detail: str
    delta: str | None
    delta_color: str = "normal"
    help: str = ""


def _fmt_count(x: Any) -> str:
    if x is None:
        return "0"
    f = float(x)
    return f"{int(f)}" if f.is_integer() else f"{f:.2f}"


def kpi_tile(
    label: str,
    current: Any,
    previous: Any | None = None,
    *,
    higher_is_better: bool = True,
    help: str = "",
) -> Tile:
    """Tile text for a MetricValue-like ``current`` with the change against ``previous``.

    Ratios show 2 decimals and ``numerator/denominator``; ``unit == "ms"``
    shows milliseconds and ``n=``; ``unit == "score"`` (health, 0..100) one
    decimal. An interval (``low``/``high``) is appended to the detail; a latency delta names the previous
    window's n ("-8.8 ms vs n=9"), since a p95 of two cold starts is no trend.
    """
    unit = getattr(current, "unit", "ratio")
    v = getattr(current, "value", None)
    if v is None:
        value = NO_DATA
    elif unit == "ms":
        value = f"{v:.1f} ms"
    elif unit == "score":
        value = f"{v:.1f}"
    else:
        value = f"{v:.2f}"
    den = getattr(current, "denominator", 0) or 0
    num = getattr(current, "numerator", None)
    if unit in ("ms", "score"):
        detail = f"n={den}"
    else:
        detail = f"{_fmt_count(num)}/{den}"
    low, high = getattr(current, "low", None), getattr(current, "high", None)
    if v is not None and low is not None and high is not None:
        detail += f", 95% CI {low:.2f}–{high:.2f}"
    delta = None
    pv = getattr(previous, "value", None) if previous is not None else None
    if v is not None and pv is not None:
        d = v - pv
        delta = f"{d:+.1f} ms" if unit == "ms" else (f"{d:+.1f}" if unit == "score" else f"{d:+.2f}")
        if unit == "ms":
            # a percentile of the previous window on a handful of calls (cold starts) is no trend: say its n
            delta += f" vs n={getattr(previous, 'denominator', 0) or 0}"
    return Tile(label, value, detail, delta, "normal" if higher_is_better else "inverse", help)


_CITE = re.compile(r"\[mem-([0-9a-f]{16})\]")


def highlight_citations(answer: str, cited_ids: Sequence[str] = ()) -> str:
    """HTML of an answer with every ``[mem-<id>]`` marker wrapped in ``<mark>``
    (class ``cited``; ``cited-unknown`` when the id is not in ``cited_ids``,
    i.e. the marker does not point at a retrieved memory). Text is escaped."""
    known = set(cited_ids)
    out: list[str] = []
    pos = 0
    for m in _CITE.finditer(answer or ""):
        out.append(html.escape(answer[pos : m.start()]))
        cls = "cited" if (not known or m.group(1) in known) else "cited-unknown"
        out.append(f'<mark class="{cls}">{html.escape(m.group(0))}</mark>')
        pos = m.end()
    out.append(html.escape((answer or "")[pos:]))
    return "".join(out)


def ingest_outcome(rows: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """The banner after ingesting files: ``(level, message)`` with level ``success`` (every file stored
    something and none had a rejected or malformed span), ``warning`` (some files failed or had problems)
    or ``error`` (no file stored a span). A row has ``file`` and either ``error`` (the file could not be
    read) or the counts ``ingested``, ``duplicate``, ``rejected``, ``malformed``."""
    if not rows:
        return "info", "No file ingested."
    failed = [r["file"] for r in rows if r.get("error") or not (r.get("ingested", 0) or r.get("duplicate", 0))]
    problems = [r["file"] for r in rows if r.get("rejected", 0) or r.get("malformed", 0)]
    stored = sum(int(r.get("ingested", 0) or 0) for r in rows)
    dup = sum(int(r.get("duplicate", 0) or 0) for r in rows)
    already = f" ({dup:,} already stored)" if dup else ""  # re-ingesting adds nothing: say why 0 is not a loss
    if len(failed) == len(rows):
        return "error", f"Nothing ingested: all {len(rows)} files failed ({', '.join(failed)})."
    if failed or problems:
        bad = list(dict.fromkeys(failed + problems))
        return "warning", (f"Ingested {stored:,} new spans{already}; {len(bad)} of {len(rows)} files had problems "
                           f"({', '.join(bad)}).")
    return "success", f"Ingest finished: {stored:,} new spans{already} from {len(rows)} files."


# --- figures -------------------------------------------------------------------------------------------
def _empty(title: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=NO_DATA, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font={"size": 16})
    fig.update_layout(title=title, xaxis={"visible": False}, yaxis={"visible": False}, height=260,
                      margin={"l": 30, "r": 10, "t": 40, "b": 30})  # fmt: skip
    return fig


def timeseries_figure(df: pd.DataFrame, *, title: str, unit: str = "ratio") -> go.Figure:
    """Line of ``value`` over ``bucket`` (from :func:`series_frame`); the hover
    shows ``numerator/denominator``; ``low``/``high`` draw an interval band when present."""
    if df.empty or df["value"].notna().sum() == 0:
        return _empty(title)
    d = df.sort_values("bucket")
    custom = list(zip(d["numerator"].fillna(0), d["denominator"].fillna(0), strict=True))
    hover = "%{x|%Y-%m-%d %H:%M}<br>%{y:.3f}" + (
        " ms<br>n=%{customdata[1]}" if unit == "ms" else "<br>%{customdata[0]}/%{customdata[1]}"
    )
    fig = go.Figure()
    if d["low"].notna().any() and d["high"].notna().any():
        fig.add_trace(go.Scatter(x=d["bucket"], y=d["high"], mode="lines", line={"width": 0}, showlegend=False,
                                 hoverinfo="skip"))  # fmt: skip
        fig.add_trace(go.Scatter(x=d["bucket"], y=d["low"], mode="lines", line={"width": 0}, fill="tonexty",
                                 fillcolor="rgba(99,110,250,0.15)", name="95% CI", hoverinfo="skip"))  # fmt: skip
    fig.add_trace(go.Scatter(x=d["bucket"], y=d["value"], mode="lines+markers", name=title, customdata=custom,
                             hovertemplate=hover + "<extra></extra>"))  # fmt: skip
    fig.update_layout(title=title, height=260, margin={"l": 40, "r": 10, "t": 40, "b": 30}, showlegend=False,
                      yaxis_title="ms" if unit == "ms" else None)  # fmt: skip
    if unit == "ratio":
        fig.update_yaxes(range=[0, 1.05])
    return fig


def hits_figure(df: pd.DataFrame, *, title: str = "Ranked hits") -> go.Figure:
    """Horizontal bars of ``score`` per ``rank`` (best on top), coloured by ``cited`` (bool);
    ``label`` (optional) is shown on the axis, else ``memory_id``."""
    if df.empty:
        return _empty(title)
    d = df.sort_values("rank")
    names = d["label"] if "label" in d.columns else d["memory_id"]
    ylab = [f"#{int(r)} {n}" for r, n in zip(d["rank"], names, strict=True)]
    colours = ["#2ca02c" if bool(c) else "#9aa0a6" for c in d["cited"]]
    fig = go.Figure(go.Bar(x=d["score"], y=ylab, orientation="h", marker_color=colours,
                           hovertemplate="%{y}<br>score %{x:.4f}<extra></extra>"))  # fmt: skip
    fig.update_layout(title=title, height=max(180, 40 * len(d) + 80), yaxis={"autorange": "reversed"},
                      margin={"l": 10, "r": 10, "t": 40, "b": 30}, xaxis_title="fused score")  # fmt: skip
    return fig


def waterfall_figure(df: pd.DataFrame, *, title: str = "Trace timeline") -> go.Figure:
    """A trace waterfall: one horizontal bar per span (rows in tree order, top to bottom) from
    ``offset_ms`` for ``duration_ms``; ``name`` indented by ``depth``; coloured by ``service``;
    ``status_code`` ERROR bars outlined red. Columns: span_id, name, service, depth, offset_ms,
    duration_ms, status_code."""
    if df.empty:
        return _empty(title)
    d = df.reset_index(drop=True)
    labels = [f"{chr(160) * 3 * int(dep)}{n}  ·{sid[:6]}" for dep, n, sid in zip(d["depth"], d["name"], d["span_id"], strict=True)]
    fig = go.Figure()
    for svc, g in d.groupby(d["service"].fillna("(no service)"), sort=False):
        err = g["status_code"].eq("ERROR")
        fig.add_trace(go.Bar(
            x=g["duration_ms"].clip(lower=1e-3), base=g["offset_ms"], y=[labels[i] for i in g.index], orientation="h",
            name=str(svc), marker_line_color=["#d62728" if e else "rgba(0,0,0,0)" for e in err], marker_line_width=2,
            customdata=list(zip(g["duration_ms"], g["offset_ms"], strict=True)),
            hovertemplate="%{y}<br>start +%{customdata[1]:.2f} ms<br>%{customdata[0]:.2f} ms<extra>%{fullData.name}</extra>",
        ))  # fmt: skip
    fig.update_layout(title=title, barmode="overlay", height=max(200, 26 * len(d) + 90),
                      margin={"l": 10, "r": 10, "t": 40, "b": 30}, xaxis_title="ms since trace start",
                      legend={"orientation": "h", "y": -0.15})  # fmt: skip
    fig.update_yaxes(categoryorder="array", categoryarray=labels, autorange="reversed", automargin=True)
    return fig


def grouped_bar_figure(df: pd.DataFrame, *, x: str, y: str, color: str, title: str, y_range: tuple[float, float] | None = None) -> go.Figure:
    """Grouped bars of ``y`` per ``x``, one series per ``color`` value (e.g. metric per category)."""
    if df.empty or df[y].notna().sum() == 0:
        return _empty(title)
    fig = go.Figure()
    for key, g in df.groupby(color, sort=False):
        fig.add_trace(go.Bar(x=g[x].astype(str), y=g[y], name=str(key)))
    longest = int(df[x].astype(str).str.len().max())
    # many or long category names are drawn slanted; automargin makes room for them instead of cutting them off
    fig.update_layout(title=title, barmode="group", height=320 + min(160, 5 * max(0, longest - 8)),
                      margin={"l": 40, "r": 10, "t": 40, "b": 40})  # fmt: skip
    fig.update_xaxes(automargin=True)
    if y_range is not None:
        fig.update_yaxes(range=list(y_range))
    return fig


def delta_figure(df: pd.DataFrame, *, title: str = "B - A") -> go.Figure:
    """Bars of ``delta`` per ``metric`` (green up, red down); optional ``low``/``high`` as error bars."""
    if df.empty or df["delta"].notna().sum() == 0:
        return _empty(title)
    d = df.dropna(subset=["delta"])
    colours = ["#2ca02c" if v >= 0 else "#d62728" for v in d["delta"]]
    err = None
    if {"low", "high"} <= set(d.columns) and d["low"].notna().all() and d["high"].notna().all():
        err = {"type": "data", "symmetric": False, "array": (d["high"] - d["delta"]).tolist(),
               "arrayminus": (d["delta"] - d["low"]).tolist()}  # fmt: skip
    fig = go.Figure(go.Bar(x=d["metric"], y=d["delta"], marker_color=colours, error_y=err))
    fig.update_layout(title=title, height=300, margin={"l": 40, "r": 10, "t": 40, "b": 40})
    fig.add_hline(y=0, line_width=1, line_color="#666")
    return fig


HEALTH_SHARES = {
    "freshness": "stale share: facts not updated within the freshness window",
    "coverage": "fill rate: (user, key attribute) pairs with a fact",
    "consistency": "conflict rate: facts contradicted by a current semantic memory",
}
"""What each health component's ``share`` measures (its alert rule looks at it)."""


def health_components_frame(report: Any) -> pd.DataFrame:
    """The health components as a table a reader can follow: ``score`` (0..1, higher is better; what the
    composite averages), ``share`` with ``measures`` (what the share counts, as ``numerator/denominator``),
    the alert ``threshold`` and whether the component ``in composite`` (a component without data is left
    out of the composite and its weights renormalised, never counted as 0)."""
    rows = []
    for c in report.components:
        has = c.score is not None and c.weight > 0
        rows.append({
            "component": c.name,
            "score": c.score,
            "in composite": "yes" if has else ("no: no data" if c.score is None else "no: weight 0"),
            "share": c.share,
            "measures": HEALTH_SHARES.get(c.name, ""),
            "counts": f"{c.numerator}/{c.denominator}" if c.denominator else "no data (0/0)",
            "threshold": c.threshold,
            "alert": c.alert,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["component", "score", "in composite", "share", "measures", "counts",
                                       "threshold", "alert"])  # fmt: skip


def components_figure(df: pd.DataFrame, *, title: str = "Health components") -> go.Figure:
    """Bars of each ``component``'s ``value`` (0..1, or 0..100 when ``scale`` is 100)."""
    if df.empty or df["value"].notna().sum() == 0:
        return _empty(title)
    fig = go.Figure(go.Bar(x=df["component"], y=df["value"], marker_color="#636efa",
                           text=[f"{v:.2f}" if pd.notna(v) else NO_DATA for v in df["value"]],
                           textposition="outside"))  # fmt: skip
    top = float(df["value"].max())
    fig.update_layout(title=title, height=300, margin={"l": 40, "r": 10, "t": 40, "b": 40},
                      yaxis={"range": [0, 105 if top > 1.5 else 1.1]})  # fmt: skip
    return fig


def stacked_count_figure(df: pd.DataFrame, *, x: str, color: str, count: str = "count", title: str) -> go.Figure:
    """Stacked bars of ``count`` per ``x`` split by ``color`` (e.g. memories by type and status)."""
    if df.empty:
        return _empty(title)
    fig = go.Figure()
    for key, g in df.groupby(color, sort=True):
        fig.add_trace(go.Bar(x=g[x].astype(str), y=g[count], name=str(key)))
    fig.update_layout(title=title, barmode="stack", height=300, margin={"l": 40, "r": 10, "t": 40, "b": 40})
    return fig


def first_with_hits(counts: Sequence[Any]) -> int:
    """Index of the first row whose retrieved count is above 0 (missing counts as 0); 0 when none is."""
    return next((i for i, n in enumerate(counts) if n is not None and n == n and n > 0), 0)  # n == n: not NaN


def config_label(config: Mapping[str, Any] | None, config_hash: str | None = None, *, max_items: int = 4) -> str:
    """A run's configuration as the parameters it changed from the defaults (``retrieval.floor=0.4, ...``),
    not its hash: ``defaults`` when nothing changed, ``+N more`` past ``max_items``, the hash only when
    the run stored no config."""
    from .config import changed_fields

    if not config:
        return f"cfg {config_hash or '?'}"
    changed = changed_fields(config)
    if not changed:
        return "defaults"
    items = [f"{k}={v}" for k, v in changed.items()]
    more = f", +{len(items) - max_items} more" if len(items) > max_items else ""
    return ", ".join(items[:max_items]) + more


def records_frame(records: Sequence[Any], columns: Sequence[str]) -> pd.DataFrame:
    """Frame of the named attributes of objects or mappings (enum values as their ``.value``,
    tuples such as a memory's ``flags`` joined by ', '). Columns named
    ``*_at`` holding epoch seconds (memory records keep times so) become UTC timestamps, so a table never
    shows ``1764590400.0`` for a date."""

    def get(r: Any, c: str) -> Any:
        v = r.get(c) if isinstance(r, Mapping) else getattr(r, c, None)
        if isinstance(v, tuple):
            return ", ".join(str(x) for x in v)
        return getattr(v, "value", v)

    df = pd.DataFrame([{c: get(r, c) for c in columns} for r in records], columns=list(columns))
    for c in columns:
        if c.endswith("_at") and len(df) and pd.api.types.is_numeric_dtype(df[c]):
            df[c] = pd.to_datetime(df[c], unit="s", utc=True).dt.floor("s")
    return df


def supersede_edges(records: Sequence[Any]) -> pd.DataFrame:
    """One row per supersession among ``records`` (MemoryRecord-like): ``old_id``,
    ``old_content``, ``old_status``, ``new_id``, ``new_content`` and ``head``, the
    newest record reached by following ``superseded_by`` (cycles are cut), so
    rows grouped by ``head`` read as chains. Records outside the set show as ids only."""
    by_id = {r.id: r for r in records}
    rows = []

    def head_of(rid: str) -> str:
        seen = {rid}
        cur = rid
        while True:
            nxt = getattr(by_id.get(cur), "superseded_by", None)
            if not nxt or nxt in seen:
                return cur
            seen.add(nxt)
            cur = nxt

    for r in records:
        new = getattr(r, "superseded_by", None)
        if not new:
            continue
        n = by_id.get(new)
        rows.append({
            "old_id": r.id, "old_content": r.content, "old_status": getattr(r.status, "value", r.status),
            "new_id": new, "new_content": n.content if n is not None else None, "head": head_of(r.id),
        })  # fmt: skip
    cols = ["old_id", "old_content", "old_status", "new_id", "new_content", "head"]
    return pd.DataFrame(rows, columns=cols).sort_values(["head", "old_id"]).reset_index(drop=True)


EVAL_METRICS: tuple[str, ...] = ("pass", "hit@k", "recall@k", "mrr", "ndcg@k")
"""Per-query metrics shown on the Golden eval page (names of ``QueryResult.scores()``)."""


def _defined(xs: Any) -> list[float]:
    return [float(x) for x in xs if x is not None and not (isinstance(x, float) and x != x)]


GROUP_CHART_TOP = 12
"""Groups a per-group chart names (the Golden eval page's "By category"); the others are pooled into one
``other (N groups)`` bar, so 40 categories do not crowd the axis into unreadable slanted labels."""


def eval_groups_frame(rows: Sequence[Mapping[str, Any]], by: str, metrics: Sequence[str] = EVAL_METRICS, *,
                      top: int | None = None) -> pd.DataFrame:
    """Mean of each metric per group over stored eval query rows (``metrics`` and
    ``details`` mappings, as :meth:`Warehouse.eval_queries` returns them).

    ``by`` is a ``details`` key (``category``, ``lang``, ``suite``). Columns:
    ``group, metric, value, n`` where ``n`` counts the queries defining the
    metric; a metric no query defines is left out (no data, not 0).

    Groups come in name order. With ``top`` (>= 1) and more than ``top + 1`` groups, only the ``top``
    groups with the most queries (ties by name) are kept, largest first, and the queries of all the
    others are pooled into one last group ``other (K groups)``: at most ``top + 1`` groups, and the
    pooled means are over those queries (not a mean of group means). Raises ValidationError for ``top`` < 1.
    """
    if top is not None and top < 1:
        raise ValidationError(f"top must be >= 1, got {top}", field="top")
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        g = str((r.get("details") or {}).get(by) or "unspecified")
        groups.setdefault(g, []).append(r)
    order = sorted(groups)
    if top is not None and len(groups) > top + 1:  # pooling a single group would only rename it
        ranked = sorted(groups, key=lambda g: (-len(groups[g]), g))
        rest = ranked[top:]
        other = f"other ({len(rest)} groups)"
        groups = {g: groups[g] for g in ranked[:top]} | {other: [r for g in rest for r in groups[g]]}
        order = [*ranked[:top], other]
    out = []
    for g in order:
        for m in metrics:
            vals = _defined((r.get("metrics") or {}).get(m) for r in groups[g])
            if vals:
                out.append({"group": g, "metric": m, "value": sum(vals) / len(vals), "n": len(vals)})
    return pd.DataFrame(out, columns=["group", "metric", "value", "n"])


def compare_runs_frame(
    rows_a: Sequence[Mapping[str, Any]],
    rows_b: Sequence[Mapping[str, Any]],
    metrics: Sequence[str] = EVAL_METRICS,
    *,
    seed: int = 0,
) -> pd.DataFrame:
    """Run B against run A over the queries both ran (paired by case id + query id).

    Columns ``metric, a, b, delta, low, high, n``: means over the pairs where
    both define the metric, ``delta = b - a`` with a paired bootstrap 95%
    interval (:func:`memory_engine.evaluation.metrics.paired_bootstrap_delta`).
    Metrics without pairs are left out.
    """
    from .evaluation.metrics import paired_bootstrap_delta

    def index(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
        return {(str(r.get("case_id")), str(r.get("query_id"))): (r.get("metrics") or {}) for r in rows}

    a, b = index(rows_a), index(rows_b)
    keys = sorted(set(a) & set(b))
    out = []
    for m in metrics:
        raw = [(a[k].get(m), b[k].get(m)) for k in keys]
        pairs = [(float(x), float(y)) for x, y in raw if x is not None and y is not None]
        if not pairs:
            continue
        xa, xb = [p[0] for p in pairs], [p[1] for p in pairs]
        d = paired_bootstrap_delta(xa, xb, seed=seed)
        out.append({"metric": m, "a": sum(xa) / len(xa), "b": sum(xb) / len(xb), "delta": d.delta, "low": d.low,
                    "high": d.high, "n": d.n})  # fmt: skip
    return pd.DataFrame(out, columns=["metric", "a", "b", "delta", "low", "high", "n"])


def failed_queries_frame(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Failed stored queries with what was expected and what came back: one dict
    per query with ``key``, ``text``, ``category``, ``lang``, ``expected``
    (label -> rank or None), ``retrieved`` (rank, labels, content, score),
    ``misses`` (label, kind, detail) and the failed ``assertions``."""
    out = []
    for r in rows:
        d = r.get("details") or {}
        if d.get("passed", True):
            continue
        out.append({
            "key": f"{r.get('case_id')}/{r.get('query_id')}", "text": d.get("text"), "category": d.get("category"),
            "lang": d.get("lang"), "split": d.get("split"), "expected": dict(d.get("relevant_ranks") or {}),
            "retrieved": [{"rank": x.get("rank"), "labels": ", ".join(x.get("labels") or []) or "–",
                           "content": x.get("content"), "score": x.get("score")} for x in d.get("retrieved") or []],
            "misses": [{"label": x.get("label"), "kind": x.get("kind"), "detail": x.get("detail")}
                       for x in d.get("misses") or []],
            "assertions": [a for a in d.get("assertions") or [] if not a.get("passed", True)],
        })  # fmt: skip
    return out


def fact_ages_frame(facts: Sequence[Mapping[str, Any]], *, now: float, days: float = 7.0) -> pd.DataFrame:
    """Facts with their age in days at ``now`` (epoch seconds) and ``stale`` =
    age above ``days`` (the freshness rule of the health score), oldest first."""
    rows = [
        {"user_id": f.get("user_id"), "key": f.get("key"), "value": str(f.get("value")), "id": f.get("id"),
         "age_days": (now - float(f.get("updated_at") or now)) / 86_400.0}
        for f in facts
    ]  # fmt: skip
    df = pd.DataFrame(rows, columns=["user_id", "key", "value", "id", "age_days"])
    df["stale"] = df["age_days"] > days
    return df.sort_values("age_days", ascending=False).reset_index(drop=True)


@dataclass(frozen=True)
class Score:
    """A 0..100 score as a MetricValue-like object for :func:`kpi_tile` (``unit='score'``)."""

    value: float | None
    denominator: int
    numerator: float | None = None
    unit: str = "score"
    low: float | None = None
    high: float | None = None


__all__ = [
    "EVAL_METRICS", "GROUP_CHART_TOP", "NO_DATA", "Score", "fact_ages_frame", "first_with_hits", "compare_runs_frame", "eval_groups_frame", "failed_queries_frame", "Tile", "components_figure", "delta_figure", "grouped_bar_figure", "highlight_citations",
    "hits_figure", "kpi_tile", "records_frame", "series_frame", "stacked_count_figure", "supersede_edges", "timeseries_figure",
]
