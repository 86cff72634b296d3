"""Sweep results: trials table, top trials with paired-bootstrap deltas, importances, Plotly figures.

Figure builders are pure ``(DataFrame, ...) -> plotly.graph_objects.Figure``
functions over :func:`trials_frame` (one row per trial; parameters in
``param:<key>`` columns, objectives in ``value_0``/``value_1``, metrics in
``metric:<name>`` columns), so the app's sweep page and the CLI share them and
tests run them without Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .metrics import PairedDelta, paired_bootstrap_delta
from .sweep import MetricRef
from .sweep_study import BASELINE_ATTR, SweepSpec, best_trials

PARAM_PREFIX = "param:"
METRIC_PREFIX = "metric:"


def trials_frame(study: Any) -> pd.DataFrame:
    """One row per trial of ``study``.

    Columns: ``number``, ``state`` (optuna state), ``status`` (complete /
    infeasible / invalid / undefined / fail / running / waiting), ``param:<key>``
    (sampled value), ``value_0``/``value_1`` (objectives, NaN unless complete),
    ``metric:<name>`` (overall metrics), ``replayed`` (writes replayed),
    ``duration_s``, ``pareto`` (on the Pareto front / best), ``violated``.
    """
    front = {t.number for t in best_trials(study)}
    rows = []
    for t in study.get_trials(deepcopy=False):
        ua = t.user_attrs
        row: dict[str, Any] = {"number": t.number, "state": t.state.name.lower(),
                               "status": ua.get("status", t.state.name.lower())}
        params = t.params or t.system_attrs.get("fixed_params", {})
        for k, v in params.items():
            row[PARAM_PREFIX + k] = v
        vals = t.values if t.values is not None else []
        for i in range(len(study.directions)):
            row[f"value_{i}"] = float(vals[i]) if i < len(vals) else math.nan
        for k, v in ((ua.get("metrics") or {}).get("overall") or {}).items():
            row[METRIC_PREFIX + k] = math.nan if v is None else float(v)
        row["replayed"] = ua.get("replayed")
        row["duration_s"] = ua.get("duration_s")
        row["pareto"] = t.number in front
        row["violated"] = ", ".join(ua.get("violated") or [])
        rows.append(row)
    return pd.DataFrame(rows)


def param_columns(df: pd.DataFrame) -> list[str]:
    """The ``param:<key>`` columns of a trials frame, in order."""
    return [c for c in df.columns if c.startswith(PARAM_PREFIX)]


@dataclass(frozen=True)
class TopTrial:
    """One of the best trials: its params (raw and as applied, weights normalised), objective
    values, and the paired-bootstrap delta of the first objective against the base config
    (``None`` when the metric has no per-query values, e.g. stored_memories)."""

    number: int
    params: dict[str, Any]
    applied: dict[str, Any]
    values: tuple[float, ...]
    delta: PairedDelta | None
    replayed: bool | None
    duration_s: float | None


@dataclass(frozen=True)
class SweepReport:
    """Summary of a sweep. ``baseline_values``: the base config's objectives; ``importances``:
    optuna fANOVA importances of the parameters for the first objective (sum 1; empty when
    fewer than two complete trials or no parameter varies); ``counts``: trials per status."""

    sweep_id: str
    objectives: tuple[str, ...]
    directions: tuple[str, ...]
    baseline_values: tuple[float | None, ...]
    top: tuple[TopTrial, ...]
    importances: dict[str, float]
    counts: dict[str, int]
    pareto: tuple[int, ...]
    notes: tuple[str, ...]


def _paired(baseline: Mapping[str, float | None], trial: Mapping[str, float | None], *, confidence: float,
            n_resamples: int, seed: int) -> PairedDelta | None:
    keys = [k for k in baseline if k in trial and baseline[k] is not None and trial[k] is not None]
    if not keys:
        return None
    return paired_bootstrap_delta([float(baseline[k]) for k in keys], [float(trial[k]) for k in keys],  # type: ignore[arg-type]
                                  confidence=confidence, n_resamples=n_resamples, seed=seed)


def importances(study: Any) -> dict[str, float]:
    """fANOVA parameter importances for the first objective (``optuna.importance``); {} when undefined."""
    import optuna
    from optuna.trial import TrialState

    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if len(complete) < 2:
        return {}
    varying = {k for k in complete[0].params if len({repr(t.params.get(k)) for t in complete}) > 1}
    if not varying:
        return {}
    try:
        # fANOVA explains variance, so it needs no sign flip for maximised objectives (PED-ANOVA, optuna's
        # default, ranks by how params reach *low* values)
        evaluator = optuna.importance.FanovaImportanceEvaluator(seed=0)
        return dict(optuna.importance.get_param_importances(study, evaluator=evaluator, target=lambda t: t.values[0],
                                                            params=sorted(varying)))
    except (RuntimeError, ValueError):
        return {}


def build_report(
    study: Any, spec: SweepSpec, *, top_n: int = 10, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0,
) -> SweepReport:
    """Top ``top_n`` trials (the Pareto front first for two objectives, then the rest by the first
    objective) with their delta against the base config and its ``confidence`` paired-bootstrap
    interval over queries, importances and counts."""
    from optuna.trial import TrialState

    objectives = tuple(o.label for o in spec.objectives)
    directions = tuple(d.name.lower() for d in study.directions)
    baseline = study.user_attrs.get(BASELINE_ATTR) or {}
    bm = baseline.get("metrics") or {}
    first: MetricRef = spec.objectives[0]

    def metric_of(m: Mapping[str, Any], ref: MetricRef) -> float | None:
        if not m:
            return None
        if ref.category is None:
            return m.get("overall", {}).get(ref.name)
        return m.get("by_category", {}).get(ref.category, {}).get(ref.name)

    base_values = tuple(metric_of(bm, o) for o in spec.objectives)
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    front = best_trials(study)
    front_ids = [t.number for t in front]
    sign = -1.0 if directions[0] == "maximize" else 1.0
    rest = sorted((t for t in complete if t.number not in set(front_ids)), key=lambda t: (sign * t.values[0], t.number))
    ordered = [*front, *rest][:top_n]
    base_pq = (bm.get("per_query") or {}).get(first.label) or {}
    top = []
    for t in ordered:
        pq = ((t.user_attrs.get("metrics") or {}).get("per_query") or {}).get(first.label) or {}
        delta = _paired(base_pq, pq, confidence=confidence, n_resamples=n_resamples, seed=seed) if first.per_query else None
        top.append(TopTrial(t.number, dict(t.params), dict(t.user_attrs.get("applied") or {}), tuple(t.values),
                            delta, t.user_attrs.get("replayed"), t.user_attrs.get("duration_s")))
    counts: dict[str, int] = {}
    for t in study.get_trials(deepcopy=False):
        s = t.user_attrs.get("status", t.state.name.lower())
        counts[s] = counts.get(s, 0) + 1
    from .sweep import weight_notes

    return SweepReport(study.study_name, objectives, directions, base_values, tuple(top), importances(study), counts,
                       tuple(front_ids), tuple(weight_notes(spec.params)))


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def top_frame(report: SweepReport) -> pd.DataFrame:
    """The top-trials table as a DataFrame (what the CLI prints and the app shows)."""
    rows = []
    for i, t in enumerate(report.top, start=1):
        row: dict[str, Any] = {"rank": i, "trial": t.number}
        row.update({k: v for k, v in t.params.items()})
        for name, v in zip(report.objectives, t.values, strict=False):
            row[name] = v
        d = t.delta
        row["delta"] = d.delta if d else None
        row["ci_low"] = d.low if d else None
        row["ci_high"] = d.high if d else None
        row["significant"] = d.significant if d else None
        row["pareto"] = t.number in report.pareto
        rows.append(row)
    return pd.DataFrame(rows)


def render_report(report: SweepReport) -> str:
    """Plain-text report: counts, baseline, top trials with delta [95% CI], importances, notes."""
    lines = [f"sweep {report.sweep_id}: " + ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items()))]
    lines.append("objective(s): " + ", ".join(f"{o} ({d})" for o, d in zip(report.objectives, report.directions,
                                                                          strict=True)))
    lines.append("base config: " + ", ".join(f"{o}={_fmt(v)}" for o, v in zip(report.objectives,
                                                                             report.baseline_values, strict=True)))
    df = top_frame(report)
    if df.empty:
        lines.append("no feasible complete trial")
    else:
        lines.append("")
        lines.append(f"top trials (delta of {report.objectives[0]} vs base config, "
                     "95% paired-bootstrap interval over queries):")
        shown = df.drop(columns=["delta", "ci_low", "ci_high", "significant"])
        cells = shown.map(_fmt) if hasattr(shown, "map") else shown.applymap(_fmt)
        cells["delta [95% CI]"] = [
            "-" if r.delta is None or pd.isna(r.delta) else
            f"{r.delta:+.4f} [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]{' *' if r.significant else ''}"
            for r in df.itertuples()
        ]
        lines.append(cells.to_string(index=False))
    if report.importances:
        lines.append("")
        lines.append("parameter importances (fANOVA, first objective):")
        for k, v in sorted(report.importances.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {k:<40} {v:.3f}")
    for n in report.notes:
        lines.append(f"note: {n}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- figures


def _axis_values(s: pd.Series) -> tuple[list[float], dict[str, Any]]:
    """Numeric values for a parcoords axis; categories become 0..n-1 with tick labels."""
    num = pd.to_numeric(s, errors="coerce")
    if num.notna().all():
        return num.astype(float).tolist(), {}
    cats = sorted({str(v) for v in s})
    idx = {c: i for i, c in enumerate(cats)}
    return [float(idx[str(v)]) for v in s], {"tickvals": list(range(len(cats))), "ticktext": cats}


def parallel_coordinates_figure(df: pd.DataFrame, objective: str = "value_0", title: str | None = None) -> Any:
    """Parallel coordinates of every complete trial: one axis per parameter plus the objective,
    lines coloured by the objective. Empty figure for a frame without complete trials."""
    import plotly.graph_objects as go

    d = df[df["status"] == "complete"] if "status" in df else df
    fig = go.Figure()
    if d.empty or objective not in d:
        fig.update_layout(title=title or "parallel coordinates (no complete trial)")
        return fig
    dims = []
    for c in param_columns(d):
        vals, ticks = _axis_values(d[c])
        dims.append({"label": c[len(PARAM_PREFIX):], "values": vals, **ticks})
    obj = d[objective].astype(float).tolist()
    dims.append({"label": objective, "values": obj})
    fig.add_trace(go.Parcoords(line={"color": obj, "colorscale": "Viridis", "showscale": True}, dimensions=dims))
    fig.update_layout(title=title or "parameters vs objective")
    return fig


def param_heatmap_figure(df: pd.DataFrame, x: str, y: str, objective: str = "value_0", title: str | None = None) -> Any:
    """Mean objective over two parameters: a heatmap when both have at most 20 distinct values
    (grids), else a contour over the scattered trials. ``x``/``y`` are config keys."""
    import plotly.graph_objects as go

    cx, cy = PARAM_PREFIX + x, PARAM_PREFIX + y
    d = df[df["status"] == "complete"] if "status" in df else df
    fig = go.Figure()
    if d.empty or cx not in d or cy not in d:
        fig.update_layout(title=title or f"{objective} over {x} x {y} (no complete trial)")
        return fig
    if d[cx].nunique() <= 20 and d[cy].nunique() <= 20:
        piv = d.pivot_table(index=cy, columns=cx, values=objective, aggfunc="mean")
        fig.add_trace(go.Heatmap(z=piv.values, x=[str(v) for v in piv.columns], y=[str(v) for v in piv.index],
                                 colorscale="Viridis", colorbar={"title": objective}))
    else:
        fig.add_trace(go.Contour(x=d[cx].astype(float), y=d[cy].astype(float), z=d[objective].astype(float),
                                 colorscale="Viridis", colorbar={"title": objective}))
        fig.add_trace(go.Scatter(x=d[cx], y=d[cy], mode="markers", marker={"color": "white", "size": 5},
                                 showlegend=False))
    fig.update_layout(title=title or f"{objective} over {x} x {y}", xaxis_title=x, yaxis_title=y)
    return fig


def pareto_front_figure(df: pd.DataFrame, names: Sequence[str] = ("value_0", "value_1"), title: str | None = None) -> Any:
    """Scatter of the two objectives of every complete trial; the Pareto front (``pareto``
    column) highlighted and joined. Hover shows the trial number and parameters."""
    import plotly.graph_objects as go

    x, y = names
    d = df[df["status"] == "complete"] if "status" in df else df
    fig = go.Figure()
    if d.empty or x not in d or y not in d:
        fig.update_layout(title=title or "Pareto front (no complete trial)")
        return fig
    pcols = param_columns(d)
    hover = ["#" + str(r["number"]) + "<br>" + "<br>".join(f"{c[len(PARAM_PREFIX):]}={r[c]}" for c in pcols)
             for _, r in d.iterrows()]
    fig.add_trace(go.Scatter(x=d[x], y=d[y], mode="markers", name="trials", text=hover, hoverinfo="text",
                             marker={"color": "lightgray", "size": 8}))
    front = d[d["pareto"]].sort_values(x) if "pareto" in d else d.iloc[0:0]
    if not front.empty:
        fhover = [h for h, p in zip(hover, d["pareto"], strict=True) if p]
        fig.add_trace(go.Scatter(x=front[x], y=front[y], mode="lines+markers", name="Pareto front",
                                 text=fhover, hoverinfo="text", marker={"color": "crimson", "size": 10}))
    fig.update_layout(title=title or "Pareto front", xaxis_title=x, yaxis_title=y)
    return fig


def importance_figure(df: pd.DataFrame, title: str | None = None) -> Any:
    """Horizontal bars of parameter importances; ``df`` has columns ``param`` and ``importance``."""
    import plotly.graph_objects as go

    fig = go.Figure()
    if not df.empty:
        d = df.sort_values("importance")
        fig.add_trace(go.Bar(x=d["importance"], y=d["param"], orientation="h"))
    fig.update_layout(title=title or "parameter importances", xaxis_title="importance (fANOVA)")
    return fig


def history_figure(df: pd.DataFrame, objective: str = "value_0", maximize: bool = True,
                   title: str | None = None) -> Any:
    """Objective per trial number with the best-so-far line (complete trials only)."""
    import plotly.graph_objects as go

    d = df[df["status"] == "complete"].sort_values("number") if "status" in df else df
    fig = go.Figure()
    if not d.empty and objective in d:
        best = d[objective].cummax() if maximize else d[objective].cummin()
        fig.add_trace(go.Scatter(x=d["number"], y=d[objective], mode="markers", name="trial"))
        fig.add_trace(go.Scatter(x=d["number"], y=best, mode="lines", name="best so far"))
    fig.update_layout(title=title or f"{objective} per trial", xaxis_title="trial", yaxis_title=objective)
    return fig


def importances_frame(imp: Mapping[str, float]) -> pd.DataFrame:
    """``{param: importance}`` as the frame :func:`importance_figure` takes."""
    return pd.DataFrame({"param": list(imp), "importance": [float(v) for v in imp.values()]})


def report_figures(study: Any, report: SweepReport) -> dict[str, Any]:
    """Every figure that applies to this sweep, by name: ``parallel``, ``heatmap`` (exactly two
    parameters), ``pareto`` (two objectives), ``importance``, ``history``."""
    df = trials_frame(study)
    out: dict[str, Any] = {"parallel": parallel_coordinates_figure(df, title=f"{report.objectives[0]} by parameters")}
    pcols = param_columns(df)
    if len(pcols) == 2:
        out["heatmap"] = param_heatmap_figure(df, pcols[0][len(PARAM_PREFIX):], pcols[1][len(PARAM_PREFIX):],
                                              title=f"{report.objectives[0]} over two parameters")
    if len(report.objectives) == 2:
        out["pareto"] = pareto_front_figure(df, title=f"Pareto front: {report.objectives[0]} vs {report.objectives[1]}")
    out["importance"] = importance_figure(importances_frame(report.importances))
    out["history"] = history_figure(df, maximize=report.directions[0] == "maximize",
                                    title=f"{report.objectives[0]} per trial")
    return out


__all__ = [
    "SweepReport", "TopTrial", "build_report", "history_figure", "importance_figure", "importances",
    "importances_frame", "param_columns", "param_heatmap_figure", "parallel_coordinates_figure",
    "pareto_front_figure", "render_report", "report_figures", "top_frame", "trials_frame",
]
