"""Facts by intent with neighbouring categories (write/categories.py): a request or statement whose
best categories lie within the margin of each other is routed to / tagged with all of them (up to
``intent.max_categories``), never when the reject class is within the margin. Real bundled e5 and an
in-memory engine for the route; the decision rule itself on hand-made score lists."""

from __future__ import annotations

from datetime import timedelta

from memory_engine.config import IntentSection
from memory_engine.write.categories import Categories, categories_of

_decide = Categories._decide


def test_a_close_call_between_two_categories_routes_to_both():
    ranked = [(0.897, "shipping"), (0.885, "payment"), (0.860, "food"), (0.850, "none")]
    labels = _decide(ranked, 0.85, 0.015, 2)
    assert [lb.name for lb in labels] == ["shipping", "payment"]
    assert labels[1].margin == round(0.885 - 0.860, 6)  # each label's lead over the first class outside
    # one winner by the margin, or nothing: the rule before close calls (max_categories = 1)
    assert _decide(ranked, 0.85, 0.015, 1) == ()
    assert [lb.name for lb in _decide([(0.9, "food"), (0.87, "travel"), (0.8, "none")], 0.85, 0.015, 1)] == ["food"]


def test_the_reject_class_or_too_many_close_calls_route_nowhere():
    # 'none' within the margin of the best: the request may need nothing
    assert _decide([(0.90, "shipping"), (0.89, "none"), (0.80, "food")], 0.85, 0.015, 2) == ()
    # three categories within the margin: too vague a call
    assert _decide([(0.90, "shipping"), (0.895, "payment"), (0.89, "food"), (0.8, "none")], 0.85, 0.015, 2) == ()
    assert _decide([(0.84, "shipping"), (0.70, "none")], 0.85, 0.015, 2) == ()  # too far from every example
    assert _decide([(0.95, "none"), (0.80, "food")], 0.85, 0.015, 2) == ()


def test_a_statement_between_shipping_and_purchase_is_tagged_with_both_and_found(make_engine, t0, embedder):
    """'退换货都让中通上门来取' is nearest the shipping examples but within the fact margin of the purchase
    ones: with one winner required it was not tagged and a return request did not find it."""
    text = "退换货都让中通上门来取"
    vec = embedder.embed_documents([text])[0]
    assert Categories(embedder, IntentSection(max_categories=1, truncate=False)).fact_labels(vec) == ()
    assert [lb.name for lb in Categories(embedder, IntentSection()).fact_labels(vec)] == ["shipping", "purchase"]
    eng = make_engine()
    mid = eng.add(text, user_id="u", session_id="s1", now=t0).memory_id
    eng.add("周末带女儿去了趟动物园", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    assert categories_of(eng.store.retrieve([mid])[0].payload) == {"shipping", "purchase"}
    res = eng.retrieve("帮我寄个快递给我妈", user_id="u", session_id="s2", now=t0 + timedelta(days=2))
    assert res.ids[:1] == [mid] and "intent" in res.hits[0].sources  # found through its category tags
    assert not any("动物园" in h.content for h in res.hits)
