"""Conversation context, adjacency pairs: the turn after a question, by the other speaker, is its answer
and borrows more of the question's score (``retrieval.context_answer_weight``). Pure functions and a real
in-memory engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import MemoryEngine
from memory_engine.retrieve.context import answers, smooth
from memory_engine.retrieve.fusion import Candidate

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)


def _turn(speaker: str, text: str) -> dict:
    return {"content": f"{speaker}: {text}", "metadata": {"speaker": speaker}}


def test_a_reply_by_the_other_speaker_answers_a_question():
    q = _turn("Maria", "Sounds awesome! How often do you work out together?")
    assert answers(q, _turn("John", "Three times a week; it keeps us on track."))
    assert not answers(q, _turn("Maria", "We could join you sometime."))  # the asker goes on: no reply
    assert not answers(_turn("Maria", "We went hiking on Sunday."), _turn("John", "Nice, love that trail."))
    # speakers unknown (no metadata, no label): nothing is read as a reply
    assert not answers({"content": "how often do you run?"}, {"content": "three times a week"})
    # Chinese: a question, the reply by the other person
    assert answers(_turn("小林", "你周末一般去哪儿爬山？"), _turn("老王", "一般去香山，人少"))


def test_smooth_gives_the_answer_the_answer_weight_and_the_question_the_plain_one():
    q = Candidate("q", fused=1.0, similarity=0.9)
    a = Candidate("a", fused=0.1, similarity=0.1)
    plain = {c.memory_id: c.fused for c in smooth([q, a], [("q", "a", 1, 0)], 0.5, 0.0, 0.9, 0.0, 0.7)}
    reply = {c.memory_id: c.fused for c in smooth([q, a], [("q", "a", 1, 1)], 0.5, 0.0, 0.9, 0.0, 0.7)}
    assert plain["a"] == pytest.approx(0.1 + 0.5 * 1.0)
    assert reply["a"] == pytest.approx(0.1 + 0.7 * 1.0)
    assert plain["q"] == reply["q"] == pytest.approx(1.0 + 0.5 * 0.1)  # the question gains the plain share
    # the link read from the other side (-1: the parent answers the neighbour's question)
    back = {c.memory_id: c.fused for c in smooth([q, a], [("a", "q", 1, -1)], 0.5, 0.0, 0.9, 0.0, 0.7)}
    assert back == pytest.approx(reply)
    # still below the question it answers (hop_discount cap), and None = context_weight
    capped = {c.memory_id: c.fused for c in smooth([q, a], [("q", "a", 1, 1)], 0.5, 0.0, 0.9, 0.0, 2.0)}
    assert capped["a"] == pytest.approx(0.9)
    assert {c.memory_id: c.fused for c in smooth([q, a], [("q", "a", 1, 1)], 0.5, 0.0, 0.9, 0.0, None)} == \
        pytest.approx(plain)


def test_engine_lifts_the_reply_to_the_matching_question_not_the_turn_before_it(quiet_engine_factory):
    """The answer ('Three times a week') shares no word with the query; the question before it does. With the
    adjacency pair the answer borrows more of the question's score; the turn before the question (equal
    distance, no reply) borrows the same as without."""
    chat = [
        ("John", "I finally fixed the leaking kitchen tap this morning."),
        ("Maria", "That sounds awesome! How often do you work out with your family?"),
        ("John", "Three times a week; it keeps us on track."),
        ("Maria", "I started a pottery class on Tuesday evenings."),
        ("John", "My car needs new tyres before the trip."),
        ("Maria", "The shelter got a big donation of blankets."),
        ("John", "I finished the book about the history of Rome."),
        ("Maria", "We did a family workout at the park, everyone joined in."),
    ]
    off = quiet_engine_factory({"retrieval.floor": 0.0, "retrieval.context_answer_weight": None})
    user = "pair-user"
    for i, (who, text) in enumerate(chat):
        off.add(f"{who}: {text}", user_id=user, session_id="s1" if i < 3 else f"s{i}", memory_type="episodic",
                metadata={"speaker": who}, now=T0 + timedelta(minutes=i))
    stored = {m.content for m in off.list_memories(user_id=user)}
    assert all(f"{w}: {t}" in stored for w, t in chat[:3])
    on = MemoryEngine(off.config.with_overrides({"retrieval.context_answer_weight": 0.6}), embedder=off.embedder,
                      store=off.store, ephemeral=True)
    q = "How often does John work out with his family?"
    answer, before = f"John: {chat[2][1]}", f"John: {chat[0][1]}"
    s_off = {h.content: h.score for h in off.retrieve(q, user_id=user, top_k=8, now=T0 + timedelta(days=1)).hits}
    s_on = {h.content: h.score for h in on.retrieve(q, user_id=user, top_k=8, now=T0 + timedelta(days=1)).hits}
    assert s_on[answer] > s_off[answer]  # the reply borrows more of the question's score
    assert s_on[before] == pytest.approx(s_off[before])  # the turn before the question: no reply, unchanged


def test_the_reply_borrows_relevance_without_shared_words_an_unrelated_neighbour_does_not():
    q = Candidate("q", fused=1.0, similarity=0.9)
    a = Candidate("a", fused=0.1, similarity=0.05)  # 'Three times a week': no relevance of its own
    args = (0.5, 0.6, 0.9, 0.2, 0.7)
    reply = {c.memory_id: c for c in smooth([q, a], [("q", "a", 1, 1)], *args, answer_min_own=0.0)}
    plain = {c.memory_id: c for c in smooth([q, a], [("q", "a", 1, 0)], *args, answer_min_own=0.0)}
    assert reply["a"].relevance == pytest.approx(0.6 * 0.9)  # the pair ties it to the question's topic
    assert plain["a"].relevance == pytest.approx(0.05)  # a neighbour under context_min_relevance borrows nothing
    # None = context_min_relevance for the reply too
    assert {c.memory_id: c for c in smooth([q, a], [("q", "a", 1, 1)], *args)}["a"].relevance == pytest.approx(0.05)
