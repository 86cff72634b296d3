"""The request as one more example of the kind it needs (issue 16, session 11): query-time category membership
blends a memory's centred cosine to the request with its score to the category's example facts
(``intent.member_request_weight``, write/categories.py ``Categories.membership``)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from pydantic import ValidationError

from memory_engine.config import IntentSection
from memory_engine.write.categories import NONE, Categories, _unit


@pytest.mark.integration
def test_membership_blends_the_request_by_its_weight_and_ignores_it_at_zero(embedder):
    facts = ["I put every restaurant bill on my Amex Gold", "the fence got fixed last week"]
    vecs = embedder.embed_documents(facts)
    req = embedder.embed_query("the restaurant wants a deposit, go ahead and pay it")
    plain = Categories(embedder, IntentSection(member_request_weight=0.0))
    blend = Categories(embedder, IntentSection(member_request_weight=0.25))  # any w in (0, 1]
    # weight 0, or no request: the examples-only score (the old rule)
    assert np.allclose(plain.membership(vecs, "payment", req), plain.membership(vecs, "payment"))
    assert np.allclose(blend.membership(vecs, "payment"), plain.membership(vecs, "payment"))
    # weight w: (1 - w) x category score + w x centred cosine to the request, minus the reject class's score
    bank = blend._member_bank()
    s = bank.knn(vecs, blend.cfg.member_k)
    to_req = _unit(np.asarray(vecs) - bank.mean) @ _unit(np.asarray(req) - bank.mean)
    want = 0.75 * s["payment"] + 0.25 * to_req - s[NONE]
    assert np.allclose(blend.membership(vecs, "payment", req), want, atol=1e-5)
    # the card rule the request needs keeps a lead over the unrelated statement
    got = blend.membership(vecs, "payment", req)
    assert got[0] > got[1]


def test_the_request_weight_is_a_share_in_zero_to_one():
    with pytest.raises(ValidationError):
        IntentSection(member_request_weight=1.5)
    with pytest.raises(ValidationError):
        IntentSection(member_request_weight=-0.1)


@pytest.mark.integration
def test_a_flight_request_with_only_a_tea_habit_stored_returns_nothing(make_engine, t0):
    # the tea habit sits near the example facts of travel on e5 ('我最喜欢喝茉莉花茶' +0.08 over the reject class),
    # but far from the request: blended, it stays below the ramp
    eng = make_engine()
    eng.add("我最喜欢喝茉莉花茶", user_id="u", session_id="s1", now=t0)
    eng.add("外甥下个月过十岁生日", user_id="u", session_id="s2", now=t0 + timedelta(hours=1))
    eng.add("我每天坐地铁二号线上班", user_id="u", session_id="s3", now=t0 + timedelta(hours=2))
    res = eng.retrieve("帮我订一张周五去深圳的机票", user_id="u", session_id="s4", now=t0 + timedelta(days=3))
    assert not any("茶" in h.content for h in res.hits)


@pytest.mark.integration
def test_a_deposit_request_finds_the_card_rule_that_names_dining(make_engine, t0):
    eng = make_engine()
    card = eng.add("put anything travel or dining on the Chase Sapphire, no foreign fees and 3x points",
                   user_id="u", session_id="s1", now=t0).memory_id
    eng.add("the neighbours finally fixed the fence", user_id="u", session_id="s2", now=t0 + timedelta(hours=1))
    eng.add("my daughter turned out to be allergic to cats", user_id="u", session_id="s3", now=t0 + timedelta(hours=2))
    res = eng.retrieve("the dinner reservation needs a deposit, go ahead and pay it", user_id="u", session_id="s4",
                       now=t0 + timedelta(days=3))
    assert card in res.ids
    assert not any("fence" in h.content for h in res.hits)
