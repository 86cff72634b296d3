"""Optuna studies for ``memwb sweep``: set-up, trial loop, parallel workers, warehouse sync, TOML export.

A sweep is one optuna study (name = sweep id). Its storage is in memory, or
an optuna RDB URL (``sqlite:///path/sweeps.sqlite3``, ``postgresql://...``) that
several processes or machines share; re-running the same sweep resumes it
(only missing trials run) and a larger ``trials`` or a wider grid extends it.

Grid sweeps enqueue every grid point once, when the study is created (study
creation is atomic in the storage, so exactly one process does it), and
workers only *pop* queued trials (an atomic WAITING -> RUNNING transition in
the storage): two processes never evaluate the same grid point. Random/TPE
workers ask their sampler (seeded with ``seed + worker index``) until the
study holds ``trials`` trials; a sampled parameter set that was already
evaluated reuses the stored metrics instead of running again.

Every trial keeps its metrics in the trial's user attributes (overall, per
category, per query for the objectives); a discarded trial (constraint broken,
objective undefined, invalid config) is PRUNED with its reason. The base
config's own evaluation is the study's ``baseline`` (for deltas).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import sys
import tempfile
import threading
import time
import tomllib
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..config import EngineConfig
from ..errors import ConfigError
from .runner import suites_digest
from .study_results import BASELINE_ATTR, best_config, best_trials, count_trials
from .suite import ResolvedSuite, load_suites
from .sweep import (
    Constraint,
    MetricRef,
    ParamSpec,
    SearchMode,
    SpecKind,
    SweepError,
    SweepEvaluator,
    TrialMetrics,
    compute_metrics,
    configured_baseline,
    grid_points,
    normalise_weights,
    parse_constraint,
    parse_metric,
)

#: Study user attribute holding the sweep definition (checked on resume).
SPEC_ATTR = "memwb_spec"
#: Trial number under which the warehouse stores the base config's own evaluation.
BASELINE_TRIAL_NUMBER = -1
#: Consecutive failed trials after which a worker gives up (an engine bug, not bad luck).
MAX_CONSECUTIVE_FAILURES = 3

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SweepSpec:
    """What a sweep varies and optimises.

    ``objectives``: one metric, or two for a Pareto front; ``constraints``
    discard trials; ``seed`` seeds samplers (worker ``i`` uses ``seed + i``).
    """

    suite_paths: tuple[str, ...]
    params: tuple[ParamSpec, ...]
    search: SearchMode = SearchMode.GRID
    objectives: tuple[MetricRef, ...] = (MetricRef("ndcg@k"),)
    constraints: tuple[Constraint, ...] = ()
    seed: int = 0
    split: dict[str, Any] | None = None  #: the dev/test split spec (``SplitSpec.to_dict``) when the suites are a dev split

    def __post_init__(self) -> None:
        if not self.params:
            raise ConfigError("a sweep needs at least one parameter")
        if not 1 <= len(self.objectives) <= 2:
            raise ConfigError(f"a sweep takes one or two objectives, got {len(self.objectives)}")
        if self.search == SearchMode.GRID:
            for p in self.params:
                p.grid_values()  # raises for a continuous range

    @property
    def grid_size(self) -> int:
        return math.prod(len(p.grid_values()) for p in self.params)

    def identity(self, base: EngineConfig, digest: str) -> dict[str, Any]:
        """The parts a resumed study must share (values/bounds and trial count may change: that extends it)."""
        ident: dict[str, Any] = {
            "keys": sorted(p.key for p in self.params),
            "search": self.search.value,
            "objectives": [o.label for o in self.objectives],
            "constraints": [c.label for c in self.constraints],
            "suites": digest,
            "base_config": base.config_hash(),
        }
        if self.split:  # a dev split of the same files is another set of cases: another study
            ident["split"] = self.split
        return ident

    def to_dict(self) -> dict[str, Any]:
        return {
            "suite_paths": list(self.suite_paths),
            "params": [p.to_dict() for p in self.params],
            "search": self.search.value,
            "objectives": [o.label for o in self.objectives],
            "constraints": [c.label for c in self.constraints],
            "seed": self.seed,
            "split": self.split,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SweepSpec:
        params = tuple(
            ParamSpec(p["key"], SpecKind(p["kind"]), p.get("low"), p.get("high"), p.get("step"),
                      tuple(p.get("choices") or ()), bool(p.get("is_int")))
            for p in d["params"]
        )
        return cls(tuple(d["suite_paths"]), params, SearchMode(d["search"]),
                   tuple(parse_metric(o) for o in d["objectives"]),
                   tuple(parse_constraint(c) for c in d["constraints"]), int(d.get("seed", 0)), d.get("split"))


def default_study_name(spec: SweepSpec, base: EngineConfig, digest: str) -> str:
    """``sweep-<10 hex>`` from :meth:`SweepSpec.identity`: the same command resumes the same study."""
    h = hashlib.sha256(json.dumps(spec.identity(base, digest), sort_keys=True).encode()).hexdigest()[:10]
    return f"sweep-{h}"


def default_storage_url(workspace: str | os.PathLike[str]) -> str:
    """``sqlite:///<workspace>/sweeps.sqlite3`` (the folder is created)."""
    from ..paths import workspace_paths

    return workspace_paths(workspace).sweep_storage_url()


def open_storage(url: str | None) -> Any:
    """An optuna storage: in memory for ``None``, else RDB (sqlite waits up to 60 s for a lock)."""
    import optuna

    if url is None:
        return optuna.storages.InMemoryStorage()
    try:
        if url.startswith("sqlite"):
            return optuna.storages.RDBStorage(url, engine_kwargs={"connect_args": {"timeout": 60}})
        return optuna.storages.RDBStorage(url)
    except Exception as e:
        raise SweepError(f"cannot open optuna storage {url!r}: {e}") from e


def _sampler(spec: SweepSpec, worker: int) -> Any:
    import optuna

    seed = spec.seed + worker
    if spec.search == SearchMode.TPE:
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, n_startup_trials=5)
    return optuna.samplers.RandomSampler(seed=seed)


def open_study(
    spec: SweepSpec, base: EngineConfig, suites: Sequence[ResolvedSuite], *, storage: Any, study_name: str | None,
    worker: int = 0, enqueue: bool = True,
) -> tuple[Any, bool]:
    """Create the study (recording the spec, enqueueing the grid) or load and check an existing one.

    Returns ``(study, created)``. Raises SweepError when an existing study was
    made by another sweep definition (other keys, search, objectives,
    constraints, suites or base config).
    """
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    digest = suites_digest(suites)
    name = study_name or default_study_name(spec, base, digest)
    directions = [optuna.study.StudyDirection[o.direction.name] for o in spec.objectives]
    ident = spec.identity(base, digest)
    try:
        study = optuna.create_study(study_name=name, storage=storage, directions=directions,
                                    sampler=_sampler(spec, worker), load_if_exists=False)
        created = True
        study.set_user_attr(SPEC_ATTR, {"identity": ident, "spec": spec.to_dict(), "base_config": base.to_dict()})
    except optuna.exceptions.DuplicatedStudyError:
        study = optuna.load_study(study_name=name, storage=storage, sampler=_sampler(spec, worker))
        created = False
        stored = _wait_for_attr(study, SPEC_ATTR)
        if stored["identity"] != ident:
            diff = [k for k in ident if stored["identity"].get(k) != ident[k]]
            raise SweepError(
                f"study {name!r} belongs to another sweep (differs in: {', '.join(diff)}); "
                "pass another --study or the same parameters, objectives, constraints, suites and base config"
            ) from None
        old_spec = SweepSpec.from_dict(stored["spec"])
        changed = [p.key for p in spec.params
                   if p.categorical(spec.search) != next(o for o in old_spec.params if o.key == p.key).categorical(spec.search)]
        if changed:
            raise SweepError(
                f"study {name!r}: the choices of {', '.join(changed)} differ from the stored sweep; optuna keeps one "
                "value space per categorical parameter, so start another --study to try other choices"
            ) from None
        study.set_user_attr(SPEC_ATTR, {**stored, "spec": spec.to_dict()})
    if spec.search == SearchMode.GRID and enqueue:
        enqueue_missing_grid(study, spec)
    return study, created


def _wait_for_attr(study: Any, key: str, timeout_s: float = 30.0) -> Any:
    # a study created by another process a moment ago may not carry its attributes yet
    deadline = time.monotonic() + timeout_s
    while True:
        attrs = study.user_attrs
        if key in attrs:
            return attrs[key]
        if time.monotonic() > deadline:
            raise SweepError(f"study {study.study_name!r} has no {key!r}: it was not made by memwb sweep")
        time.sleep(0.2)


def _param_key(params: Mapping[str, Any]) -> str:
    return json.dumps({k: params[k] for k in sorted(params)}, sort_keys=True)


def enqueue_missing_grid(study: Any, spec: SweepSpec) -> int:
    """Enqueue every grid point that no trial holds (waiting, running, complete or pruned). Returns the count.

    Failed trials do not hold their point: resuming retries them. Run by the
    process that creates or resumes the study, before workers start.
    """
    from optuna.trial import TrialState

    held = set()
    for t in study.get_trials(deepcopy=False):
        if t.state == TrialState.FAIL:
            continue
        held.add(_param_key(t.system_attrs.get("fixed_params", t.params)))
    n = 0
    for point in grid_points(spec.params):
        if _param_key(point) not in held:
            study.enqueue_trial(point, skip_if_exists=False)
            n += 1
    return n


# --------------------------------------------------------------------------- trial evaluation


def _metric_refs(spec: SweepSpec) -> list[MetricRef]:
    return list(dict.fromkeys([*spec.objectives, *(c.metric for c in spec.constraints)]))


def evaluate_config(evaluator: SweepEvaluator, spec: SweepSpec, cfg: EngineConfig) -> tuple[TrialMetrics, bool, float]:
    """Evaluate ``cfg``; returns (metrics, writes replayed, seconds)."""
    ev = evaluator.evaluate(cfg)
    names = ["pass", "hit@k", "recall@k", "mrr", "ndcg@k", "violations", "leaks", "latency_p50_ms",
             "latency_p95_ms", "stored_memories", *(r.name for r in _metric_refs(spec))]
    return compute_metrics(ev.cases, names, per_query=spec.objectives), ev.replayed, ev.duration_s


def ensure_baseline(study: Any, evaluator: SweepEvaluator, spec: SweepSpec, base: EngineConfig) -> dict[str, Any]:
    """The base config's evaluation, computed once per study and kept in its user attributes."""
    attrs = study.user_attrs
    if BASELINE_ATTR in attrs:
        return attrs[BASELINE_ATTR]
    m, _, dur = evaluate_config(evaluator, spec, base)
    rec = {"metrics": m.to_dict(), "duration_s": dur, "config_hash": base.config_hash()}
    study.set_user_attr(BASELINE_ATTR, rec)
    return rec


def _finished_params(study: Any) -> dict[str, Any]:
    from optuna.trial import TrialState

    out = {}
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)):
        if "status" in t.user_attrs:
            out[_param_key(t.params)] = t
    return out


def run_trial(study: Any, trial: Any, spec: SweepSpec, base: EngineConfig, evaluator: SweepEvaluator) -> Any:
    """Suggest, evaluate and tell one trial; returns its FrozenTrial. Engine errors mark it FAIL and re-raise."""
    from optuna.trial import TrialState

    params = {p.key: p.suggest(trial, spec.search) for p in spec.params}
    started = time.perf_counter()
    if spec.search != SearchMode.GRID:
        prior = _finished_params(study).get(_param_key(params))
        if prior is not None:  # categorical spaces repeat: reuse instead of re-running
            for k, v in prior.user_attrs.items():
                trial.set_user_attr(k, v)
            trial.set_user_attr("duplicate_of", prior.number)
            trial.set_user_attr("duration_s", 0.0)
            if prior.state == TrialState.COMPLETE:
                return study.tell(trial, prior.values)
            return study.tell(trial, state=TrialState.PRUNED)
    try:
        applied = normalise_weights(params, base)
        cfg = base.with_overrides(applied)
    except ConfigError as e:
        trial.set_user_attr("status", "invalid")
        trial.set_user_attr("error", str(e))
        trial.set_user_attr("duration_s", time.perf_counter() - started)
        return study.tell(trial, state=TrialState.PRUNED)
    trial.set_user_attr("applied", applied)
    try:
        metrics, replayed, dur = evaluate_config(evaluator, spec, cfg)
    except BaseException as e:
        trial.set_user_attr("status", "fail")
        trial.set_user_attr("error", f"{type(e).__name__}: {e}")
        study.tell(trial, state=TrialState.FAIL)
        raise
    trial.set_user_attr("metrics", metrics.to_dict())
    trial.set_user_attr("replayed", replayed)
    trial.set_user_attr("duration_s", dur)
    values = [metrics.value(o) for o in spec.objectives]
    broken = [c.label for c in spec.constraints if not c.holds(metrics.value(c.metric))]
    if broken:
        trial.set_user_attr("status", "infeasible")
        trial.set_user_attr("violated", broken)
        return study.tell(trial, state=TrialState.PRUNED)
    if any(v is None for v in values):
        trial.set_user_attr("status", "undefined")
        trial.set_user_attr("error", "objective undefined: no scored query in its group")
        return study.tell(trial, state=TrialState.PRUNED)
    trial.set_user_attr("status", "complete")
    return study.tell(trial, values)


def _pop_waiting(study: Any, storage: Any) -> Any | None:
    """Atomically take one queued trial (WAITING -> RUNNING in the storage) or None when the queue is empty."""
    import optuna
    from optuna.exceptions import UpdateFinishedTrialError
    from optuna.trial import TrialState

    study_id = storage.get_study_id_from_name(study.study_name)
    for t in storage.get_all_trials(study_id, deepcopy=False, states=(TrialState.WAITING,)):
        try:
            if not _claim_waiting(storage, t._trial_id):
                continue
        except UpdateFinishedTrialError:
            continue
        return optuna.trial.Trial(study, t._trial_id)
    return None


def _claim_waiting(storage: Any, trial_id: int) -> bool:
    """Move one queued trial WAITING -> RUNNING; True when this process won it.

    optuna's ``set_trial_state_values`` reads the state, then writes it: SQLite ignores
    its ``SELECT ... FOR UPDATE``, so two workers could both claim one queued grid point
    and run it twice. One conditional UPDATE is atomic on every SQL backend; other
    storages (in memory: one process) keep optuna's own call.
    """
    import datetime as dt

    import optuna
    import sqlalchemy as sa
    from optuna.storages._rdb import models
    from optuna.trial import TrialState

    if not isinstance(storage, optuna.storages.RDBStorage):
        return bool(storage.set_trial_state_values(trial_id, state=TrialState.RUNNING))
    table = models.TrialModel.__table__
    started = dt.datetime.now(dt.UTC).replace(tzinfo=None)  # optuna stores naive UTC
    stmt = (sa.update(table)
            .where(table.c.trial_id == trial_id, table.c.state == TrialState.WAITING)
            .values(state=TrialState.RUNNING, datetime_start=started))
    with storage.engine.begin() as conn:
        return conn.execute(stmt).rowcount == 1


def run_trials(
    study: Any, storage: Any, spec: SweepSpec, base: EngineConfig, evaluator: SweepEvaluator, target: int,
    *, on_trial: Callable[[Any], None] | None = None, stop: threading.Event | None = None,
) -> int:
    """Worker loop: run trials until the study holds ``target`` finished ones (grid: or the queue is empty).

    Returns how many trials this call ran. ``on_trial(frozen_trial)`` after each.
    """
    from optuna.trial import TrialState

    done_states = (TrialState.COMPLETE, TrialState.PRUNED)
    ran = failures = 0
    while stop is None or not stop.is_set():
        if spec.search == SearchMode.GRID:
            if count_trials(study, done_states + (TrialState.RUNNING,)) >= target:
                break
            trial = _pop_waiting(study, storage)
            if trial is None:
                break
        else:
            if count_trials(study, done_states + (TrialState.RUNNING,)) >= target:
                break
            trial = study.ask()
        try:
            ft = run_trial(study, trial, spec, base, evaluator)
            failures = 0
        except Exception as e:
            failures += 1
            try:  # a trial that failed before its own bookkeeping must not stay RUNNING
                study.tell(trial, state=TrialState.FAIL)
            except Exception:  # noqa: BLE001 - already told FAIL by run_trial
                pass
            _log.warning("sweep %s: trial #%d failed: %s: %s", study.study_name, trial.number, type(e).__name__, e)
            if failures >= MAX_CONSECUTIVE_FAILURES:
                raise SweepError(f"{failures} consecutive trials failed; last: {type(e).__name__}: {e}") from e
            continue
        ran += 1
        if on_trial is not None:
            on_trial(ft)
    return ran


# --------------------------------------------------------------------------- embeddings shared by workers


class TableEmbedder:
    """Embedder serving vectors from a table ``{(kind, text): vector}`` (``kind``: ``d`` document,
    ``q`` query); misses go to the process-wide cached embedder (loaded lazily by ``load``) and
    are added to the table.

    The parent's table is handed to worker processes, so each text is embedded
    once per embedding version across every trial of every process.
    ``baseline``: the model's 'unrelated' cosine for :meth:`rescale`.
    """

    def __init__(self, version: str, dim: int, table: dict[tuple[str, str], np.ndarray], baseline: float,
                 load: Callable[[], Any] | None = None, inner: Any | None = None) -> None:
        self.version = version
        self.dim = dim
        self.table = table
        self.baseline = baseline
        self._load = load
        self._inner = inner
        self.misses = 0

    def _model(self) -> Any:
        if self._inner is None:
            if self._load is None:
                raise SweepError("text missing from the embedding table and no model to compute it")
            self._inner = self._load()
            if self._inner.version != self.version:
                raise SweepError(f"embedding table is for {self.version}, the model is {self._inner.version}")
        return self._inner

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        missing = sorted({t for t in texts if ("d", t) not in self.table})
        if missing:
            self.misses += len(missing)
            for t, v in zip(missing, self._model().embed_documents(missing), strict=True):
                self.table[("d", t)] = np.asarray(v, dtype=np.float32)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.table[("d", t)] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        if ("q", text) not in self.table:
            self.misses += 1
            self.table[("q", text)] = np.asarray(self._model().embed_query(text), dtype=np.float32)
        return self.table[("q", text)]

    def rescale(self, cos: float) -> float:
        """(cos - baseline) / (1 - baseline) clipped to [0, 1] (see ``embedding.rescale_similarity``)."""
        from ..embedding import rescale_similarity

        return rescale_similarity(cos, self.baseline)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the table as ``.npz`` (keys as JSON, vectors as one float32 matrix)."""
        keys = list(self.table)
        mat = np.stack([self.table[k] for k in keys]) if keys else np.zeros((0, self.dim), dtype=np.float32)
        np.savez(path, keys=np.asarray(json.dumps(keys)), vectors=mat,
                 meta=np.asarray(json.dumps({"version": self.version, "dim": self.dim})))

    @staticmethod
    def load_table(path: str | os.PathLike[str]) -> tuple[dict[tuple[str, str], np.ndarray], dict[str, Any]]:
        with np.load(path) as z:
            keys = [tuple(k) for k in json.loads(str(z["keys"]))]
            vecs = z["vectors"]
            meta = json.loads(str(z["meta"]))
        return {k: vecs[i] for i, k in enumerate(keys)}, meta  # type: ignore[misc]


def sweep_embedder(base: EngineConfig, table: dict[tuple[str, str], np.ndarray] | None = None,
                   meta: Mapping[str, Any] | None = None) -> TableEmbedder:
    """The embedder of a sweep: a :class:`TableEmbedder` over the process-wide cached embedder
    (``make_embedder``). Without ``table`` the model loads now (parent); with it only on a miss (workers)."""
    from ..embedding import make_embedder

    def load() -> Any:
        return make_embedder(base.embedding)

    baseline = configured_baseline(base)
    if table is None:
        inner = load()
        return TableEmbedder(inner.version, inner.dim, {}, baseline, inner=inner)
    assert meta is not None
    return TableEmbedder(str(meta["version"]), int(meta["dim"]), table, baseline, load=load)


# --------------------------------------------------------------------------- warehouse


def trial_record(ft: Any) -> dict[str, Any]:
    """What the warehouse stores of one trial: params, and metrics with status, objective values, applied overrides."""
    ua = ft.user_attrs
    metrics = dict(ua.get("metrics") or {})
    metrics.update({
        "status": ua.get("status", ft.state.name.lower()),
        "values": list(ft.values) if ft.values is not None else None,
        "applied": ua.get("applied"),
        "replayed": ua.get("replayed"),
        "violated": ua.get("violated"),
        "error": ua.get("error"),
        "duplicate_of": ua.get("duplicate_of"),
    })
    return {"params": dict(ft.params), "metrics": metrics, "duration_s": ua.get("duration_s"),
            "state": metrics["status"], "created_at": ft.datetime_complete or ft.datetime_start}


def save_trial(warehouse: Any, sweep_id: str, ft: Any) -> None:
    """Store one finished trial in the warehouse's ``sweep_trials`` table."""
    from datetime import UTC

    r = trial_record(ft)
    created = r["created_at"]
    if created is not None and created.tzinfo is None:
        created = created.astimezone(UTC)
    warehouse.save_sweep_trial(sweep_id, ft.number, params=r["params"], metrics=r["metrics"],
                               duration_s=r["duration_s"], state=r["state"], created_at=created)


def sync_warehouse(study: Any, warehouse: Any) -> int:
    """Store the baseline (trial number -1) and every finished trial of ``study``; idempotent. Returns the count."""
    baseline = study.user_attrs.get(BASELINE_ATTR)
    n = 0
    if baseline is not None:
        warehouse.save_sweep_trial(study.study_name, BASELINE_TRIAL_NUMBER, params={},
                                   metrics={**baseline["metrics"], "status": "baseline"},
                                   duration_s=baseline.get("duration_s"), state="baseline")
        n += 1
    for ft in study.get_trials(deepcopy=False):
        if ft.state.is_finished():
            save_trial(warehouse, study.study_name, ft)
            n += 1
    from .generalization import HOLDOUT_ATTR, HOLDOUT_TRIAL_NUMBER

    holdout = study.user_attrs.get(HOLDOUT_ATTR)
    if holdout is not None:
        warehouse.save_sweep_trial(study.study_name, HOLDOUT_TRIAL_NUMBER, params=holdout.get("params") or {},
                                   metrics={"generalization": holdout, "status": "holdout"}, duration_s=None,
                                   state="holdout")
        n += 1
    return n


# --------------------------------------------------------------------------- the sweep


@dataclass(frozen=True)
class SweepRun:
    """Outcome of :func:`run_sweep`: the study name (= sweep id), its storage URL (None = in memory),
    trials run by this call, the target trial count and the study itself (for reports)."""

    study_name: str
    storage: str | None
    ran: int
    target: int
    created: bool
    replays: int
    seconds: float
    study: Any
    failed: int = 0
    generalization: Any = None  #: :class:`~memory_engine.evaluation.generalization.Generalization` with a test split


def _target(spec: SweepSpec, trials: int | None) -> int:
    if spec.search == SearchMode.GRID:
        return min(spec.grid_size, trials) if trials else spec.grid_size
    return trials if trials else 20


def run_sweep(
    spec: SweepSpec,
    base: EngineConfig | None = None,
    *,
    suites: Sequence[ResolvedSuite] | None = None,
    trials: int | None = None,
    study_name: str | None = None,
    storage: str | None = None,
    jobs: int = 1,
    warehouse: Any | None = None,
    progress: Callable[[int, int], None] | None = None,
    max_spaces: int = 2,
    test_suites: Sequence[ResolvedSuite] | None = None,
    split_record: Mapping[str, Any] | None = None,
) -> SweepRun:
    """Run (or resume, or extend) a sweep.

    ``trials``: total trials the study should hold (grid default: the grid
    size; random/TPE default: 20). ``storage``: optuna RDB URL or None (in
    memory; ``jobs`` must then be 1). ``jobs``: worker processes. ``warehouse``:
    a :class:`~memory_engine.observability.warehouse.Warehouse` receiving every
    trial. ``progress(done, target)`` after each finished trial (polled with jobs > 1).
    ``suites`` are the dev split when ``test_suites`` are given: the sweep never
    sees the test cases; afterwards the chosen config and the base config are
    evaluated on them (:func:`~memory_engine.evaluation.generalization.evaluate_generalization`)
    and the result is returned, kept in the study and stored in the warehouse.
    Raises SweepError (study mismatch, jobs without storage), ConfigError, SuiteError.
    """
    t0 = time.perf_counter()
    base = base or EngineConfig()
    if jobs < 1:
        raise SweepError(f"jobs must be >= 1, got {jobs}")
    if jobs > 1 and storage is None:
        raise SweepError("jobs > 1 needs a shared --storage (e.g. sqlite:///sweeps.sqlite3)")
    suites = list(suites) if suites is not None else load_suites(spec.suite_paths)
    store = open_storage(storage)
    study, created = open_study(spec, base, suites, storage=store, study_name=study_name)
    target = _target(spec, trials)
    from optuna.trial import TrialState

    def done() -> int:
        return count_trials(study, (TrialState.COMPLETE, TrialState.PRUNED))

    embedder = sweep_embedder(base)
    evaluator = SweepEvaluator(suites, embedder=embedder, max_spaces=max_spaces)
    ran = 0
    try:
        ensure_baseline(study, evaluator, spec, base)
        if jobs == 1:
            def on_trial(ft: Any) -> None:
                if warehouse is not None:
                    save_trial(warehouse, study.study_name, ft)
                if progress is not None:
                    progress(done(), target)

            if progress is not None:
                progress(done(), target)
            ran = run_trials(study, store, spec, base, evaluator, target, on_trial=on_trial)
        else:
            ran = _run_parallel(spec, base, suites, study.study_name, storage or "", target, jobs, embedder,
                                max_spaces, lambda: progress(done(), target) if progress else None)
    finally:
        evaluator.close()
    gen = None
    if test_suites:
        from .generalization import evaluate_generalization

        gen = evaluate_generalization(study, spec, base, test_suites, split_record=split_record, embedder=embedder)
    if warehouse is not None:
        sync_warehouse(study, warehouse)
    failed = count_trials(study, (TrialState.FAIL,))
    return SweepRun(study.study_name, storage, ran, target, created, evaluator.replays,
                    time.perf_counter() - t0, study, failed, gen)


def _run_parallel(spec: SweepSpec, base: EngineConfig, suites: Sequence[ResolvedSuite], study_name: str,
                  storage: str, target: int, jobs: int, embedder: Any, max_spaces: int,
                  tick: Callable[[], None]) -> int:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, wait

    with tempfile.TemporaryDirectory(prefix="memwb-sweep-") as tmp:
        table_path = str(Path(tmp) / "embeddings.npz")
        embedder.save(table_path)
        # the parent's resolved suites (frozen dataclasses) travel pickled: workers replay exactly them
        args = [(spec.to_dict(), base.to_dict(), list(suites), study_name, storage, target, i + 1, table_path,
                 max_spaces)
                for i in range(jobs)]
        with _neutral_main(), ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
            futs = [pool.submit(_worker_main, *a) for a in args]
            while True:
                finished, pending = wait(futs, timeout=0.5)
                tick()
                if not pending:
                    break
            return sum(f.result() for f in futs)


@contextlib.contextmanager
def _neutral_main() -> Iterator[None]:
    """Spawned workers re-run the parent's ``__main__`` file. Inside Streamlit (the app's
    sweep page, or AppTest in a test session) ``__main__`` is a page script that would
    open the workspace engine a second time; give the children an empty main instead."""
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def _worker_main(spec_d: dict[str, Any], base_d: dict[str, Any], suites: list[ResolvedSuite], study_name: str,
                 storage: str, target: int, worker: int, table_path: str, max_spaces: int) -> int:
    """Entry point of a worker process: open the study, run trials, return how many it ran."""
    spec = SweepSpec.from_dict(spec_d)
    base = EngineConfig.model_validate(base_d)
    table, meta = TableEmbedder.load_table(table_path)
    store = open_storage(storage)
    study, _ = open_study(spec, base, suites, storage=store, study_name=study_name, worker=worker, enqueue=False)
    with SweepEvaluator(suites, embedder=sweep_embedder(base, table, meta), max_spaces=max_spaces) as ev:
        return run_trials(study, store, spec, base, ev, target)


# --------------------------------------------------------------------------- results


def load_sweep(study_name: str, storage: str) -> tuple[Any, SweepSpec, EngineConfig]:
    """An existing sweep's study, spec and base config (for reports and the app). Raises SweepError."""
    import optuna

    try:
        study = optuna.load_study(study_name=study_name, storage=open_storage(storage))
    except KeyError as e:
        raise SweepError(f"no sweep {study_name!r} in {storage}") from e
    stored = study.user_attrs.get(SPEC_ATTR)
    if stored is None:
        raise SweepError(f"study {study_name!r} was not made by memwb sweep")
    return study, SweepSpec.from_dict(stored["spec"]), EngineConfig.model_validate(stored["base_config"])


def export_best(study: Any, base: EngineConfig, path: str | os.PathLike[str]) -> tuple[EngineConfig, Any]:
    """Write the best config as TOML loadable by ``--config``; returns (config, trial). The file is meant to be
    shared and committed, so it carries behaviour only: no ``workspace`` path of this machine (the loader's
    default, or ``--workspace`` / ``MEMWB_HOME``, applies where it is used)."""
    import tomli_w

    cfg, ft = best_config(study, base)
    header = (f"# memwb sweep {study.study_name}: best trial #{ft.number}, "
              f"objective(s) {', '.join(f'{v:.6g}' for v in ft.values)}\n")
    body = tomllib.loads(cfg.to_toml())
    body.pop("workspace", None)
    Path(path).write_text(header + tomli_w.dumps(body), encoding="utf-8")
    return cfg, ft


__all__ = [
    "BASELINE_TRIAL_NUMBER", "SweepRun", "SweepSpec", "TableEmbedder", "best_config", "best_trials",
    "default_storage_url", "default_study_name", "enqueue_missing_grid", "ensure_baseline", "evaluate_config",
    "export_best", "load_sweep", "open_storage", "open_study", "run_sweep", "run_trial", "run_trials",
    "save_trial", "sweep_embedder", "sync_warehouse", "trial_record",
]
