"""Lifecycle rules as pure decision functions (SEED_DIGEST section 5).

``decide(record, now, policy)`` says what the lifecycle job does with one
active memory and why; ``eviction_plan(records, now, policy)`` picks what a
full pool gives up. Nothing here reads a clock or touches a store: the runner
(:mod:`memory_engine.lifecycle.runner`) applies the decisions.

Rules, first match wins:

1. ``permanent`` flag -> keep (seed 003: "unless marked permanent").
2. explicit ``expires_at`` reached -> expire.
3. per-kind TTL since the last change (``updated_at``; restating a preference
   touches it): preferences 30 d, constraints 90 d, relationships permanent
   (seed 001); other long-term memories ``long_term_ttl_days`` (seed 003: 90 d,
   off by default).
4. no hit for ``archive_after_days`` (90 d) and importance below
   ``archive_importance_below`` (0.7) -> archive (seed 000). Memories that
   never decay (explicit preferences, constraints, relationships, and types
   whose half-life is None: procedural, facts; seed 002) are exempt: they leave
   only through their TTL or an explicit change.

Capacity eviction (seed 002): when a user's active pool holds more than
``max_memories_per_user``, the lowest ``importance x recency`` go, recency =
``exp(-days since last hit / tau)`` (seed 000's recency with tau in days);
permanent memories and relationships are never evicted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..config import EngineConfig
from ..errors import ConfigError
from ..models import MemoryRecord, MemoryType
from ..retrieve.fusion import DAY, recency
from ..write import rules

__all__ = [
    "Action",
    "Decision",
    "LifecyclePolicy",
    "RecordKind",
    "decide",
    "eviction_plan",
    "record_kind",
    "retention_score",
]


class Action(StrEnum):
    """What the lifecycle job does with a memory."""

    KEEP = "keep"
    ARCHIVE = "archive"  # cold, not retrieved; a later keyword hit re-activates it (seed 000)
    EXPIRE = "expire"  # TTL reached: archived for good (compliance only, seed 003)
    EVICT = "evict"  # capacity: archived for good (seed 002)
    REACTIVATE = "reactivate"


class RecordKind(StrEnum):
    """Lifecycle class of a memory, which picks its TTL (seed 001)."""

    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    RELATIONSHIP = "relationship"
    PROCEDURAL = "procedural"
    OTHER = "other"


_KEY_KINDS = (
    (("preference", "preferences", "pref"), RecordKind.PREFERENCE),
    (("constraint", "constraints"), RecordKind.CONSTRAINT),
    (("relationship", "relationships", "relation", "relations"), RecordKind.RELATIONSHIP),
)


def record_kind(rec: MemoryRecord) -> RecordKind:
    """Lifecycle kind of ``rec``.

    ``metadata._kind`` wins (the write pipeline marks constraints with
    ``constraint``); then the first segment of a structured fact key
    (``preference.*``, ``constraint.*``, ``relationship.*``); procedural
    memories are procedural; a semantic memory with a preference marker
    (喜欢/偏好/prefer/like..., seed 000) is an explicit preference.
    """
    kind = str(rec.metadata.get("_kind") or "").lower()
    for names, k in _KEY_KINDS:
        if kind in names:
            return k
    if rec.fact_key:
        head = rec.fact_key.lower().replace("/", ".").replace("_", ".").split(".", 1)[0]
        for names, k in _KEY_KINDS:
            if head in names:
                return k
    if rec.memory_type == MemoryType.PROCEDURAL:
        return RecordKind.PROCEDURAL
    if rec.memory_type == MemoryType.SEMANTIC and rules.PREFERENCE.search(rec.content or ""):
        return RecordKind.PREFERENCE
    return RecordKind.OTHER


@dataclass(frozen=True)
class LifecyclePolicy:
    """Every number of the lifecycle rules, in days unless named otherwise.

    ``ttl_days`` maps a :class:`RecordKind` to its TTL (None = never expires);
    ``half_life_days`` maps a memory type to its decay half-life (None = never
    decays, which also exempts it from the no-hit archive rule).
    """

    archive_after_days: float = 90.0
    archive_importance_below: float = 0.7
    ttl_days: Mapping[RecordKind, float | None] = field(
        default_factory=lambda: {
            RecordKind.PREFERENCE: 30.0,
            RecordKind.CONSTRAINT: 90.0,
            RecordKind.RELATIONSHIP: None,
            RecordKind.PROCEDURAL: None,
            RecordKind.OTHER: None,
        }
    )
    half_life_days: Mapping[str, float | None] = field(
        default_factory=lambda: {"working": 1.0, "episodic": 30.0, "semantic": 90.0, "fact": None, "procedural": None}
    )
    max_memories_per_user: int = 10_000
    eviction_tau_days: float = 7.0

    def __post_init__(self) -> None:
        if self.archive_after_days <= 0:
            raise ConfigError("archive_after_days must be > 0")
        if self.max_memories_per_user < 1:
            raise ConfigError("max_memories_per_user must be >= 1")
        if self.eviction_tau_days <= 0:
            raise ConfigError("eviction_tau_days must be > 0")
        for k, v in self.ttl_days.items():
            if v is not None and v <= 0:
                raise ConfigError(f"ttl of {k} must be > 0 days or None")

    @classmethod
    def from_config(cls, cfg: EngineConfig, **overrides: Any) -> LifecyclePolicy:
        """Policy from ``cfg.lifecycle`` (+ ``retrieval.half_life_days`` and
        ``retrieval.tau_days``); keyword overrides win (e.g. ``relationship_ttl_days``)."""
        lc = cfg.lifecycle
        hl = cfg.retrieval.half_life_days
        ttl = {
            RecordKind.PREFERENCE: lc.preference_ttl_days,
            RecordKind.CONSTRAINT: lc.constraint_ttl_days,
            RecordKind.RELATIONSHIP: lc.relationship_ttl_days,
            RecordKind.PROCEDURAL: None,
            RecordKind.OTHER: lc.long_term_ttl_days,
        }
        if "relationship_ttl_days" in overrides:
            ttl[RecordKind.RELATIONSHIP] = overrides.pop("relationship_ttl_days")
        kw: dict[str, Any] = dict(
            archive_after_days=lc.archive_after_days,
            archive_importance_below=lc.archive_importance_below,
            ttl_days=ttl,
            half_life_days={t: getattr(hl, t) for t in type(hl).model_fields},
            max_memories_per_user=lc.max_memories_per_user,
            eviction_tau_days=getattr(lc, "eviction_tau_days", cfg.retrieval.tau_days),
        )
        kw.update(overrides)
        return cls(**kw)


@dataclass(frozen=True)
class Decision:
    """What to do with one memory: ``action`` and a short machine-readable ``reason``
    (``permanent``, ``expires_at``, ``ttl:preference:30d``, ``no_hit:120d,importance:0.50``,
    ``capacity:10000,score:0.0123``, ``keyword_hit:0.67``)."""

    memory_id: str
    action: Action
    reason: str


def _never_decays(rec: MemoryRecord, kind: RecordKind, policy: LifecyclePolicy) -> bool:
    if kind in (RecordKind.PREFERENCE, RecordKind.CONSTRAINT, RecordKind.RELATIONSHIP, RecordKind.PROCEDURAL):
        return True
    return policy.half_life_days.get(rec.memory_type.value) is None


def decide(rec: MemoryRecord, now: float, policy: LifecyclePolicy) -> Decision:
    """Lifecycle decision for one active (not archived) memory at ``now``
    (epoch seconds). Pure; see the module docstring for the rule order."""
    if rec.permanent:
        return Decision(rec.id, Action.KEEP, "permanent")
    if rec.expires_at is not None and now >= rec.expires_at:
        return Decision(rec.id, Action.EXPIRE, "expires_at")
    kind = record_kind(rec)
    ttl = policy.ttl_days.get(kind)
    changed = rec.updated_at or rec.created_at
    if ttl is not None and now - changed >= ttl * DAY:
        return Decision(rec.id, Action.EXPIRE, f"ttl:{kind.value}:{ttl:g}d")
    if not _never_decays(rec, kind, policy):
        last_hit = rec.last_access_at or rec.created_at
        idle_days = (now - last_hit) / DAY
        if idle_days >= policy.archive_after_days and rec.importance < policy.archive_importance_below:
            return Decision(rec.id, Action.ARCHIVE, f"no_hit:{idle_days:.0f}d,importance:{rec.importance:.2f}")
    return Decision(rec.id, Action.KEEP, "")


def retention_score(rec: MemoryRecord, now: float, tau_days: float) -> float:
    """importance x exp(-days since last hit / tau) in [0, 1] (seed 002 eviction order,
    seed 000 recency). Last hit = ``last_access_at`` or ``created_at``."""
    last_hit = rec.last_access_at or rec.created_at
    return max(0.0, rec.importance) * recency(now - last_hit, tau_days)


def eviction_plan(records: Iterable[MemoryRecord], now: float, policy: LifecyclePolicy) -> list[Decision]:
    """Evictions that bring one user's active pool down to ``max_memories_per_user``.

    ``records`` are the pool's active memories after this run's archive/expiry
    decisions. Permanent memories and relationships are never evicted (if they
    alone exceed the cap, the pool stays over it). Lowest retention score goes
    first; ties go to the oldest ``created_at``, then the id, so the plan is
    deterministic.
    """
    recs = list(records)
    excess = len(recs) - policy.max_memories_per_user
    if excess <= 0:
        return []
    evictable = [r for r in recs if not r.permanent and record_kind(r) != RecordKind.RELATIONSHIP]
    scored = sorted(evictable, key=lambda r: (retention_score(r, now, policy.eviction_tau_days), r.created_at, r.id))
    out = []
    for r in scored[:excess]:
        s = retention_score(r, now, policy.eviction_tau_days)
        out.append(Decision(r.id, Action.EVICT, f"capacity:{policy.max_memories_per_user},score:{s:.4g}"))
    return out
