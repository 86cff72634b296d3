"""The keyword route's candidates are a function of the data, not of the store's segment layout
(retrieval.keyword_tie_extra): with keyword.b = 0 every memory holding the same query terms has
the same BM25 score, and the store cuts such a tie wherever its segments put the members."""

from __future__ import annotations

import numpy as np
import pytest

from memory_engine.config import RetrievalSection
from memory_engine.models import MemoryRecord, MemoryType, Source
from memory_engine.retrieve.routes import KeywordRoute, RouteQuery, settle_ties
from memory_engine.scope import Scope
from memory_engine.store.base import ScoredPayload, StoredPoint
from memory_engine.store.edge import EdgeStore
from memory_engine.text import content_terms, sparse_document

SCOPE = Scope("t", "u", "v")
#: 12 memories holding the query's two terms and one word of their own each (a tie of 12), 3 holding one term
TIED = [f"Melanie painted the {w} at the lake" for w in
        ("barn", "boat", "bridge", "cabin", "church", "dock", "fence", "garden", "harbor", "mill", "pier", "tower")]
WEAK = ["Melanie went to the lake", "the lake was cold", "Melanie likes tea"]


def _store(order: list[int]) -> EdgeStore:
    st = EdgeStore(ephemeral=True)
    st.ensure_collection(4)
    texts = TIED + WEAK
    for i in order:  # one point per upsert, in the given order: a different segment layout per order
        terms = tuple(sorted(content_terms(texts[i])))
        rec = MemoryRecord(id=f"{i:016x}", tenant_id="t", user_id="u", content=texts[i],
                           memory_type=MemoryType.EPISODIC, importance=0.5, source=Source.USER_STATED,
                           created_at=1.0 + i, updated_at=1.0 + i, last_access_at=1.0 + i, embedding_version="v",
                           terms=terms, tokens=6)
        st.upsert([StoredPoint(rec.id, [1.0, 0.0, 0.0, float(i)], sparse_document(terms), rec.to_payload())])
    return st


def _route_ids(st: EdgeStore, extra: int) -> list[str]:
    route = KeywordRoute(st, RetrievalSection(route_limit=5, keyword_tie_extra=extra))
    q = "What did Melanie paint at the lake?"
    terms = frozenset(content_terms(q)) - {"lake"}  # Melanie + paint: the 12 tie, WEAK hold one of them
    assert terms == {"melani", "paint"}
    rq = RouteQuery(q, q, terms, np.zeros(4), SCOPE, SCOPE.filter())
    return [p.id for p in route.search(rq)]


def test_a_tie_at_the_cut_is_kept_whole_and_ordered_by_id_whatever_the_insert_order():
    n = len(TIED) + len(WEAK)
    a = _route_ids(_store(list(range(n))), extra=20)
    b = _route_ids(_store(list(reversed(range(n)))), extra=20)
    tied_ids = sorted(f"{i:016x}" for i in range(len(TIED)))
    assert a == b
    assert a[: len(TIED)] == tied_ids  # all 12 tied memories, not 5 of them, in id order
    assert len(a) == len(TIED)  # the weaker rows below the tie are not added


def test_without_extra_rows_the_route_keeps_route_limit_rows():
    ids = _route_ids(_store(list(range(len(TIED) + len(WEAK)))), extra=0)
    assert len(ids) == 5 and ids == sorted(ids)


def test_settle_ties_orders_a_tie_across_the_cut_by_id_and_leaves_distinct_scores_alone():
    rows = [ScoredPayload("d", 3.0, {}), ScoredPayload("c", 2.0, {}), ScoredPayload("a", 2.0 * (1 + 1e-8), {}),
            ScoredPayload("b", 2.0, {}), ScoredPayload("e", 1.0, {})]
    assert [p.id for p in settle_ties(rows, 2)] == ["d", "a", "b", "c"]
    assert [p.id for p in settle_ties(rows, 4)] == ["d", "a", "b", "c"]
    assert [p.id for p in settle_ties(rows, 5)] == ["d", "a", "b", "c", "e"]
    assert settle_ties([], 3) == []


def test_negative_tie_extra_is_refused():
    with pytest.raises(ValueError):
        RetrievalSection(keyword_tie_extra=-1)
