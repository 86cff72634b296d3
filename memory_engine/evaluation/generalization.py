"""Generalization check of a sweep: the config chosen on dev, judged on test.

A sweep over the dev split picks its best trial; this module evaluates the
base config and the chosen config on the test split (cases the sweep never
saw) and reports, for the first objective, per split:

- the base config's value, the chosen config's value,
- the delta chosen - base with its paired-bootstrap interval over queries
  (:func:`~memory_engine.evaluation.metrics.paired_bootstrap_delta`, BCa 95%),

and the **generalization gap** = dev gain - test gain, where gain is the delta
signed so that positive is better (minimised metrics flip the sign). It warns
when the test gain is negative or its interval includes 0: the dev gain did
not carry to unseen cases, the signature of a parameter tuned to the dev
cases (overfitting), as Recht et al. 2019 ("Do ImageNet classifiers
generalize to ImageNet?") measure it for models.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import EngineConfig
from .metrics import PairedDelta, paired_bootstrap_delta
from .study_results import BASELINE_ATTR, best_config, best_trials
from .suite import ResolvedSuite
from .sweep import SweepEvaluator, compute_metrics

#: Study user attribute holding the generalization check (keyed by the chosen trial).
HOLDOUT_ATTR = "memwb_holdout"
#: Trial number under which the warehouse stores the generalization check of a sweep.
HOLDOUT_TRIAL_NUMBER = -2


@dataclass(frozen=True)
class PartFigures:
    """One split's figures: base and chosen values of the objective, the paired delta, queries scored."""

    base: float | None
    chosen: float | None
    delta: PairedDelta | None
    n_queries: int

    def to_dict(self) -> dict[str, Any]:
        d = self.delta
        return {"base": self.base, "chosen": self.chosen, "n_queries": self.n_queries,
                "delta": None if d is None else {"delta": d.delta, "low": d.low, "high": d.high, "n": d.n,
                                                 "confidence": d.confidence, "significant": d.significant}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PartFigures:
        x = d.get("delta")
        delta = None if x is None else PairedDelta(x["delta"], x["low"], x["high"], x["n"], x["confidence"])
        return cls(d.get("base"), d.get("chosen"), delta, int(d.get("n_queries", 0)))


@dataclass(frozen=True)
class Generalization:
    """Dev and test figures of the chosen config against the base config.

    ``maximize``: direction of the objective; ``gap`` = dev gain - test gain
    (gains signed so that positive is better); ``warnings``: human sentences
    (test gain negative / not significant).
    """

    objective: str
    maximize: bool
    trial: int
    params: dict[str, Any]
    dev: PartFigures
    test: PartFigures
    split: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def gain(self, part: PartFigures) -> float | None:
        if part.delta is None:
            if part.base is None or part.chosen is None:
                return None
            d = part.chosen - part.base
        else:
            d = part.delta.delta
        return d if self.maximize else -d

    @property
    def dev_gain(self) -> float | None:
        return self.gain(self.dev)

    @property
    def test_gain(self) -> float | None:
        return self.gain(self.test)

    @property
    def gap(self) -> float | None:
        """Dev gain minus test gain (> 0: the dev figure overstates what the config brings)."""
        if self.dev_gain is None or self.test_gain is None:
            return None
        return self.dev_gain - self.test_gain

    @property
    def flagged(self) -> bool:
        return bool(self.warnings)

    def to_dict(self) -> dict[str, Any]:
        return {"objective": self.objective, "maximize": self.maximize, "trial": self.trial, "params": self.params,
                "dev": self.dev.to_dict(), "test": self.test.to_dict(), "split": self.split,
                "warnings": list(self.warnings), "dev_gain": self.dev_gain, "test_gain": self.test_gain,
                "gap": self.gap}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Generalization:
        return cls(d["objective"], bool(d["maximize"]), int(d["trial"]), dict(d.get("params") or {}),
                   PartFigures.from_dict(d["dev"]), PartFigures.from_dict(d["test"]), dict(d.get("split") or {}),
                   tuple(d.get("warnings") or ()))


def _delta(base: Mapping[str, float | None], now: Mapping[str, float | None], *, confidence: float,
           n_resamples: int, seed: int) -> PairedDelta | None:
    keys = [k for k in base if k in now and base[k] is not None and now[k] is not None]
    if not keys:
        return None
    return paired_bootstrap_delta([float(base[k]) for k in keys], [float(now[k]) for k in keys],  # type: ignore[arg-type]
                                  confidence=confidence, n_resamples=n_resamples, seed=seed)


def _fmt_ci(d: PairedDelta) -> str:
    if d.low is None or d.high is None:
        return f"{d.delta:+.4f} (no interval: {d.n} pair)"
    return f"{d.delta:+.4f} [{d.low:+.4f}, {d.high:+.4f}]"


def judge(objective: str, maximize: bool, dev: PartFigures, test: PartFigures) -> tuple[str, ...]:
    """Warnings for a chosen config: test gain negative, or not significant at the interval's confidence."""
    out: list[str] = []
    d = test.delta
    if d is None:
        return ()
    gain = d.delta if maximize else -d.delta
    if gain < -1e-12:
        out.append(f"test gain is negative: {objective} {_fmt_ci(d)} on the test split; the chosen config is worse "
                   "than the base config on cases it was not tuned on (overfitted to dev)")
    elif not d.significant:
        dd = dev.delta
        dev_gain = None if dd is None else (dd.delta if maximize else -dd.delta)
        why = ("the dev gain does not carry to unseen cases" if dd is not None and dd.significant and dev_gain
               and dev_gain > 0 else "nor is there a significant gain on dev: the sweep found nothing better than "
               "the base config")
        out.append(f"test gain is not significant: {objective} {_fmt_ci(d)} on the test split, the "
                   f"{d.confidence:.0%} interval includes 0; {why}")
    return tuple(out)


def evaluate_generalization(
    study: Any, spec: Any, base: EngineConfig, test_suites: Sequence[ResolvedSuite], *,
    split_record: Mapping[str, Any] | None = None, embedder: Any | None = None,
    confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0, store: bool = True,
) -> Generalization | None:
    """Evaluate the sweep's chosen config (best trial) and the base config on ``test_suites``.

    Dev figures come from the study (its baseline and the trial's per-query
    values). Returns None when the study has no feasible trial. With
    ``store`` the result is kept in the study's user attribute
    :data:`HOLDOUT_ATTR`.
    """
    if not best_trials(study):
        return None
    cfg, ft = best_config(study, base)
    first = spec.objectives[0]
    maximize = study.directions[0].name == "MAXIMIZE"
    bm = (study.user_attrs.get(BASELINE_ATTR) or {}).get("metrics") or {}
    tm = ft.user_attrs.get("metrics") or {}
    kw: dict[str, Any] = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}

    def value(m: Mapping[str, Any]) -> float | None:
        if first.category is None:
            return (m.get("overall") or {}).get(first.name)
        return ((m.get("by_category") or {}).get(first.category) or {}).get(first.name)

    base_pq = (bm.get("per_query") or {}).get(first.label) or {}
    trial_pq = (tm.get("per_query") or {}).get(first.label) or {}
    dev = PartFigures(value(bm), value(tm), _delta(base_pq, trial_pq, **kw) if first.per_query else None,
                      sum(1 for v in trial_pq.values() if v is not None))
    names = ["pass", "hit@k", "recall@k", "mrr", "ndcg@k", first.name]
    with SweepEvaluator(test_suites, embedder=embedder) as ev:
        tb = compute_metrics(ev.evaluate(base).cases, names, per_query=spec.objectives)
        tc = compute_metrics(ev.evaluate(cfg).cases, names, per_query=spec.objectives)
    tb_pq, tc_pq = tb.per_query.get(first.label, {}), tc.per_query.get(first.label, {})
    test = PartFigures(tb.value(first), tc.value(first), _delta(tb_pq, tc_pq, **kw) if first.per_query else None,
                       sum(1 for v in tc_pq.values() if v is not None))
    rec = dict(split_record or {})
    rec.pop("membership", None)  # the study keeps the spec and counts; membership goes with eval runs
    g = Generalization(first.label, maximize, ft.number, dict(ft.params), dev, test, rec,
                       judge(first.label, maximize, dev, test))
    if store:
        study.set_user_attr(HOLDOUT_ATTR, g.to_dict())
    return g


def stored_generalization(study: Any) -> Generalization | None:
    """The generalization check kept in the study (None when the sweep had no test split)."""
    d = study.user_attrs.get(HOLDOUT_ATTR)
    return Generalization.from_dict(d) if d else None


def _f(v: float | None) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def render_generalization(g: Generalization) -> str:
    """Plain-text block: dev and test side by side, the gap, the warnings."""
    lines = [f"generalization of trial #{g.trial} ({', '.join(f'{k}={v}' for k, v in g.params.items())}), "
             f"objective {g.objective}; split: {g.split.get('label', '?')}"]
    lines.append(f"  {'split':<6} {'queries':>7} {'base':>8} {'chosen':>8}  delta [95% paired-bootstrap CI]")
    for name, p in (("dev", g.dev), ("test", g.test)):
        ci = _fmt_ci(p.delta) + (" *" if p.delta.significant else "") if p.delta else "-"
        lines.append(f"  {name:<6} {p.n_queries:>7} {_f(p.base):>8} {_f(p.chosen):>8}  {ci}")
    lines.append(f"  generalization gap (dev gain - test gain): {_f(g.gap)}")
    for w in g.warnings:
        lines.append(f"WARNING: {w}")
    return "\n".join(lines)


def generalization_frame(g: Generalization) -> Any:
    """Dev/test rows (split, queries, base, chosen, delta, ci_low, ci_high, significant) as a DataFrame."""
    import pandas as pd

    rows = []
    for name, p in (("dev", g.dev), ("test", g.test)):
        d = p.delta
        rows.append({"split": name, "queries": p.n_queries, "base": p.base, "chosen": p.chosen,
                     "delta": d.delta if d else None, "ci_low": d.low if d else None,
                     "ci_high": d.high if d else None, "significant": d.significant if d else None})
    return pd.DataFrame(rows)


def generalization_figure(g: Generalization) -> Any:
    """Bars of the delta (chosen - base) on dev and on test with their intervals as error bars."""
    import plotly.graph_objects as go

    fig = go.Figure()
    xs, ys, lo, hi, colors = [], [], [], [], []
    for name, p in (("dev", g.dev), ("test", g.test)):
        if p.delta is None:
            continue
        d = p.delta
        xs.append(name)
        ys.append(d.delta)
        lo.append(d.delta - d.low if d.low is not None else 0.0)
        hi.append(d.high - d.delta if d.high is not None else 0.0)
        colors.append("seagreen" if (d.delta if g.maximize else -d.delta) > 0 and d.significant else "indianred")
    fig.add_trace(go.Bar(x=xs, y=ys, marker_color=colors,
                         error_y={"type": "data", "symmetric": False, "array": hi, "arrayminus": lo}))
    fig.add_hline(y=0, line_color="gray")
    fig.update_layout(title=f"{g.objective}: chosen - base on dev and test (gap {_f(g.gap)})",
                      yaxis_title=f"delta of {g.objective}", height=320)
    return fig


__all__ = ["HOLDOUT_ATTR", "HOLDOUT_TRIAL_NUMBER", "Generalization", "PartFigures", "evaluate_generalization",
           "generalization_figure", "generalization_frame", "judge", "render_generalization",
           "stored_generalization"]
