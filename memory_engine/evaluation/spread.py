"""Run-to-run spread of a stochastic sweep (``memwb sweep --repeats N``).

Random and TPE searches depend on the sampler seed: the same sweep with
another seed may pick another config with another score. Repeating it with
seeds ``seed, seed + SEED_STRIDE, ...`` (each repeat its own study; worker
``i`` of a repeat still uses ``seed + i``) and reporting the spread of the
outcome tells a real gain from a lucky draw, as cognee reports the spread of
repeated benchmark runs. Reported per repeat: the best dev objective, the
chosen parameters and, with a test split, the chosen config's test value and
test gain; over repeats: mean, sample standard deviation (ddof 1), min, max,
and how many distinct configs were chosen.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ValidationError

#: Distance between the sampler seeds of two repeats (workers of one repeat use seed + i, i < jobs).
SEED_STRIDE = 1000


@dataclass(frozen=True)
class Repeat:
    """One repeat: sampler seed, study name, best dev value, chosen params, test value and gain (or None)."""

    seed: int
    study_name: str
    dev_value: float | None
    params: dict[str, Any]
    test_value: float | None = None
    test_gain: float | None = None


@dataclass(frozen=True)
class Spread:
    """mean / std (ddof 1; None for one value) / min / max of one figure over repeats."""

    n: int
    mean: float | None
    std: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, values: Sequence[float | None]) -> Spread:
        v = np.asarray([x for x in values if x is not None and not math.isnan(x)], dtype=float)
        if not v.size:
            return cls(0, None, None, None, None)
        return cls(int(v.size), float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else None, float(v.min()),
                   float(v.max()))


@dataclass(frozen=True)
class SpreadReport:
    objective: str
    repeats: tuple[Repeat, ...]

    @property
    def dev(self) -> Spread:
        return Spread.of([r.dev_value for r in self.repeats])

    @property
    def test(self) -> Spread:
        return Spread.of([r.test_value for r in self.repeats])

    @property
    def test_gain(self) -> Spread:
        return Spread.of([r.test_gain for r in self.repeats])

    @property
    def distinct_configs(self) -> int:
        return len({tuple(sorted((k, repr(v)) for k, v in r.params.items())) for r in self.repeats})

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {"objective": self.objective, "repeats": [asdict(r) for r in self.repeats],
                "dev": asdict(self.dev), "test": asdict(self.test), "test_gain": asdict(self.test_gain),
                "distinct_configs": self.distinct_configs}


def repeat_seeds(seed: int, repeats: int) -> list[int]:
    """Sampler seeds of ``repeats`` repeats starting at ``seed``. Raises ValidationError (a ValueError) for repeats < 1."""
    if repeats < 1:
        raise ValidationError(f"repeats must be >= 1, got {repeats}", field="repeats")
    return [seed + i * SEED_STRIDE for i in range(repeats)]


def run_repeats(spec: Any, base: Any, *, repeats: int, study_name: str | None, run: Callable[..., Any],
                **kw: Any) -> tuple[SpreadReport, list[Any]]:
    """Run the sweep ``spec`` once per seed of :func:`repeat_seeds` through ``run`` (``run_sweep``'s
    signature), each repeat in its own study ``<name>-seed<seed>``; returns the spread report and the runs."""
    from dataclasses import replace

    from .runner import suites_digest
    from .sweep_study import best_trials, default_study_name

    suites = kw.get("suites")
    base_name = study_name or default_study_name(spec, base, suites_digest(suites or []))
    out, runs = [], []
    for s in repeat_seeds(spec.seed, repeats):
        r = run(replace(spec, seed=s), base, study_name=f"{base_name}-seed{s}", **kw)
        front = best_trials(r.study)
        best = front[0] if front else None
        g = r.generalization
        runs.append(r)
        out.append(Repeat(s, r.study_name, float(best.values[0]) if best else None, dict(best.params) if best else {},
                          g.test.chosen if g is not None else None, g.test_gain if g is not None else None))
    return SpreadReport(spec.objectives[0].label, tuple(out)), runs


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.4f}"


def _line(name: str, s: Spread) -> str:
    return f"  {name:<10} mean {_f(s.mean)}  std {_f(s.std)}  min {_f(s.low)}  max {_f(s.high)}  (n={s.n})"


def render_spread(rep: SpreadReport) -> str:
    """Plain text: one line per repeat, then the spread of dev (and test) figures."""
    lines = [f"run-to-run spread over {len(rep.repeats)} repeats (sampler seeds), objective {rep.objective}:"]
    for r in rep.repeats:
        test = f", test {_f(r.test_value)} (gain {_f(r.test_gain)})" if r.test_value is not None else ""
        params = ", ".join(f"{k}={v}" for k, v in r.params.items())
        lines.append(f"  seed {r.seed}: best dev {_f(r.dev_value)}{test}; {params}")
    lines.append(_line("dev", rep.dev))
    if rep.test.n:
        lines.append(_line("test", rep.test))
        lines.append(_line("test gain", rep.test_gain))
    lines.append(f"  {rep.distinct_configs} distinct config(s) chosen")
    return "\n".join(lines)


def spread_from_mapping(d: Mapping[str, Any]) -> SpreadReport:
    """Inverse of :meth:`SpreadReport.to_dict` (for stored reports)."""
    return SpreadReport(str(d["objective"]), tuple(Repeat(**r) for r in d["repeats"]))


__all__ = ["SEED_STRIDE", "Repeat", "Spread", "SpreadReport", "render_spread", "repeat_seeds", "run_repeats",
           "spread_from_mapping"]
