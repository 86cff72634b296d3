"""A user turn that only accepts what the assistant just offered makes it the user's (write/roles.py);
refusals, questions, acknowledgements and statements with news of their own are not confirmations."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.write.roles import author_role, confirmation_extra_terms, is_confirmation


@pytest.mark.unit
@pytest.mark.parametrize("text", ["sure, let's go with that one", "ok book it", "yep, take the second one",
                                  "可以，就选这个吧", "好的，就要那款", "嗯，就它吧"])
def test_confirmations(text):
    assert is_confirmation(text, 4)


@pytest.mark.unit
@pytest.mark.parametrize("text", ["no, not that one", "ok thanks", "好的", "which one is cheaper?", "那个有停车位吗",
                                  "不要这个，太贵了", "I went with my sister's pick in the end, a tiny ramen bar near work",
                                  "收到"])
def test_not_confirmations(text):
    assert not is_confirmation(text, 4)


@pytest.mark.unit
def test_extra_terms_and_author():
    assert not confirmation_extra_terms("好，就它了") and "friday" in confirmation_extra_terms("yes, book it for Friday")
    assert author_role({"role": "assistant", "metadata": {"_confirmed_by_user": {"text": "ok", "at": 0}}}) == "user"
    assert author_role({"role": "assistant"}) == "assistant" and author_role({}) == "user"


@pytest.mark.integration
def test_a_confirmation_with_details_is_stored_and_one_without_an_offer_changes_nothing(engine, t0):
    offer = engine.add("The Lisbon food tour on Saturday starts at 10am and costs 65 euros.", user_id="u",
                       role="assistant", session_id="s1", now=t0).memory_id
    r = engine.add("yes, book that one for Saturday", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    assert r.outcome == "stored" and r.memory_id != offer  # 'saturday' is the user's own word: kept
    assert engine.memory(offer, user_id="u").metadata["_confirmed_by_user"]
    # a confirmation in a session whose last turn is the user's own takes up nothing
    engine.add("I need new running shoes, size 43", user_id="u", session_id="s2", now=t0)
    r2 = engine.add("ok, book it", user_id="u", session_id="s2", now=t0 + timedelta(minutes=1))
    assert r2.outcome != "merged"
