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
    decimal. An interval (``low``/``high``) is appended to the detail.
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


def grouped_bar_figure(df: pd.DataFrame, *, x: str, y: str, color: str, title: str, y_range: tuple[float, float] | None = None) -> go.Figure:
    """Grouped bars of ``y`` per ``x``, one series per ``color`` value (e.g. metric per category)."""
    if df.empty or df[y].notna().sum() == 0:
        return _empty(title)
    fig = go.Figure()
    for key, g in df.groupby(color, sort=False):
        fig.add_trace(go.Bar(x=g[x].astype(str), y=g[y], name=str(key)))
    fig.update_layout(title=title, barmode="group", height=320, margin={"l": 40, "r": 10, "t": 40, "b": 60})
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


def records_frame(records: Sequence[Any], columns: Sequence[str]) -> pd.DataFrame:
    """Frame of the named attributes of objects or mappings (enum values as their ``.value``)."""

    def get(r: Any, c: str) -> Any:
        v = r.get(c) if isinstance(r, Mapping) else getattr(r, c, None)
        return getattr(v, "value", v)

    return pd.DataFrame([{c: get(r, c) for c in columns} for r in records], columns=list(columns))


__all__ = [
    "NO_DATA", "Tile", "components_figure", "delta_figure", "grouped_bar_figure", "highlight_citations",
    "hits_figure", "kpi_tile", "records_frame", "series_frame", "stacked_count_figure", "timeseries_figure",
]
