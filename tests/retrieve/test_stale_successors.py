"""A present value told by its onset ('first week at ByteDance done') succeeds the slot a kept memory fills
('I work at Deloitte') for a present-tense question (retrieval.stale_successor_lift, write/changes.successor)."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import EngineConfig, MemoryEngine
from memory_engine.retrieve.answers import word_pattern
from memory_engine.write.changes import successor

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
ONSET = word_pattern(EngineConfig().retrieval.successor_onset_words)


@pytest.mark.parametrize("old,new,ok", [
    ("I work at Deloitte as an auditor", "first week at ByteDance done, the new team is great", True),
    ("I live in Munich with two flatmates", "finally settled in Berlin after the relocation", True),
    ("I'm a backend dev at Shopify", "first week at Wealthsimple done", True),  # a stem is no prefix: 'shopifi'
    ("I live in Chengdu", "my office is in Shenzhen, a new building", False),  # home vs office
    ("I work at Stripe", "my sister works at Datadog now", False),  # someone else's job
    ("I work at Alibaba", "had dinner at Nobu with friends", False),  # no change, start or onset
    ("I play tennis at the Riverside club", "I also started climbing at Movement gym", False),  # a second hobby
])
def test_successor_rule(old, new, ok):
    assert (successor(old, new, ONSET) is not None) is ok


@pytest.fixture(scope="module")
def engine():
    eng = MemoryEngine.in_memory(EngineConfig().with_overrides({
        "tracing.enabled": False, "retrieval.touch_on_hit": False, "retrieval.stale_successor_lift": 1.0}))
    yield eng
    eng.close()


def test_the_new_job_surfaces_and_the_old_one_stays_for_the_past(engine):
    u = "job"
    old = engine.add("I work at Deloitte as an auditor, busy season is brutal", user_id=u, session_id="s1", now=T0)
    new = engine.add("first week at ByteDance done, the new team is great", user_id=u, session_id="s2",
                     now=T0 + timedelta(days=60))
    later = T0 + timedelta(days=65)
    assert [h.memory_id for h in engine.retrieve("where do I work now?", user_id=u, top_k=1, now=later).hits] == [
        new.memory_id]
    assert engine.retrieve("where did I work before?", user_id=u, top_k=1, now=later).hits[0].memory_id == old.memory_id


def test_home_and_office_both_stay(engine):
    u = "home"
    home = engine.add("I live in Chengdu, near the river", user_id=u, session_id="s1", now=T0)
    office = engine.add("my office is in Shenzhen, a new building", user_id=u, session_id="s2",
                        now=T0 + timedelta(days=30))
    hits = [h.memory_id for h in engine.retrieve("where do I live now?", user_id=u, now=T0 + timedelta(days=31)).hits]
    assert hits[0] == home.memory_id and office.memory_id not in hits[:1]
