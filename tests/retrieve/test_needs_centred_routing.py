"""Facts by need (issue 16, class 4): requests are routed to fact categories by mean-centred cosines
(write/categories.py ``_Bank``), a routed request also needs the neighbouring categories within
``intent.query_also_margin`` of the best (never one the reject class beats), a close call with more
categories than ``intent.max_categories`` keeps the best ones (``intent.truncate``), and the bundled
examples cover medication, gifts and scheduling. The centring and the decision rule on hand-made
vectors and score lists; the routing and the engine with the real bundled e5 and the in-memory engine."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from memory_engine.config import IntentSection
from memory_engine.write.categories import Categories, _Bank

_decide = Categories._decide


def test_a_centred_bank_scores_by_the_cosine_of_mean_removed_vectors():
    rng = np.random.default_rng(7)  # fixed seed: the oracle below must see the same vectors
    vecs = rng.normal(size=(6, 8)).astype(np.float32) + 3.0  # a shared offset, like e5's common direction
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    cats = ["a", "a", "b", "b", "none", "none"]
    q = vecs[0] * 0.6 + vecs[2] * 0.4
    mu = vecs.mean(axis=0)
    cen = (vecs - mu) / np.linalg.norm(vecs - mu, axis=1, keepdims=True)
    qc = (q - mu) / np.linalg.norm(q - mu)
    want = {n: max(float(cen[i] @ qc) for i, c in enumerate(cats) if c == n) for n in set(cats)}
    got = {n: s for s, n in _Bank(vecs, cats, center=True).nearest(q)}
    assert got == pytest.approx(want, abs=1e-5)
    raw = {n: s for s, n in _Bank(vecs, cats).nearest(q)}  # uncentred: the plain cosine (the old scores)
    assert raw["a"] == pytest.approx(max(float(vecs[i] @ q) for i in (0, 1)), abs=1e-5)
    # the shared offset packs raw scores together; centring spreads them apart
    assert max(raw.values()) - min(raw.values()) < max(got.values()) - min(got.values())


def test_a_routed_request_also_needs_the_neighbours_within_the_band_but_none_the_reject_class_beats():
    ranked = [(0.50, "gift"), (0.37, "shipping"), (0.28, "payment"), (0.20, "none")]
    assert [lb.name for lb in _decide(ranked, 0.30, 0.13, 2, also_margin=0.15)] == ["gift", "shipping"]
    assert [lb.name for lb in _decide(ranked, 0.30, 0.13, 2)] == ["gift"]  # no band: the margin alone
    # a category behind the reject class is not needed, however close to the best
    assert [lb.name for lb in _decide([(0.50, "gift"), (0.36, "none"), (0.36, "shipping")], 0.30, 0.13, 2,
                                      also_margin=0.15)] == ["gift"]
    # the reject class within the margin of the best: routed nowhere
    assert _decide([(0.37, "shipping"), (0.25, "none")], 0.30, 0.13, 2, also_margin=0.15) == ()


def test_a_close_call_of_three_keeps_the_best_two_when_truncating():
    ranked = [(0.921, "health"), (0.916, "food"), (0.912, "schedule"), (0.80, "none")]
    assert _decide(ranked, 0.83, 0.02, 2) == ()  # the rule before: too vague, untagged
    assert [lb.name for lb in _decide(ranked, 0.83, 0.02, 2, truncate=True)] == ["health", "food"]


@pytest.mark.integration
@pytest.mark.parametrize(("request_text", "needs"), [
    ("my tooth is killing me, which painkiller can I take?", {"health"}),
    ("咳嗽得厉害，去药店买点什么药好", {"health"}),
    ("给我妹妹挑个毕业礼物", {"gift"}),
    ("schedule a call with the design team on Thursday", {"schedule"}),
    ("帮我跟设计组约个会", {"schedule"}),
    ("给闺蜜挑了条围巾，帮我安排一下送到她手上", {"gift", "shipping"}),
])
def test_requests_are_routed_to_the_categories_they_need(embedder, request_text, needs):
    labels = Categories(embedder, IntentSection()).query_labels(embedder.embed_query(request_text))
    assert needs <= {lb.name for lb in labels}


@pytest.mark.integration
@pytest.mark.parametrize("request_text", [
    "help me word a polite email declining a job offer",
    "Write me a haiku about the ocean at night",
    "“物是人非”翻译成英文怎么说",
])
def test_requests_that_need_nothing_personal_are_routed_nowhere(embedder, request_text):
    assert Categories(embedder, IntentSection()).query_labels(embedder.embed_query(request_text)) == ()


@pytest.mark.integration
def test_a_medication_request_finds_the_drug_rule_and_not_the_other_facts(make_engine, t0):
    eng = make_engine()
    drug = eng.add("I've been on blood thinners since my knee surgery, so aspirin is out for me", user_id="u",
                   session_id="s1", now=t0).memory_id
    eng.add("the kids' school starts at 8:15 this year", user_id="u", session_id="s2", now=t0 + timedelta(hours=1))
    eng.add("send anything for me to 9 Harbour Road, flat 2", user_id="u", session_id="s3",
            now=t0 + timedelta(hours=2))
    res = eng.retrieve("my tooth is killing me, which painkiller can I take?", user_id="u", session_id="s4",
                       now=t0 + timedelta(days=3))
    assert drug in res.ids
    assert not any("school" in h.content or "Harbour" in h.content for h in res.hits)


@pytest.mark.integration
def test_a_medication_request_with_no_medical_fact_stored_returns_no_near_miss(make_engine, t0):
    eng = make_engine()
    eng.add("send anything for me to 9 Harbour Road, flat 2", user_id="u", session_id="s1", now=t0)
    eng.add("I pay for everything online with my Visa", user_id="u", session_id="s2", now=t0 + timedelta(hours=1))
    res = eng.retrieve("my tooth is killing me, which painkiller can I take?", user_id="u", session_id="s3",
                       now=t0 + timedelta(days=3))
    assert res.hits == [] or not any("Harbour" in h.content or "Visa" in h.content for h in res.hits)
