"""Memory health score 0..100 (SEED_DIGEST.md section 6, seed 001), as pure functions.

Inputs are plain rows so the engine (or a JSON export) can feed them:

* facts: mappings with ``key``, ``value``, ``updated_at`` (epoch seconds) and
  ``user`` (or ``user_id``);
* memories: mappings with ``user_id``, ``tenant_id``, ``memory_type``,
  ``status``, ``content``, ``embedding_version`` and ``fact_key``.

Components (each a share in [0, 1], shown beside the composite):

* freshness = 1 - stale share, stale = facts not updated for more than
  ``freshness_days`` (7) days at ``now``; alert when the stale share is above
  ``freshness_alert`` (15%);
* coverage = fill rate of the configured key attributes over every user
  (a (user, key) pair is filled when the user has a fact with a non-empty
  value for that key); alert below ``coverage_alert`` (95%);
* consistency = 1 - conflict rate, conflict = a fact key (per user) for which
  a current semantic memory about that key contradicts the current fact
  value (default test: the memory text does not contain the value);

composite = 100 x weighted mean of the available components, minus
penalties: ``ownerless_points`` per memory without user or tenant (capped at
``ownerless_cap``) and ``mixed_embedding_points`` when current memories use
more than one embedding version. Clipped to [0, 100]; below
``composite_alert`` (80) adds an alert. A component without data (no facts,
no key attributes configured) is left out and the weights renormalised.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import NotFoundError, ValidationError

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class HealthWeights:
    """Weights of the three components (equal by default; the seeds give none)."""

    freshness: float = 1.0
    coverage: float = 1.0
    consistency: float = 1.0


@dataclass(frozen=True)
class HealthComponent:
    """One component: ``score`` in [0, 1] (None = no data), the ``share`` the
    alert rule looks at (stale share, fill rate, conflict rate) with its
    ``numerator``/``denominator``, the ``threshold`` and whether it ``alert``s."""

    name: str
    score: float | None
    share: float | None
    numerator: int
    denominator: int
    threshold: float
    alert: bool
    weight: float


@dataclass(frozen=True)
class HealthPenalty:
    """Points subtracted from the composite, with the count behind them."""

    name: str
    points: float
    count: int
    detail: str = ""


@dataclass(frozen=True)
class HealthReport:
    """Composite 0..100 (None = no component had data), components, penalties, alert entries."""

    composite: float | None
    components: tuple[HealthComponent, ...]
    penalties: tuple[HealthPenalty, ...]
    alerts: tuple[str, ...]
    now: float
    extra: Mapping[str, Any] = field(default_factory=dict)

    def component(self, name: str) -> HealthComponent:
        for c in self.components:
            if c.name == name:
                return c
        raise NotFoundError(name)


def _norm(v: Any) -> str:
    return " ".join(str(v).casefold().split())


def value_missing_from_text(content: str, value: Any) -> bool:
    """Default contradiction test: the memory text does not mention the fact value
    (case- and whitespace-insensitive substring). Crude on purpose; pass your
    own ``contradicts`` (e.g. an NLI model) for anything finer."""
    return _norm(value) not in _norm(content)


def freshness(facts: Sequence[Mapping[str, Any]], *, now: float, days: float = 7.0, alert_above: float = 0.15,
              weight: float = 1.0) -> HealthComponent:  # fmt: skip
    """Freshness component: stale = ``now - updated_at > days`` (seconds arithmetic)."""
    n = len(facts)
    stale = sum(1 for f in facts if now - float(f.get("updated_at") or 0.0) > days * SECONDS_PER_DAY)
    share = stale / n if n else None
    return HealthComponent(
        "freshness", None if share is None else 1.0 - share, share, stale, n, alert_above,
        share is not None and share > alert_above, weight,
    )  # fmt: skip


def _user(row: Mapping[str, Any]) -> str | None:
    return row.get("user") if row.get("user") is not None else row.get("user_id")


def coverage(
    facts: Sequence[Mapping[str, Any]],
    users: Iterable[str],
    key_attributes: Sequence[str],
    *,
    alert_below: float = 0.95,
    weight: float = 1.0,
) -> HealthComponent:
    """Coverage component: filled (user, key) pairs / (users x key attributes)."""
    users = sorted(set(u for u in users if u))
    filled = {
        (_user(f), f.get("key")) for f in facts if f.get("value") not in (None, "", [], {}) and _user(f)
    }
    den = len(users) * len(key_attributes)
    num = sum(1 for u in users for k in key_attributes if (u, k) in filled)
    share = num / den if den else None
    return HealthComponent(
        "coverage", share, share, num, den, alert_below, share is not None and share < alert_below, weight
    )


def consistency(
    facts: Sequence[Mapping[str, Any]],
    memories: Sequence[Mapping[str, Any]],
    *,
    contradicts: Callable[[str, Any], bool] = value_missing_from_text,
    alert_above: float = 0.0,
    weight: float = 1.0,
) -> HealthComponent:
    """Consistency component: share of (user, fact key) whose current fact value
    is contradicted by a current semantic memory with that ``fact_key``.

    The current fact of a key is the one with the latest ``updated_at``.
    ``alert_above``: conflict rate that raises an alert (default: any).
    """
    current: dict[tuple[Any, Any], Mapping[str, Any]] = {}
    for f in facts:
        k = (_user(f), f.get("key"))
        if k not in current or float(f.get("updated_at") or 0) >= float(current[k].get("updated_at") or 0):
            current[k] = f
    semantic: dict[tuple[Any, Any], list[str]] = {}
    for m in memories:
        if m.get("memory_type") == "semantic" and m.get("status", "current") == "current" and m.get("fact_key"):
            semantic.setdefault((m.get("user_id"), m.get("fact_key")), []).append(str(m.get("content") or ""))
    n = len(current)
    conflicts = sum(
        1 for k, f in current.items() if any(contradicts(text, f.get("value")) for text in semantic.get(k, ()))
    )
    rate = conflicts / n if n else None
    return HealthComponent(
        "consistency", None if rate is None else 1.0 - rate, rate, conflicts, n, alert_above,
        rate is not None and rate > alert_above, weight,
    )  # fmt: skip


def health_report(
    memories: Sequence[Mapping[str, Any]],
    facts: Sequence[Mapping[str, Any]],
    *,
    now: float,
    key_attributes: Sequence[str] = (),
    weights: HealthWeights = HealthWeights(),
    freshness_days: float = 7.0,
    freshness_alert: float = 0.15,
    coverage_alert: float = 0.95,
    consistency_alert: float = 0.0,
    composite_alert: float = 80.0,
    ownerless_points: float = 5.0,
    ownerless_cap: float = 20.0,
    mixed_embedding_points: float = 10.0,
    contradicts: Callable[[str, Any], bool] = value_missing_from_text,
) -> HealthReport:
    """Compute the health report (pure). ``now`` in epoch seconds.

    Raises ValidationError for negative weights or all-zero weights.
    """
    w = (weights.freshness, weights.coverage, weights.consistency)
    if min(w) < 0 or sum(w) == 0:
        raise ValidationError(f"health weights must be >= 0 and not all zero, got {w}", field="weights")
    users = {str(m["user_id"]) for m in memories if m.get("user_id")} | {str(_user(f)) for f in facts if _user(f)}
    comps = (
        freshness(facts, now=now, days=freshness_days, alert_above=freshness_alert, weight=weights.freshness),
        coverage(facts, users, key_attributes, alert_below=coverage_alert, weight=weights.coverage),
        consistency(facts, memories, contradicts=contradicts, alert_above=consistency_alert, weight=weights.consistency),
    )
    scored = [(c.score, c.weight) for c in comps if c.score is not None and c.weight > 0]
    penalties: list[HealthPenalty] = []
    ownerless = sum(1 for m in memories if not m.get("user_id") or not m.get("tenant_id"))
    if ownerless:
        penalties.append(
            HealthPenalty("ownerless", min(ownerless_cap, ownerless_points * ownerless), ownerless,
                          f"{ownerless} memories without user_id or tenant_id")  # fmt: skip
        )
    versions = Counter(
        m.get("embedding_version") or "" for m in memories if m.get("status", "current") == "current"
    )
    if len(versions) > 1:
        majority, n_major = versions.most_common(1)[0]
        off = sum(versions.values()) - n_major
        penalties.append(
            HealthPenalty("mixed_embedding_versions", mixed_embedding_points, off,
                          f"{len(versions)} versions; {off} memories not on {majority!r}")  # fmt: skip
        )
    composite: float | None = None
    if scored:
        base = 100.0 * sum(s * wt for s, wt in scored) / sum(wt for _, wt in scored)
        composite = max(0.0, min(100.0, base - sum(p.points for p in penalties)))
    alerts = [
        f"{c.name}: {c.share:.1%} ({c.numerator}/{c.denominator}) vs threshold {c.threshold:.0%}"
        for c in comps
        if c.alert and c.share is not None
    ]
    alerts += [f"penalty {p.name}: -{p.points:g} ({p.detail})" for p in penalties]
    if composite is not None and composite < composite_alert:
        alerts.insert(0, f"composite {composite:.1f} below {composite_alert:g}: clean-up advised")
    return HealthReport(composite, comps, tuple(penalties), tuple(alerts), now,
                        extra={"users": len(users), "memories": len(memories), "facts": len(facts)})  # fmt: skip


def health_report_for(
    memories: Sequence[Mapping[str, Any]],
    facts: Sequence[Mapping[str, Any]],
    section: Any,
    *,
    now: float,
    key_attributes: Sequence[str] | None = None,
) -> HealthReport:
    """:func:`health_report` weighted and thresholded by a ``HealthSection``
    (``config.health``): the one way the engine, ``memwb health`` and the app's
    Health page score a store, so they agree. ``key_attributes`` overrides
    ``section.key_attributes``; ``now`` is epoch seconds."""
    keys = section.key_attributes if key_attributes is None else key_attributes
    return health_report(
        memories, facts, now=now, key_attributes=tuple(keys),
        weights=HealthWeights(section.weight_freshness, section.weight_coverage, section.weight_consistency),
        freshness_days=section.freshness_days, freshness_alert=section.freshness_alert,
        coverage_alert=section.coverage_alert, composite_alert=section.composite_alert,
    )  # fmt: skip


def save_health_report(wh: Any, report: HealthReport) -> None:
    """Append a report (and its alert entries) to the warehouse ``health_reports`` table."""
    from dataclasses import asdict
    from datetime import UTC, datetime

    import orjson

    wh.execute(
        "INSERT INTO health_reports VALUES (?, ?, ?, ?)",
        [
            datetime.fromtimestamp(report.now, tz=UTC).replace(tzinfo=None),
            report.composite,
            orjson.dumps(asdict(report), default=str).decode(),
            orjson.dumps(list(report.alerts)).decode(),
        ],
    )
