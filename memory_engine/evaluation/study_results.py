"""Reading a finished optuna study: its Pareto front, best config and the base config's
own evaluation. A leaf of the sweep modules, so both the sweep driver
(:mod:`.sweep_study`) and the held-out check (:mod:`.generalization`) read studies
without importing each other."""

from __future__ import annotations

from typing import Any

from ..config import EngineConfig
from .sweep import SweepError, normalise_weights

#: Study user attribute holding the base config's own evaluation (metrics, per-query values).
BASELINE_ATTR = "memwb_baseline"


def count_trials(study: Any, states: tuple[Any, ...]) -> int:
    """Number of the study's trials in any of ``states`` (optuna ``TrialState`` values)."""
    return len(study.get_trials(deepcopy=False, states=states))


def best_trials(study: Any) -> list[Any]:
    """Complete trials on the Pareto front (one objective: the single best), best first by the first objective."""
    from optuna.trial import TrialState

    if not count_trials(study, (TrialState.COMPLETE,)):
        return []
    front = list(study.best_trials)
    sign = -1.0 if study.directions[0].name == "MAXIMIZE" else 1.0
    return sorted(front, key=lambda t: (sign * t.values[0], t.number))


def best_config(study: Any, base: EngineConfig) -> tuple[EngineConfig, Any]:
    """The best trial's config (weights normalised) and the trial. Raises SweepError when no trial is feasible."""
    front = best_trials(study)
    if not front:
        raise SweepError(f"sweep {study.study_name!r} has no feasible complete trial")
    ft = front[0]
    return base.with_overrides(ft.user_attrs.get("applied") or normalise_weights(ft.params, base)), ft
