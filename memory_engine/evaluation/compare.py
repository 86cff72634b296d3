"""Two evaluation runs side by side (``memwb compare``, the Golden eval page).

Inputs are stored runs as the warehouse returns them: a run row
(``run_id``, ``config``, ``metrics``, ``meta``...) and its per-query rows
(``case_id`` = ``suite/case``, ``query_id``, ``metrics``, ``details``). Output:

- :func:`config_diff`: the parameters that differ between the two configs
  (dotted keys, A value, B value), not their hashes;
- :func:`item_frame`: every query of either run, item by item: pass and rank
  metrics in A and in B, the top hit of each, and ``change``
  (``fixed`` fail -> pass, ``broke`` pass -> fail, ``same``, ``only A``/``only B``);
- :func:`group_deltas`: per category (or any ``details`` key) the mean of
  each metric in A and B and the paired delta B - A with its 95%
  paired-bootstrap interval (over the queries both runs hold);
- :func:`compare_runs`: all of it in one :class:`Comparison`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .metrics import paired_bootstrap_delta

#: Metrics compared by default (0..1, higher is better; stale@k and unanswerable_returned lower is better).
COMPARE_METRICS: tuple[str, ...] = ("pass", "recall@k", "mrr", "ndcg@k", "stale@k", "unanswerable_returned")


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def config_diff(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None,
                ignore: Sequence[str] = ("workspace", "storage.", "tracing.")) -> pd.DataFrame:
    """Config fields (dotted) whose values differ: columns ``parameter, a, b`` (values as JSON text;
    a field missing on one side shows ``-``). Paths and tracing settings never change results: ignored."""
    fa, fb = _flatten(a or {}), _flatten(b or {})
    rows = []
    for k in sorted(set(fa) | set(fb)):
        if any(k == p or k.startswith(p) for p in ignore):
            continue
        va, vb = fa.get(k, "-"), fb.get(k, "-")
        if va != vb:
            rows.append({"parameter": k, "a": json.dumps(va, ensure_ascii=False, default=str),
                         "b": json.dumps(vb, ensure_ascii=False, default=str)})
    return pd.DataFrame(rows, columns=["parameter", "a", "b"])


def _key(r: Mapping[str, Any]) -> str:
    return f"{r.get('case_id')}/{r.get('query_id')}"


def _top(d: Mapping[str, Any]) -> str:
    hits = d.get("retrieved") or []
    if not hits:
        return "(nothing)"
    h = hits[0]
    labels = ",".join(h.get("labels") or []) or "-"
    content = " ".join(str(h.get("content") or "").split())
    return f"{labels}: {content[:80]}"


def item_frame(rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]],
               metrics: Sequence[str] = ("recall@k", "ndcg@k")) -> pd.DataFrame:
    """One row per query of either run: ``key, text, category, split, pass_a, pass_b, change``,
    ``<metric>_a``/``<metric>_b`` and ``top_a``/``top_b`` (rank-1 hit: labels and content).
    Flipped queries (fixed, broke) come first."""
    a = {_key(r): r for r in rows_a}
    b = {_key(r): r for r in rows_b}
    rows = []
    for k in sorted(set(a) | set(b)):
        ra, rb = a.get(k), b.get(k)
        d = ((ra or rb) or {}).get("details") or {}
        ma, mb = (ra or {}).get("metrics") or {}, (rb or {}).get("metrics") or {}
        pa, pb = ma.get("pass"), mb.get("pass")
        if ra is None:
            change = "only B"
        elif rb is None:
            change = "only A"
        elif pa == pb:
            change = "same"
        else:
            change = "fixed" if (pb or 0) > (pa or 0) else "broke"
        row: dict[str, Any] = {"key": k, "text": d.get("text"), "category": d.get("category"),
                               "split": d.get("split"), "change": change, "pass_a": pa, "pass_b": pb}
        for m in metrics:
            row[f"{m}_a"], row[f"{m}_b"] = ma.get(m), mb.get(m)
        row["top_a"] = _top((ra or {}).get("details") or {}) if ra else None
        row["top_b"] = _top((rb or {}).get("details") or {}) if rb else None
        rows.append(row)
    cols = ["key", "text", "category", "split", "change", "pass_a", "pass_b",
            *[f"{m}_{s}" for m in metrics for s in ("a", "b")], "top_a", "top_b"]
    df = pd.DataFrame(rows, columns=cols)
    order = {"broke": 0, "fixed": 1, "only A": 2, "only B": 3, "same": 4}
    return df.sort_values(by=["change", "key"], key=lambda s: s.map(order) if s.name == "change" else s,
                          kind="stable").reset_index(drop=True)


def group_deltas(rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]],
                 metrics: Sequence[str] = COMPARE_METRICS, *, by: str = "category", seed: int = 0) -> pd.DataFrame:
    """Per group (``details[by]``, plus ``all``) and metric: ``a``, ``b`` (means over the paired
    queries), ``delta`` = b - a with ``low``/``high`` (95% paired bootstrap), ``n`` pairs, ``significant``."""
    a = {_key(r): r for r in rows_a}
    b = {_key(r): r for r in rows_b}
    keys = sorted(set(a) & set(b))
    groups: dict[str, list[str]] = {"all": keys}
    for k in keys:
        g = str(((a[k].get("details") or {}).get(by)) or "unspecified")
        groups.setdefault(g, []).append(k)
    out = []
    for g, ks in groups.items():
        for m in metrics:
            pairs = [(float(x), float(y)) for k in ks
                     if (x := (a[k].get("metrics") or {}).get(m)) is not None
                     and (y := (b[k].get("metrics") or {}).get(m)) is not None]
            if not pairs:
                continue
            xa, xb = [p[0] for p in pairs], [p[1] for p in pairs]
            d = paired_bootstrap_delta(xa, xb, seed=seed)
            out.append({"group": g, "metric": m, "a": sum(xa) / len(xa), "b": sum(xb) / len(xb), "delta": d.delta,
                        "low": d.low, "high": d.high, "n": d.n, "significant": d.significant})
    return pd.DataFrame(out, columns=["group", "metric", "a", "b", "delta", "low", "high", "n", "significant"])


@dataclass(frozen=True)
class Comparison:
    """Run B against run A: config diff, per-group deltas, items, flipped queries."""

    run_a: str
    run_b: str
    config: pd.DataFrame
    deltas: pd.DataFrame
    items: pd.DataFrame

    @property
    def flipped(self) -> pd.DataFrame:
        return self.items[self.items["change"].isin(["fixed", "broke"])]

    def to_dict(self) -> dict[str, Any]:
        return {"run_a": self.run_a, "run_b": self.run_b,
                "config_diff": json.loads(self.config.to_json(orient="records")),
                "deltas": json.loads(self.deltas.to_json(orient="records")),
                "flipped": json.loads(self.flipped.to_json(orient="records")),
                "items": json.loads(self.items.to_json(orient="records"))}


def compare_runs(run_a: Mapping[str, Any], rows_a: Sequence[Mapping[str, Any]], run_b: Mapping[str, Any],
                 rows_b: Sequence[Mapping[str, Any]], *, metrics: Sequence[str] = COMPARE_METRICS,
                 by: str = "category", seed: int = 0) -> Comparison:
    """Compare stored run B with stored run A (rows as ``Warehouse.eval_queries`` returns them)."""
    return Comparison(str(run_a.get("run_id")), str(run_b.get("run_id")),
                      config_diff(run_a.get("config"), run_b.get("config")),
                      group_deltas(rows_a, rows_b, metrics, by=by, seed=seed), item_frame(rows_a, rows_b))


def _f(v: Any) -> str:
    return "-" if v is None or (isinstance(v, float) and v != v) else (f"{v:.3f}" if isinstance(v, float) else str(v))


def render_comparison(c: Comparison, *, max_items: int = 40) -> str:
    """Plain text: the parameter diff, per-category deltas with intervals, the flipped queries."""
    lines = [f"run B {c.run_b} against run A {c.run_a}", ""]
    if c.config.empty:
        lines.append("config: identical (same parameters)")
    else:
        lines.append("config parameters that differ (A -> B):")
        lines.extend(f"  {r.parameter}: {r.a} -> {r.b}" for r in c.config.itertuples())
    lines.append("")
    if c.deltas.empty:
        lines.append("no query in common: nothing to pair")
    else:
        lines.append("per category, B - A [95% paired-bootstrap interval], * = interval excludes 0:")
        for r in c.deltas.itertuples():
            ci = "" if r.low is None or r.low != r.low else f" [{r.low:+.3f}, {r.high:+.3f}]"
            lines.append(f"  {r.group:<28} {r.metric:<22} {_f(r.a)} -> {_f(r.b)}  {r.delta:+.3f}{ci}"
                         f"{' *' if r.significant else ''}  (n={r.n})")
    fl = c.flipped
    lines.append("")
    fixed, broke = int((fl["change"] == "fixed").sum()), int((fl["change"] == "broke").sum())
    lines.append(f"flipped queries: {broke} broke (pass -> fail), {fixed} fixed (fail -> pass)")
    for r in fl.head(max_items).itertuples():
        lines.append(f"  {r.change:<5} {r.key}  {str(r.text or '')[:70]}")
        lines.append(f"        A top: {r.top_a}")
        lines.append(f"        B top: {r.top_b}")
    if len(fl) > max_items:
        lines.append(f"  ... {len(fl) - max_items} more (see --format json)")
    only = c.items[c.items["change"].isin(["only A", "only B"])]
    if len(only):
        lines.append(f"{len(only)} queries are in one run only (different suites)")
    return "\n".join(lines) + "\n"


__all__ = ["COMPARE_METRICS", "Comparison", "compare_runs", "config_diff", "group_deltas", "item_frame",
           "render_comparison"]
