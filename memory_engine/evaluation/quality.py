"""Run-level figures beyond rank metrics: stale memories in the top k, what the context block
costs and holds, abstention on never-stored questions, and the benchmarks' official metrics.

Inputs are :class:`~memory_engine.evaluation.runner.QueryResult` objects (or the
per-query ``metrics`` dicts the warehouse stores, for the app): every figure
here is a mean, share or count over queries, defined in ``docs/metrics.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ValidationError
from .importers import LOCOMO_CATEGORIES
from .runner import QueryResult


@dataclass(frozen=True)
class StaleFigures:
    """stale@k over in-scope queries: ``share`` of them whose top k holds a stale memory,
    ``at_rank_1`` share with the stale memory ranked first, ``mean_rank`` of the first stale hit."""

    n_scope: int
    n_stale: int
    share: float | None
    at_rank_1: float | None
    mean_rank: float | None


@dataclass(frozen=True)
class ContextFigures:
    """Means per query of the context block: tokens, full-history tokens, their ratio (mean of
    per-query shares), relevant labels inside the budget, duplicate and stale hits, wasted tokens."""

    n: int
    tokens: float | None
    full_tokens: float | None
    share_of_full: float | None
    relevant_inside: float | None
    duplicates: float | None
    stale: float | None
    wasted_tokens: float | None


@dataclass(frozen=True)
class AbstentionFigures:
    """Never-stored questions: how many, and the share that returned anything (0 is best)."""

    n: int
    returned: int
    share_returned: float | None


@dataclass(frozen=True)
class QualityFigures:
    stale: StaleFigures
    context: ContextFigures
    abstention: AbstentionFigures
    official: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)


def _mean(xs: Iterable[float | None]) -> float | None:
    v = [float(x) for x in xs if x is not None]
    return float(np.mean(v)) if v else None


def _rows(queries: Iterable[QueryResult | Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """(scores, details) per query from results or warehouse rows (``metrics``/``details``)."""
    out: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    for q in queries:
        if isinstance(q, QueryResult):
            out.append((q.scores(), {"category": q.category, "tags": list(q.tags), "suite": q.suite}))
        else:
            out.append((q.get("metrics") or {}, q.get("details") or {}))
    return out


def quality_figures(queries: Iterable[QueryResult | Mapping[str, Any]]) -> QualityFigures:
    """Stale, context, abstention and official figures over ``queries``."""
    rows = _rows(queries)
    scope = [m for m, _ in rows if m.get("stale@k") is not None]
    stale_hits = [m for m in scope if m["stale@k"] == 1.0]
    stale = StaleFigures(
        len(scope), len(stale_hits), _mean(m["stale@k"] for m in scope),
        _mean(1.0 if m.get("stale_rank") == 1.0 else 0.0 for m in scope) if scope else None,
        _mean(m.get("stale_rank") for m in stale_hits),
    )
    ctx_rows = [m for m, _ in rows if m.get("context_tokens") is not None]
    context = ContextFigures(
        len(ctx_rows), _mean(m["context_tokens"] for m in ctx_rows), _mean(m.get("full_context_tokens") for m in ctx_rows),
        _mean(m.get("context_share") for m in ctx_rows), _mean(m.get("context_recall") for m in ctx_rows),
        _mean(m.get("context_duplicates") for m in ctx_rows), _mean(m.get("context_stale") for m in ctx_rows),
        _mean(m.get("context_wasted_tokens") for m in ctx_rows),
    )
    un = [m for m, _ in rows if m.get("unanswerable_returned") is not None]
    abst = AbstentionFigures(len(un), sum(1 for m in un if m["unanswerable_returned"] == 1.0),
                             _mean(m["unanswerable_returned"] for m in un))
    return QualityFigures(stale, context, abst, official_tables(rows))


def _locomo_category(tags: Sequence[str]) -> str | None:
    for t in tags:
        if t.startswith("locomo-cat-"):
            num = t[len("locomo-cat-"):].split(":", 1)[0]
            try:
                return f"{num} {LOCOMO_CATEGORIES[int(num)]}"
            except (ValueError, KeyError):
                return num
    return None


def official_tables(rows: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> dict[str, dict[str, dict[str, float | None]]]:
    """``{benchmark: {group: {metric: mean}}}`` with ``n`` per group.

    LongMemEval: groups ``all`` and ``type:<question type>`` over the official
    ``session:``/``turn:`` metrics (abstention questions carry none, so they
    are excluded as the script does). LoCoMo: ``all`` and ``category:<n name>``
    of ``locomo:recall``. MemDaily: our recall@k and ndcg@k per question type
    (``memdaily_<type>`` category).
    """
    out: dict[str, dict[str, dict[str, float | None]]] = {}

    def add(bench: str, group: str, m: Mapping[str, Any], names: Sequence[str]) -> None:
        g = out.setdefault(bench, {}).setdefault(group, {"n": 0.0})
        g["n"] = (g["n"] or 0.0) + 1.0
        for n in names:
            v = m.get(n)
            if v is not None:
                g.setdefault(f"_sum:{n}", 0.0)
                g.setdefault(f"_cnt:{n}", 0.0)
                g[f"_sum:{n}"] = (g[f"_sum:{n}"] or 0.0) + float(v)
                g[f"_cnt:{n}"] = (g[f"_cnt:{n}"] or 0.0) + 1.0

    for m, d in rows:
        lme = [k for k in m if k.startswith(("session:", "turn:"))]
        if lme:
            add("longmemeval", "all", m, lme)
            qtype = next((t.split(":", 1)[1] for t in d.get("tags") or () if t.startswith("longmemeval:")), None)
            if qtype:
                add("longmemeval", f"type:{qtype}", m, lme)
        if m.get("locomo:recall") is not None:
            add("locomo", "all", m, ["locomo:recall"])
            cat = _locomo_category(d.get("tags") or ())
            if cat:
                add("locomo", f"category:{cat}", m, ["locomo:recall"])
        cat = str(d.get("category") or "")
        if cat.startswith("memdaily_"):
            add("memdaily", "all", m, ["recall@k", "ndcg@k"])
            add("memdaily", f"type:{cat[len('memdaily_'):]}", m, ["recall@k", "ndcg@k"])
    for groups in out.values():
        for g in groups.values():
            names = [k[len("_sum:"):] for k in list(g) if k.startswith("_sum:")]
            for n in names:
                g[n] = g.pop(f"_sum:{n}") / g.pop(f"_cnt:{n}")  # type: ignore[operator]
    return out


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.1%}"


def _f(v: float | None, d: int = 3) -> str:
    return "–" if v is None else f"{v:.{d}f}"


def render_quality(f: QualityFigures) -> list[str]:
    """Plain-text lines for the terminal report."""
    s, c, a = f.stale, f.context, f.abstention
    lines = []
    if s.n_scope:
        lines.append(f"stale@k: {s.n_stale}/{s.n_scope} update/forget queries hold a superseded, corrected or "
                     f"forgotten memory in the top k ({_pct(s.share)}; at rank 1 {_pct(s.at_rank_1)}; "
                     f"mean first rank {_f(s.mean_rank, 1)})")
    if c.n:
        lines.append(f"context: {_f(c.tokens, 1)} tokens per query vs {_f(c.full_tokens, 1)} for the full history "
                     f"({_pct(c.share_of_full)}); relevant labels inside the budget {_f(c.relevant_inside)}; "
                     f"duplicates {_f(c.duplicates, 2)}, stale {_f(c.stale, 2)} hits per query "
                     f"({_f(c.wasted_tokens, 1)} tokens wasted)")
    if a.n:
        lines.append(f"abstention: {a.returned}/{a.n} never-stored questions returned something "
                     f"({_pct(a.share_returned)}; 0% is best)")
    for bench, groups in f.official.items():
        lines.append(f"official {bench} metrics:")
        for g, vals in sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0])):
            shown = ", ".join(f"{k} {_f(v)}" for k, v in sorted(vals.items()) if k != "n")
            lines.append(f"  {g} (n={int(vals.get('n') or 0)}): {shown}")
    return lines


def calibration_frame(queries: Iterable[QueryResult | Mapping[str, Any]]) -> Any:
    """Per query: ``kind`` (answerable / unanswerable) and ``top_relevance`` (best candidate's relevance),
    for queries that are either unanswerable or have relevant labels."""
    import pandas as pd

    rows = []
    for m, d in _rows(queries):
        rel = m.get("top_relevance")
        if m.get("unanswerable_returned") is not None:
            kind = "unanswerable"
        elif m.get("recall@k") is not None:
            kind = "answerable"
        else:
            continue
        rows.append({"kind": kind, "top_relevance": rel if rel is not None else 0.0,
                     "no_candidate": rel is None, "suite": d.get("suite"), "category": d.get("category")})
    return pd.DataFrame(rows, columns=["kind", "top_relevance", "no_candidate", "suite", "category"])


def floor_sweep(df: Any, grid: Sequence[float]) -> list[dict[str, float]]:
    """Per candidate floor ``f`` of ``grid`` (relevance, 0..1) over a :func:`calibration_frame`: ``answered``,
    the share of answerable queries whose best candidate reaches ``f`` (the gate opens, so the answer can
    be returned), ``silent``, the share of unanswerable ones whose best candidate stays below it (nothing
    returned), and ``balanced`` = (answered + silent) / 2, the balanced accuracy of the floor as a
    classifier of answerable questions (Brodersen et al. 2010). A share of a kind without queries is 1."""
    ans = [float(x) for x in df[df["kind"] == "answerable"]["top_relevance"]] if len(df) else []
    una = [float(x) for x in df[df["kind"] == "unanswerable"]["top_relevance"]] if len(df) else []
    out = []
    for f in grid:
        answered = sum(r >= f for r in ans) / len(ans) if ans else 1.0
        silent = sum(r < f for r in una) / len(una) if una else 1.0
        out.append({"floor": float(f), "answered": answered, "silent": silent, "balanced": (answered + silent) / 2})
    return out


def pick_floor(rows: Sequence[Mapping[str, float]]) -> tuple[float, float, float]:
    """(low, high, middle) of the widest run of consecutive grid floors of :func:`floor_sweep` that share
    the best balanced accuracy: the plateau, and its middle as the calibrated floor (a floor at the edge
    of the plateau moves with one query). ValidationError for no rows."""
    if not rows:
        raise ValidationError("no floor rows to pick from")
    best = max(r["balanced"] for r in rows)
    runs: list[list[float]] = []
    prev_best = False
    for r in rows:
        on = abs(r["balanced"] - best) < 1e-12
        if on and prev_best:
            runs[-1].append(r["floor"])
        elif on:
            runs.append([r["floor"]])
        prev_best = on
    run = max(runs, key=len)
    return run[0], run[-1], round((run[0] + run[-1]) / 2, 4)


def calibration_figure(df: Any, floor: float | None = None, title: str | None = None) -> Any:
    """Overlaid histograms of the top candidate's relevance for answerable vs unanswerable queries,
    with the relevance floor as a vertical line: the floor should sit between the two."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for kind, color in (("answerable", "seagreen"), ("unanswerable", "indianred")):
        d = df[df["kind"] == kind] if not df.empty else df
        if len(d):
            fig.add_trace(go.Histogram(x=d["top_relevance"], name=f"{kind} (n={len(d)})", opacity=0.6,
                                       marker_color=color, xbins={"start": 0, "end": 1.0001, "size": 0.05}))
    if floor is not None:
        fig.add_vline(x=floor, line_dash="dash", annotation_text=f"floor {floor:g}")
    fig.update_layout(barmode="overlay", title=title or "Top hit relevance: answerable vs unanswerable",
                      xaxis_title="relevance of the best candidate (0..1)", yaxis_title="queries", height=340)
    return fig


__all__ = ["AbstentionFigures", "ContextFigures", "QualityFigures", "StaleFigures", "calibration_figure",
           "calibration_frame", "floor_sweep", "official_tables", "pick_floor", "quality_figures", "render_quality"]
