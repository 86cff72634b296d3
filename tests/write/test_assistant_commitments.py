"""The assistant's own standing commitment ("From now on I'll answer in French", "以后我都用英文回复你") is the
assistant's, not the user's preference (write/roles.py commitments, issue 16 class 7): marked at write, left out
of the answers to any query that does not refer to the assistant (retrieve/addressee.py may_answer), the user's
when the user accepts it, and the user's own stated preference answers the question."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.write.roles import COMMITMENT_KEY, CONFIRMED_KEY, commitment, standing_commitment


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "From now on I'll answer in French so you can practice.",
    "Sure, going forward I will keep my answers under 100 words.",
    "Noted. I'll always use metric units for you.",
    "好的，以后我都用英文回复你，帮你多练练阅读。",
    "明白，从现在开始我会用简体中文回答。",
])
def test_standing_commitments(text):
    assert standing_commitment(text)


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "I'll book it for 7pm on Friday.",  # one act: an offer, not a way of acting
    "You should always stretch before a run.",  # advice to the user
    "以后你可以试试游泳，对膝盖好一些。",  # advice to the user
    "Want me to book the 7:30 table?",
    "我帮你约了周四下午三点。",
    "",
])
def test_not_standing_commitments(text):
    assert standing_commitment(text) is None


@pytest.mark.unit
def test_a_confirmed_commitment_is_the_users():
    said = {"role": "assistant", "metadata": {COMMITMENT_KEY: "From now on I'll answer in French."}}
    assert commitment(said)
    assert not commitment({**said, "metadata": {**said["metadata"], CONFIRMED_KEY: {"text": "ok", "at": 1.0}}})
    assert not commitment({"role": "assistant", "metadata": {}}) and not commitment({})


def _scene(eng, t0):
    mine = eng.add("please keep your replies in English, I read it much faster than French", user_id="u",
                   session_id="s1", now=t0).memory_id
    eng.add("I'm practicing my French before the Paris trip in October", user_id="u", session_id="s2",
            now=t0 + timedelta(days=2))
    theirs = eng.add("From now on I'll answer in French so you can practice.", user_id="u", role="assistant",
                     session_id="s2", now=t0 + timedelta(days=2, minutes=1)).memory_id
    return mine, theirs


@pytest.mark.integration
def test_the_assistants_commitment_answers_only_a_query_about_the_assistant(quiet_engine_factory, t0):
    eng = quiet_engine_factory()
    mine, theirs = _scene(eng, t0)
    rec = eng.memory(theirs, user_id="u")
    assert rec.metadata[COMMITMENT_KEY].startswith("From now on") and rec.source.value == "model_inferred"
    at = t0 + timedelta(days=5)
    res = eng.retrieve("reply language preference", user_id="u", now=at)
    assert theirs not in res.ids and mine in res.ids
    asked = eng.retrieve("what language did you say you'd answer me in?", user_id="u", now=at)
    assert theirs in asked.ids  # a question about the assistant's words is answered by them


@pytest.mark.integration
@pytest.mark.parametrize("overrides", [{"write.assistant_commitments": False},
                                       {"retrieval.commitment_needs_addressee": False}])
def test_switched_off_by_config(quiet_engine_factory, t0, overrides):
    eng = quiet_engine_factory(overrides)
    _, theirs = _scene(eng, t0)
    res = eng.retrieve("reply language preference", user_id="u", now=t0 + timedelta(days=5))
    assert theirs in res.ids  # the earlier behaviour: the assistant's words at retrieval.inferred_weight


@pytest.mark.integration
def test_a_commitment_the_user_accepts_is_the_users(quiet_engine_factory, t0):
    eng = quiet_engine_factory()
    eng.add("我在备考雅思，阅读总是做不完", user_id="u", session_id="s1", now=t0)
    asked = eng.add("以后我都用英文回复你，帮你练练阅读速度，可以吗？", user_id="u", role="assistant", session_id="s1",
                    now=t0 + timedelta(minutes=1)).memory_id
    ok = eng.add("可以", user_id="u", session_id="s1", now=t0 + timedelta(minutes=3))
    assert ok.outcome == "merged" and ok.memory_id == asked
    assert eng.memory(asked, user_id="u").metadata[CONFIRMED_KEY]["text"] == "可以"
    res = eng.retrieve("回复用什么语言", user_id="u", now=t0 + timedelta(days=2))
    assert asked in res.ids
    # without a question, a bare "ok" accepts nothing: the commitment stays the assistant's
    said = eng.add("From now on I'll answer in French so you can practice.", user_id="u", role="assistant",
                   session_id="s2", now=t0 + timedelta(days=3)).memory_id
    eng.add("ok", user_id="u", session_id="s2", now=t0 + timedelta(days=3, minutes=1))
    assert CONFIRMED_KEY not in eng.memory(said, user_id="u").metadata
