"""The tenseless present on dialogues (issue 16, session 11; LoCoMo dev single-hop 0.858 -> 0.838 after session 10):
a question with a present operator and no time word ('What does Nadia do for self-care?') made every later turn of
the same speaker on the topic a change report, so a chatty later turn took the place of the turn that answers.
Now a newer statement counts as a change by the question's tense alone only when it answers the question as well
as the older one (retrieval.stale_present_relevance_share, stale_present_coverage_share) and the two share a question
word that is no speaker's name (retrieval.stale_present_query_subject); a question in the perfect ('What books has
Melanie read?') is no present question (retrieval.stale_perfect_is_past). Ranking only: nothing is archived."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory_engine.models import MemoryStatus
from memory_engine.retrieve.fusion import Candidate
from memory_engine.retrieve.stale import demote_stale, present_subject
from memory_engine.text import content_terms
from memory_engine.write.intents import present_question

T0 = datetime(2026, 3, 1, 18, tzinfo=UTC)
#: the session-10 behaviour: the present tense alone makes a newer statement a change report
SESSION_10 = {"retrieval.stale_present_relevance_share": 0.0, "retrieval.stale_present_coverage_share": 0.0,
              "retrieval.stale_present_query_subject": False, "retrieval.stale_perfect_is_past": False}


@pytest.mark.parametrize("query,present,present_s10", [
    ("What books has Melanie read?", False, True), ("Where have you camped?", False, True),
    ("What has my brother been up to?", False, True),
    # main-verb 'have' takes 'do'; 'has' before an object is no inversion
    ("What do I have in the fridge?", True, True), ("Who has the spare key?", True, True),
    ("how do I get my groceries?", True, True), ("What did Melanie read?", False, False),
])
def test_a_perfect_question_is_no_present_question(query, present, present_s10):
    assert present_question(query) is present
    assert present_question(query, perfect_is_past=False) is present_s10


def test_present_subject_needs_a_shared_question_word_that_names_no_speaker():
    q = frozenset(content_terms("how do I get my groceries?"))
    costco = frozenset(content_terms("I do the big grocery run at Costco every Saturday morning"))
    instacart = frozenset(content_terms("been getting groceries delivered through Instacart for the past month"))
    assert present_subject(costco, instacart, q)
    q2 = frozenset(content_terms("What does Nadia do for self-care?"))
    old = frozenset(content_terms("Nadia: every evening I block out an hour for pottery, that's my self-care"))
    new = frozenset(content_terms("Nadia: Omar, thanks for the tip about the pottery studio"))
    speakers = frozenset(content_terms("Nadia")) | frozenset(content_terms("Omar"))
    assert (old & new & q2) and not present_subject(old, new, q2, speakers)  # only the speaker's name is shared
    assert present_subject(old, old, q2, speakers)  # 'self-care' is a question word both name


def _pair(new_similarity: float, new_coverage: float, **kw) -> list[str]:
    # relevance = 1 - (1 - similarity)(1 - coverage): the older one 0.8
    old = Candidate("old", fused=0.9, similarity=0.6, coverage=0.5)
    new = Candidate("new", fused=0.6, similarity=new_similarity, coverage=new_coverage)
    vecs = {"old": np.array([1.0, 0.0], dtype=np.float32), "new": np.array([0.8, 0.6], dtype=np.float32)}
    out, _ = demote_stale([old, new], vecs, {"old": 1.0, "new": 2.0}, lambda c: c, 0.95, 0.95, 0.9, None,
                          takes_rank=True, update_similarity=0.45, update_relevance_share=0.5,
                          update_coverage_share=0.3, present=frozenset({"new"}), present_similarity=0.5, **kw)
    return [c.memory_id for c in out]


def test_a_present_only_change_needs_the_newer_statement_to_answer_as_well():
    gates = {"present_relevance_share": 0.9, "present_coverage_share": 1.0}
    assert _pair(0.3, 0.25) == ["new", "old"]  # session 10: the tense alone made it the current value (0.475 / 0.8)
    assert _pair(0.3, 0.25, **gates) == ["old", "new"]
    assert _pair(0.7, 0.25, **gates) == ["old", "new"]  # relevance 0.775 but fewer question words covered
    assert _pair(0.6, 0.5, **gates) == ["new", "old"]  # answers as well: the silent change
    assert _pair(0.6, 0.5, present_pair=lambda a, b: False, **gates) == ["old", "new"]  # no shared question word


def _dialogue(eng, u: str) -> dict[str, str]:
    turns = [
        ("s1", 0, "Nadia", "Nadia: Work has been brutal, so every evening I block out an hour for pottery and a long "
                           "bath. That's my self-care."),
        ("s1", 1, "Omar", "Omar: That sounds lovely, Nadia. Do you manage it on busy weeks too?"),
        ("s1", 2, "Nadia", "Nadia: Mostly! Pottery keeps me sane."),
        ("s2", 20 * 24 * 60, "Omar", "Omar: Hey Nadia, how did the move go?"),
        ("s2", 20 * 24 * 60 + 1, "Nadia", "Nadia: Thanks for asking, Omar! The move was exhausting, but taking care "
                                          "of the new garden every evening has been great."),
    ]
    ids = {}
    for session, minutes, who, text in turns:
        wr = eng.add(text, user_id=u, session_id=session, metadata={"speaker": who},
                     now=T0 + timedelta(minutes=minutes))
        assert wr.memory_id and wr.outcome == "stored"
        ids[text.split()[1].strip(",!")] = wr.memory_id
    return ids


@pytest.mark.integration
@pytest.mark.parametrize("overrides,first", [({}, "Work"), (SESSION_10, "Thanks")])
def test_a_later_turn_on_the_topic_does_not_replace_the_answer(quiet_engine_factory, overrides, first):
    """'What does Nadia do for self-care?': her own statement of it answers; her later turn about the garden shares
    the topic (similar, same speaker, another session) but not the question's words. Session 10 ranked the garden turn
    first; both turns stay current and unarchived either way."""
    eng = quiet_engine_factory(overrides)
    ids = _dialogue(eng, "nadia")
    hits = eng.retrieve("What does Nadia do for self-care?", user_id="nadia", top_k=3, now=T0 + timedelta(days=45)).hits
    assert hits[0].memory_id == ids[first]
    for mid in ids.values():
        rec = eng.memory(mid, user_id="nadia")
        assert rec is not None and rec.archived_at is None and rec.superseded_by is None
        assert rec.status == MemoryStatus.CURRENT
