"""Pure lifecycle rules (no store, no clock): hand-built records, simulated time."""

from __future__ import annotations

import math

import pytest

from memory_engine.config import EngineConfig
from memory_engine.lifecycle.policy import (
    Action,
    LifecyclePolicy,
    RecordKind,
    decide,
    eviction_plan,
    record_kind,
    retention_score,
)
from memory_engine.models import MemoryRecord, MemoryType

pytestmark = pytest.mark.unit
DAY = 86_400.0
NOW = 1_750_000_000.0


def rec(i: str = "a", *, content: str = "went hiking at Mount Tai with Alice", mtype: MemoryType = MemoryType.EPISODIC,
        age_days: float = 0.0, idle_days: float | None = None, importance: float = 0.5, **kw) -> MemoryRecord:
    created = NOW - age_days * DAY
    last = None if idle_days is None else NOW - idle_days * DAY
    return MemoryRecord(id=i, tenant_id="t", user_id="u", content=content, memory_type=mtype, importance=importance,
                        created_at=created, updated_at=created, last_access_at=last, **kw)


POL = LifecyclePolicy.from_config(EngineConfig())


def test_policy_defaults_come_from_config_and_seeds():
    assert POL.archive_after_days == 90 and POL.archive_importance_below == 0.7
    assert POL.ttl_days[RecordKind.PREFERENCE] == 30 and POL.ttl_days[RecordKind.CONSTRAINT] == 90
    assert POL.ttl_days[RecordKind.RELATIONSHIP] is None
    assert POL.half_life_days["procedural"] is None and POL.half_life_days["episodic"] == 30
    cfg = EngineConfig().with_overrides({"lifecycle.archive_after_days": 10, "lifecycle.preference_ttl_days": 5})
    p = LifecyclePolicy.from_config(cfg, max_memories_per_user=3)
    assert p.archive_after_days == 10 and p.ttl_days[RecordKind.PREFERENCE] == 5 and p.max_memories_per_user == 3
    with pytest.raises(ValueError):
        LifecyclePolicy(archive_after_days=0)


def test_record_kinds():
    assert record_kind(rec(metadata={"_kind": "constraint"}, content="不要推荐游戏")) == RecordKind.CONSTRAINT
    assert record_kind(rec(mtype=MemoryType.FACT, fact_key="preference.courier", content="SF")) == RecordKind.PREFERENCE
    assert record_kind(rec(mtype=MemoryType.FACT, fact_key="relationship.mother", content="Mary")) == RecordKind.RELATIONSHIP
    assert record_kind(rec(mtype=MemoryType.PROCEDURAL, content="first run tests then deploy")) == RecordKind.PROCEDURAL
    assert record_kind(rec(mtype=MemoryType.SEMANTIC, content="I prefer aisle seats")) == RecordKind.PREFERENCE
    assert record_kind(rec(mtype=MemoryType.SEMANTIC, content="我喜欢川菜")) == RecordKind.PREFERENCE
    assert record_kind(rec()) == RecordKind.OTHER


def test_archive_after_90_days_without_hit_when_importance_low():
    assert decide(rec(idle_days=89.9, age_days=200), NOW, POL).action == Action.KEEP
    d = decide(rec(idle_days=90, age_days=200), NOW, POL)
    assert d.action == Action.ARCHIVE and d.reason.startswith("no_hit:90d")
    # never accessed: the clock starts at creation
    assert decide(rec(age_days=91), NOW, POL).action == Action.ARCHIVE
    assert decide(rec(age_days=89), NOW, POL).action == Action.KEEP
    # importance at/above 0.7 stays
    assert decide(rec(idle_days=400, age_days=400, importance=0.7), NOW, POL).action == Action.KEEP


def test_never_decaying_memories_are_not_archived_for_inactivity():
    proc = rec(mtype=MemoryType.PROCEDURAL, content="first run tests then deploy", age_days=1000)
    assert decide(proc, NOW, POL).action == Action.KEEP
    fact = rec(mtype=MemoryType.FACT, fact_key="profile.city", content="Beijing", age_days=1000)
    assert decide(fact, NOW, POL).action == Action.KEEP


def test_per_type_expiry():
    pref = rec(mtype=MemoryType.SEMANTIC, content="I prefer aisle seats", importance=0.9)
    assert decide(pref, NOW, POL).action == Action.KEEP
    assert decide(rec(mtype=MemoryType.SEMANTIC, content="I prefer aisle seats", age_days=29.9), NOW, POL).action == Action.KEEP
    d = decide(rec(mtype=MemoryType.SEMANTIC, content="I prefer aisle seats", age_days=30), NOW, POL)
    assert (d.action, d.reason) == (Action.EXPIRE, "ttl:preference:30d")
    con = dict(metadata={"_kind": "constraint"}, content="don't recommend games", mtype=MemoryType.SEMANTIC)
    assert decide(rec(age_days=89, **con), NOW, POL).action == Action.KEEP
    assert decide(rec(age_days=90, **con), NOW, POL).reason == "ttl:constraint:90d"
    rel = rec(mtype=MemoryType.FACT, fact_key="relationship.mother", content="Mary", age_days=5000)
    assert decide(rel, NOW, POL).action == Action.KEEP
    # restating touches updated_at, which restarts the TTL
    restated = rec(mtype=MemoryType.SEMANTIC, content="I prefer aisle seats", age_days=60)
    restated = MemoryRecord(**{**restated.__dict__, "updated_at": NOW - 2 * DAY})
    assert decide(restated, NOW, POL).action == Action.KEEP


def test_permanent_and_explicit_expiry():
    assert decide(rec(age_days=500, permanent=True), NOW, POL).reason == "permanent"
    perm_pref = rec(mtype=MemoryType.SEMANTIC, content="I prefer aisle seats", age_days=500, permanent=True)
    assert decide(perm_pref, NOW, POL).action == Action.KEEP
    assert decide(rec(expires_at=NOW - 1), NOW, POL).reason == "expires_at"
    assert decide(rec(expires_at=NOW + 1), NOW, POL).action == Action.KEEP


def test_long_term_ttl_is_optional():
    pol = LifecyclePolicy.from_config(EngineConfig().with_overrides({"lifecycle.long_term_ttl_days": 90}))
    d = decide(rec(age_days=90, idle_days=1, importance=0.9), NOW, pol)
    assert (d.action, d.reason) == (Action.EXPIRE, "ttl:other:90d")


def test_retention_score_is_importance_times_recency():
    r = rec(importance=0.8, idle_days=7, age_days=10)
    assert retention_score(r, NOW, 7.0) == pytest.approx(0.8 * math.exp(-1))


def test_eviction_keeps_the_pool_at_capacity_by_importance_times_recency():
    pol = LifecyclePolicy.from_config(EngineConfig(), max_memories_per_user=3)
    pool = [
        rec("a", importance=0.9, idle_days=1),
        rec("b", importance=0.2, idle_days=1),  # low importance
        rec("c", importance=0.9, idle_days=60),  # stale
        rec("d", importance=0.6, idle_days=2),
        rec("e", importance=0.1, idle_days=100, permanent=True),  # never evicted
        rec("f", importance=0.1, idle_days=100, mtype=MemoryType.FACT, fact_key="relationship.boss", content="Bob"),
    ]
    plan = eviction_plan(pool, NOW, pol)
    assert [d.memory_id for d in plan] == ["c", "b", "d"]
    assert all(d.action == Action.EVICT and d.reason.startswith("capacity:3,score:") for d in plan)
    assert eviction_plan(pool[:3], NOW, pol) == []
