"""The stale-values stage judges only memories that can state competing values of one
subject: the same author, different sessions, a newer memory that states something.
Close dialogue turns (two lines of one conversation, the other speaker's reply, a
question) keep their own rank (issue 16, LoCoMo dev: these demotions pushed evidence
turns out of the top 10)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory_engine import MemoryEngine
from memory_engine.retrieve.fusion import Candidate
from memory_engine.retrieve.stale import competing, demote_stale, states_something

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)


def _pl(content: str, session: str | None = "s1", speaker: str | None = None, role: str = "user") -> dict:
    return {"content": content, "session_id": session, "role": role,
            "metadata": {"speaker": speaker} if speaker else {}}


def test_states_something_tells_questions_from_statements():
    assert not states_something("What kind of pots do you make?")
    assert not states_something("Melanie: what got you into running?")
    assert states_something("Wow, what an experience! How did it make you feel?")
    assert states_something("Took the design team to the new Thai place for lunch today")
    assert states_something("周报：登录模块已经上线，正在观察线上指标")
    assert not states_something("你最近在忙什么？")
    assert not states_something("")


def test_competing_needs_same_author_other_session_and_a_statement():
    old = _pl("Caroline: I go to the support group on Fridays", "s1", "Caroline")
    assert competing(old, _pl("Caroline: I go to the support group on Mondays now", "s2", "Caroline"))
    # the same conversation session: a change there is a correction (the write path's business)
    assert not competing(old, _pl("Caroline: The support group is on Fridays, yes", "s1", "Caroline"))
    assert competing(old, _pl("Caroline: The support group is on Fridays", "s1", "Caroline"),
                     across_sessions=False)
    # another speaker's line never states the speaker's own newer value
    assert not competing(old, _pl("Melanie: The support group sounds great", "s2", "Melanie"))
    # what the assistant said is no newer value of the user's statement
    assert not competing(old, _pl("The support group meets on Mondays", "s2", role="assistant"))
    # a question names the subject, not a value
    assert not competing(old, _pl("Caroline: When does the support group meet?", "s2", "Caroline"))
    assert competing(old, _pl("Caroline: When does it meet?", "s2", "Caroline"), statements_only=False)
    # memories without a session or speaker (plain API use) are judged as before
    assert competing(_pl("lunch at the noodle bar", None), _pl("lunch at the Thai place", None))


def test_demote_stale_skips_pairs_the_gate_refuses():
    v = np.array([1.0, 0.0], dtype=np.float32)
    old = Candidate("old", fused=0.9, similarity=0.8, coverage=0.5)
    new = Candidate("new", fused=0.8, similarity=0.8, coverage=0.5)
    written = {"old": 1.0, "new": 2.0}
    vecs = {"old": v, "new": v}
    assert demote_stale([old, new], vecs, written, lambda c: c, 0.55, 0.8, 0.9, lambda a, b: True)[1] == {"old": "new"}
    out, demoted = demote_stale([old, new], vecs, written, lambda c: c, 0.55, 0.8, 0.9, lambda a, b: False)
    assert demoted == {} and [c.memory_id for c in out] == ["old", "new"] and out[0].fused == 0.9


def _score_of(res, content: str) -> float:
    return next(h.score for h in res.hits if h.content == content)


def test_engine_keeps_the_rank_of_an_earlier_turn_of_the_same_conversation(quiet_engine):
    """Two close lines of one speaker in one session: the earlier one (the evidence of 'when')
    keeps its own score. On the code before the gate it was capped at 0.8 x the later line's."""
    user = "stale-dialogue"
    first = "Caroline: I went to the LGBTQ support group yesterday."
    later = "Caroline: The LGBTQ support group really helped me, I feel accepted."
    quiet_engine.add(first, user_id=user, session_id="s1", memory_type="episodic", metadata={"speaker": "Caroline"},
               now=T0)
    quiet_engine.add(later, user_id=user, session_id="s1", memory_type="episodic", metadata={"speaker": "Caroline"},
               now=T0 + timedelta(minutes=3))
    q = "When did Caroline go to the LGBTQ support group?"
    at = T0 + timedelta(days=3)
    on = quiet_engine.retrieve(q, user_id=user, top_k=5, now=at)
    off = MemoryEngine(quiet_engine.config.with_overrides({"retrieval.stale_discount": 1.0}), embedder=quiet_engine.embedder,
                       store=quiet_engine.store, ephemeral=True).retrieve(q, user_id=user, top_k=5, now=at)
    assert [h.content for h in on.hits][:2] == [first, later]
    assert _score_of(on, first) == pytest.approx(_score_of(off, first))
    # judged across sessions (the old behaviour) the earlier line is capped below the later one; without word
    # families in the keyword coverage ('go'/'went' make the earlier line the better match, so nothing competes)
    plain = {"retrieval.word_families": False}
    off = MemoryEngine(quiet_engine.config.with_overrides({**plain, "retrieval.stale_discount": 1.0}),
                       embedder=quiet_engine.embedder, store=quiet_engine.store, ephemeral=True).retrieve(
        q, user_id=user, top_k=5, now=at)
    every = MemoryEngine(quiet_engine.config.with_overrides({**plain, "retrieval.stale_across_sessions": False}),
                         embedder=quiet_engine.embedder, store=quiet_engine.store, ephemeral=True)
    capped = every.retrieve(q, user_id=user, top_k=5, now=at)
    assert [h.content for h in capped.hits][:2] == [later, first]
    assert _score_of(capped, first) < _score_of(off, first)


def test_default_discount_puts_the_older_value_just_below_the_newer():
    """retrieval.stale_discount 0.95 (was 0.8): a demoted older value ranks right below the newer one,
    not under an unrelated memory that scored between them (LoCoMo dev: the deeper cap pushed dialogue
    evidence out of the top 10)."""
    from memory_engine.config import RetrievalSection

    rcfg = RetrievalSection()
    old = Candidate("a" * 16, similarity=0.7, coverage=0.5, fused=0.62)
    new = Candidate("b" * 16, similarity=0.7, coverage=0.5, fused=0.60)
    other = Candidate("c" * 16, similarity=0.6, coverage=0.5, fused=0.56)
    same = np.ones(4, dtype=np.float32) / 2.0
    vecs = {old.memory_id: same, new.memory_id: same, other.memory_id: np.array([1.0, 0, 0, 0], dtype=np.float32)}
    written = {old.memory_id: 1.0, new.memory_id: 2.0, other.memory_id: 0.5}
    ranked, demoted = demote_stale([old, new, other], vecs, written, lambda c: c, rcfg.stale_similarity,
                                   rcfg.stale_discount, rcfg.stale_relevance_share)
    assert demoted == {old.memory_id: new.memory_id}
    assert [c.memory_id for c in ranked] == [new.memory_id, old.memory_id, other.memory_id]
