"""Lifecycle behaviours the engine's write path already has: candidate pool and
promotion, supersede modes, user-stated over model-inferred in fusion."""

from __future__ import annotations

import pytest

from memory_engine.models import MemoryStatus

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("text", ["Maybe I should try yoga classes", "也许我下个月去杭州出差", "要不试试游泳课？"])
def test_hedged_statements_become_candidates_and_are_promoted_when_they_recur(make_engine, day, text):
    eng = make_engine()
    r1 = eng.add(text, user_id="u", session_id="s1", now=day(0))
    assert r1.outcome == "candidate" and r1.memory_type == "episodic"
    rec = eng.memory(r1.memory_id, user_id="u")
    assert rec.status == MemoryStatus.CANDIDATE
    assert eng.retrieve(text, user_id="u", now=day(0)).hits == []  # candidates are not retrieved
    r2 = eng.add(text, user_id="u", session_id="s1", now=day(1))  # same session: not yet a recurrence
    assert (r2.outcome, r2.reason) == ("candidate", "candidate_recurred")
    r3 = eng.add(text, user_id="u", session_id="s2", now=day(2))  # a later session: promoted (count 2)
    assert (r3.outcome, r3.reason, r3.memory_id) == ("stored", "promoted_candidate", r1.memory_id)
    assert eng.memory(r1.memory_id, user_id="u").status == MemoryStatus.CURRENT


def test_candidate_promote_count_is_configurable(make_engine, day):
    eng = make_engine(**{"write.candidate_promote_count": 3})
    text = "Maybe I should try yoga classes"
    for i, sess in enumerate(("s1", "s2")):
        assert eng.add(text, user_id="u", session_id=sess, now=day(i)).outcome == "candidate"
    assert eng.add(text, user_id="u", session_id="s3", now=day(3)).reason == "promoted_candidate"


def test_supersede_archive_mode(make_engine, day):
    eng = make_engine()
    old = eng.add("I like drinking coffee in the morning", user_id="u", now=day(0))
    new = eng.add("I don't like coffee anymore, switch to green tea in the morning", user_id="u", now=day(1))
    assert old.memory_id in new.superseded_ids
    rec = eng.memory(old.memory_id, user_id="u")
    assert rec.status == MemoryStatus.DEPRECATED and rec.superseded_by == new.memory_id
    assert rec.archived_at == day(1).timestamp()
    ids = eng.retrieve("what do I drink in the morning, coffee?", user_id="u", now=day(2)).ids
    assert new.memory_id in ids and old.memory_id not in ids


def test_supersede_pending_confirmation_mode(make_engine, day):
    eng = make_engine(**{"write.supersede_mode": "pending_confirmation"})
    old = eng.add("I like drinking coffee in the morning", user_id="u", now=day(0))
    new = eng.add("I don't like coffee anymore, switch to green tea in the morning", user_id="u", now=day(1))
    rec = eng.memory(old.memory_id, user_id="u")
    assert rec.status == MemoryStatus.PENDING_CONFIRMATION and rec.superseded_by == new.memory_id
    assert rec.archived_at is None  # kept, not archived, until the new value is confirmed
    again = eng.add("I don't like coffee anymore, switch to green tea in the morning", user_id="u", now=day(2))
    assert again.outcome == "merged" and again.memory_id == new.memory_id


def test_user_stated_outranks_model_inferred_by_the_configured_weight(make_engine, day):
    eng = make_engine()
    text = "My favourite colour is emerald green"
    eng.add(text, user_id="a", role="user", now=day(0))
    eng.add(text, user_id="b", role="assistant", now=day(0))
    sa = eng.retrieve("favourite colour", user_id="a", now=day(1)).hits[0].score
    sb = eng.retrieve("favourite colour", user_id="b", now=day(1)).hits[0].score
    assert sb == pytest.approx(sa * eng.config.retrieval.inferred_weight, rel=1e-3)
