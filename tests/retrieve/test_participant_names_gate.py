"""The floor's gate and a question that names a participant of a stored conversation
(``retrieval.gate_name_weight``): a turn that shares only the person's name with the question is no evidence
that its topic is stored, since every turn by or to them holds the name. Never-stored questions about a
named participant come back empty; answerable ones and a question of the name alone still find the turns.
Real in-memory engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.retrieve.speakers import participant_terms
from memory_engine.text import content_terms

T0 = datetime(2026, 7, 6, 18, tzinfo=UTC)
CHAT = [("Joanna", "Joanna: Finally finished the first draft of my screenplay last night"),
        ("Nate", "Nate: Joanna that's huge! I spent the weekend at a gaming tournament in Austin"),
        ("Joanna", "Joanna: My brother is visiting next month, we're going to the coast"),
        ("Nate", "Nate: I adopted a second turtle, her name is Shelly"),
        ("Joanna", "Joanna: Work has been hectic, three deadlines this week")]


def _chat(eng):
    for i, (who, text) in enumerate(CHAT):
        eng.add(text, user_id="u", session_id="s1", metadata={"speaker": who}, now=T0 + timedelta(minutes=i))


def test_participant_terms_are_the_declared_speakers_the_query_names():
    pls = [{"metadata": {"speaker": "Joanna"}}, {"metadata": {"speaker": "Nate"}}, {"content": "Mira: hi"}]
    terms = content_terms("What is Joanna's favorite movie?")
    assert participant_terms("What is Joanna's favorite movie?", terms, pls) == content_terms("Joanna")
    assert participant_terms("What did Mira say?", content_terms("What did Mira say?"), pls) == frozenset()
    assert participant_terms("what is my favorite movie?", content_terms("what is my favorite movie?"), pls) == set()


@pytest.mark.parametrize("ask", ["What is Joanna's favorite color?", "What is Nate's blood type?",
                                 "What instrument does Nate play?"])
def test_a_never_stored_question_about_a_participant_returns_nothing(make_engine, ask):
    eng = make_engine()
    _chat(eng)
    res = eng.retrieve(ask, user_id="u", now=T0 + timedelta(days=1), explain=True)
    assert res.hits == [], [h.content for h in res.hits]
    assert res.explanations and all(e.floor_check == "gate" for e in res.explanations)
    off = make_engine({"retrieval.gate_name_weight": 1.0})  # the name counted as topic evidence before
    _chat(off)
    assert off.retrieve(ask, user_id="u", now=T0 + timedelta(days=1)).hits


@pytest.mark.parametrize(("ask", "want"), [("What did Joanna finish writing?", "screenplay"),
                                           ("What pet did Nate adopt?", "turtle"),
                                           ("Who is Joanna?", "Joanna")])
def test_answerable_questions_and_a_name_alone_still_find_the_turns(make_engine, ask, want):
    eng = make_engine()
    _chat(eng)
    res = eng.retrieve(ask, user_id="u", now=T0 + timedelta(days=1))
    assert res.hits and any(want in h.content for h in res.hits[:2]), [h.content for h in res.hits]


def test_a_turn_next_to_a_name_only_match_borrows_no_gate_evidence(make_engine):
    """A Chinese chat: the turn spoken to 老陈 holds his name; his own turns next to it borrowed its relevance
    (retrieval.context_relevance) and opened the gate through it. The gate now reads the neighbour's gate
    relevance (fusion.Candidate.context_gate_relevance)."""
    eng = make_engine()
    for i, (who, text) in enumerate([("老陈", "周末带孙子去公园放风筝了"), ("阿芳", "老陈你那个风筝是自己扎的吗，真好看"),
                                     ("阿芳", "我下个月要去杭州看女儿")]):
        eng.add(text, user_id="u", session_id="s1", metadata={"speaker": who}, now=T0 + timedelta(minutes=i))
    assert eng.retrieve("老陈是什么星座的？", user_id="u", now=T0 + timedelta(days=2)).hits == []
    res = eng.retrieve("老陈周末带孙子去哪儿了？", user_id="u", now=T0 + timedelta(days=2))
    assert res.hits and "公园" in res.hits[0].content
