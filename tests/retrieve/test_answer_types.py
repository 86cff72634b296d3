"""Answer types of questions about the user (facts by meaning for questions): a one-line first-person question is
routed to the slot it asks for (an employer, a home city, hobbies, a diet rule, a pet, ...) by its nearest example
questions (write/slots.toml), and the user's statements of that slot earn category relevance by query-time
membership. Real parts: the bundled e5 embedder, in-memory engines on qdrant-edge. The engine cases failed before the
mechanism: the answer shares no word with the question and sat under the relevance floor."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.config import IntentSection
from memory_engine.errors import ConfigError
from memory_engine.write.categories import NONE, AnswerTypes, about_other_person, load_examples


def test_bundled_answer_types_are_bilingual_have_a_reject_class_and_names_of_their_own():
    ex = load_examples(asks="questions")
    cats = load_examples()
    assert NONE in ex.questions and NONE in ex.facts
    named = set(ex.questions) - {NONE}
    assert {"work", "home", "hobby", "diet", "pet", "commute", "exercise", "condition"} <= named
    assert not named & (set(cats.requests) | set(cats.facts))  # no write-time tag stands for an answer type
    for name in named:
        for part in (ex.questions[name], ex.facts[name]):
            assert any(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in part), name
            assert any(t.isascii() for t in part), name


def test_an_answer_types_file_needs_questions_and_facts(tmp_path):
    bad = tmp_path / "slots.toml"
    bad.write_text('[work]\nrequests = ["where do I work?"]\nfacts = ["I work at a bank"]\n', encoding="utf-8")
    with pytest.raises(ConfigError):
        load_examples(bad, asks="questions")


@pytest.mark.parametrize(("question", "slot"), [
    ("who do I work for these days?", "work"),
    ("我在哪个单位工作？", "work"),
    ("which city am I living in at the moment?", "home"),
    ("what are my hobbies these days?", "hobby"),
    ("我有什么不能吃的？", "diet"),
    ("do I have any pets?", "pet"),
    ("我平时怎么上下班？", "commute"),
    ("我一般做什么运动？", "exercise"),
])
def test_a_question_about_the_user_is_routed_to_the_slot_it_asks_for(embedder, question, slot):
    at = AnswerTypes(embedder, IntentSection())
    labels = at.labels(question, embedder.embed_query(question))
    assert [lb.name for lb in labels] == [slot]


@pytest.mark.parametrize("question", [
    "what did I do last Sunday?",  # an episode, no slot
    "6月3号我干了什么？",
    "when is my dentist appointment?",  # a date
    "what's my cat's name?",  # an attribute of a thing, not the slot's filler
    "where does my sister work?",  # another person's slot: the user's own job does not answer it
    "我老公在哪上班？",
    "Book me a table for dinner",  # a request, not a question
])
def test_event_attribute_and_other_person_questions_route_nowhere(embedder, question):
    at = AnswerTypes(embedder, IntentSection())
    assert at.labels(question, embedder.embed_query(question)) == ()


def test_answer_types_are_configuration(embedder):
    q = "我在哪个单位工作？"
    assert AnswerTypes(embedder, IntentSection(answer_types=False)).labels(q, embedder.embed_query(q)) == ()
    assert AnswerTypes(embedder, IntentSection(answer_margin=2.0)).labels(q, embedder.embed_query(q)) == ()


@pytest.mark.parametrize(("text", "other"), [
    ("my sister lives in Denver", True),
    ("She works at a hospital downtown", True),
    ("我老公在银行上班", True),
    ("我室友上个月去小米上班了", True),
    ("we moved to Munich for my wife's new job", False),
    ("my flat is in Leeds", False),
    ("我住在杭州", False),
    ("我跟我妈去逛街了", False),
])
def test_a_statement_about_another_person_is_told_by_its_opening(text, other):
    assert about_other_person(text) is other


_SLOT_CASES = [
    (["我在一家物流公司做会计，天天对账"], ["周末和朋友去看了场电影", "下周三上午要去医院体检"], "我现在在哪儿工作？"),
    (["we just got a beagle puppy, he chews everything"], ["the quarterly review got moved to May",
                                                          "I had ramen for lunch today"], "what pets do I have?"),
    (["I take the ferry across the bay to the office every morning"], ["my laptop battery is dying",
                                                                       "we watched a documentary last night"],
     "how do I get to work?"),
]


@pytest.mark.parametrize(("facts", "distractors", "ask"), _SLOT_CASES)
def test_a_question_finds_the_statement_of_its_slot(make_engine, t0, facts, distractors, ask):
    eng = make_engine()
    ids = [eng.add(t, user_id="u", session_id="s1", now=t0 + timedelta(minutes=i)).memory_id
           for i, t in enumerate(facts + distractors)]
    res = eng.retrieve(ask, user_id="u", session_id="s2", now=t0 + timedelta(days=3))
    assert ids[0] in res.ids
    assert not set(ids[1:]) & set(res.ids)  # no statement of another kind dragged in


def test_without_answer_types_the_answer_stays_under_the_floor(make_engine, t0):
    facts, distractors, ask = _SLOT_CASES[0]
    for overrides, found in (({}, True), ({"intent.answer_types": False}, False),
                             ({"intent.answer_member_min": 2.0, "intent.answer_member_full": 2.0}, False)):
        eng = make_engine(overrides=overrides)
        fid = eng.add(facts[0], user_id="u", session_id="s1", now=t0).memory_id
        for i, t in enumerate(distractors):
            eng.add(t, user_id="u", session_id="s1", now=t0 + timedelta(minutes=i + 1))
        res = eng.retrieve(ask, user_id="u", session_id="s2", now=t0 + timedelta(days=3))
        assert (fid in res.ids) is found, overrides


def test_a_never_stored_slot_or_another_persons_slot_stays_empty(make_engine, t0):
    eng = make_engine()
    for i, t in enumerate(["my brother is a pilot for Lufthansa", "I had ramen for lunch today",
                           "the quarterly review got moved to May"]):
        eng.add(t, user_id="u", session_id="s1", now=t0 + timedelta(minutes=i))
    for ask in ("where do I work?", "what did I do on May 3?", "do I have any pets?"):
        res = eng.retrieve(ask, user_id="u", session_id="s2", now=t0 + timedelta(days=3))
        assert [h.content for h in res.hits] == [], ask


def test_a_question_about_the_user_ranks_the_users_own_statement_above_a_relatives(make_engine, t0):
    # both hold the question's word and neither is near it densely: a tie the relative's statement used to win
    cousin, mine = "My cousin works at a bakery downtown.", "I work at a logistics startup."
    got = {}
    for weight in (1.0, 0.9):
        eng = make_engine({"intent.other_person_weight": weight})
        for i, t in enumerate((cousin, mine)):
            eng.add(t, user_id="u", now=t0 + timedelta(hours=i))
        hits = eng.retrieve("where do I work?", user_id="u", now=t0 + timedelta(days=2)).hits
        got[weight] = {h.content: h.score for h in hits}
        assert {cousin, mine} <= set(got[weight])  # the relative's statement stays findable
    assert got[0.9][mine] > got[0.9][cousin]
    assert got[0.9][cousin] < got[1.0][cousin] and got[0.9][mine] == pytest.approx(got[1.0][mine])
    # a question that names the relative is about the relative: no discount
    eng = make_engine({"intent.other_person_weight": 0.9})
    for i, t in enumerate((cousin, mine)):
        eng.add(t, user_id="u", now=t0 + timedelta(hours=i))
    assert eng.retrieve("where does my cousin work?", user_id="u", now=t0 + timedelta(days=2)).hits[0].content == cousin
