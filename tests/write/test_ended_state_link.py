"""A state the speaker reports as ended links the memory of that state, which then ranks below the ending
(issue 16, failure class 6). On 264755c "Actually I quit my job at Amazon last Friday" linked nothing: a reported
change needs a newer value, and an ending names none, so "where do I work?" answered with the stale "I work at
Amazon as a recruiter" first. Nothing is archived; a wish, a plan, someone else's ending or another use of the
same word links nothing."""

from datetime import timedelta

import pytest

from memory_engine.write.changes import ended_object
from memory_engine.write.intents import ends_state


@pytest.mark.parametrize("text,verb", [
    ("Actually I quit my job at Amazon last Friday", "quit"),
    ("I left Google in May to start my own company", "left"),
    ("I stopped going to the climbing gym, my knee hurts", "stopped"),
    ("我上个月从阿里辞职了", "辞职"),
    ("我把健身卡退掉了", "退掉"),
    ("我戒烟了，已经三个月了", "戒"),
])
def test_endings_done_are_recognised(text, verb):
    m = ends_state(text)
    assert m is not None and m.group(0).strip() == verb


@pytest.mark.parametrize("text", [
    "I want to quit my job at Amazon", "I'm thinking about quitting", "I didn't quit, I got promoted",
    "I left my keys at the Google office", "I stopped at Costco on the way home", "Did you quit?",
    "我想从腾讯离职", "我还没辞职", "要是辞职了就去旅行", "我打算退出读书会",
])
def test_wishes_plans_and_other_senses_are_no_ending(text):
    assert ends_state(text) is None


def test_the_ended_object_leaves_out_the_time_and_the_verb():
    text = "Actually I quit my job at Amazon last Friday"
    terms, ents = ended_object(text, ends_state(text))
    assert terms == {"job", "amazon"} and ents == {"amazon"}
    zh = "我上个月从阿里辞职了"
    assert ended_object(zh, ends_state(zh))[0] == {"阿里"}


def _told(engine, t0, olds, new):
    ids = [engine.add(o, user_id="u", session_id="s1", now=t0 + timedelta(minutes=i)).memory_id
           for i, o in enumerate(olds)]
    r = engine.add(new, user_id="u", session_id="s2", now=t0 + timedelta(days=30))
    return ids, r


@pytest.mark.integration
@pytest.mark.parametrize("olds,new,query", [
    (["I work at Amazon as a recruiter", "I bought a Kindle on Amazon", "I play tennis on Sundays"],
     "Actually I quit my job at Amazon last Friday", "Where do I work?"),
    (["我在阿里巴巴做产品经理", "我周末打网球"], "我上个月从阿里辞职了", "我在哪工作？"),
])
def test_an_ended_job_links_its_memory_and_answers_first(engine, t0, olds, new, query):
    ids, r = _told(engine, t0, olds, new)
    assert r.outcome == "stored" and r.superseded_ids == ()
    assert [(e["id"], e["rule"], e["archived"]) for e in r.evidence] == [(ids[0], "ended_state", False)]
    assert engine.memory(r.memory_id, user_id="u").metadata["_replaces"] == [ids[0]]
    assert all(engine.memory(i, user_id="u").status.value == "current" for i in ids)  # linked, never archived
    hits = engine.retrieve(query, user_id="u", now=t0 + timedelta(days=31)).hits
    order = [h.memory_id for h in hits]
    assert order[0] == r.memory_id and ids[0] in order


@pytest.mark.integration
@pytest.mark.parametrize("olds,new", [
    (["I work at Amazon as a recruiter"], "I want to quit my job at Amazon"),
    (["I work at Amazon as a recruiter"], "I left my badge at the Amazon office"),
    (["My sister works at Amazon", "I work at Google"], "My sister quit Amazon"),
    (["我在腾讯上班"], "我想从腾讯离职"),
    (["I work at Amazon as a recruiter"], "I quit sugar last month"),  # another state, nothing shared
])
def test_wishes_others_and_other_states_link_nothing(engine, t0, olds, new):
    _, r = _told(engine, t0, olds, new)
    assert not any(e.get("rule") == "ended_state" for e in r.evidence), r.evidence
