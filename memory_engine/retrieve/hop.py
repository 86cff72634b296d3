"""Entity hop (multi-hop questions): the top hits name entities the query does
not ('my manager is Sarah Lee'); a keyword search for them finds memories one
hop away ('Sarah Lee works in London'). A memory reached that way inherits its
parent's relevance and ranks below the parent (``hop_discount`` x its score)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..config import RetrievalSection
from ..errors import ConfigError
from ..scope import Scope
from ..store.base import StoreFilter, VectorStore
from ..text import _CJK, _jieba, _jieba_lock, content_terms, entities, sparse_query
from .candidates import CandidateBuilder, is_cjk
from .fusion import Candidate
from .query import QueryPlan

__all__ = ["EntityHop", "hop_terms"]

#: jieba part-of-speech flags of nouns (common, proper, verbal): what a Chinese memory is about
_ZH_NOUNS = ("n", "nz", "vn", "nr", "ns", "nt", "nrt", "nw")


def hop_terms(content: str) -> frozenset[str]:
    """The words a hop searches for: named entities (:func:`memory_engine.text.entities`) and,
    in Chinese, every noun of two or more characters. Chinese has no capitals to mark a name
    and jieba tags only people, places and organisations, so events and things
    ('教育创新研讨会', '洗碗机') would never link two memories; BM25's IDF then prefers the
    rare ones over generic nouns ('时间')."""
    out = set(entities(content))
    if _CJK.search(content):
        import jieba.posseg as pseg

        _jieba()
        with _jieba_lock:
            nouns = [w.word for w in pseg.cut(content) if w.flag in _ZH_NOUNS and len(w.word) > 1]
        for n in nouns:
            out |= content_terms(n)
    return frozenset(out)


class EntityHop:
    """``enabled`` when ``retrieval.entity_hops`` and ``hop_limit`` > 0. ``hop(parents, fused,
    payloads, flt, scope, plan)`` keyword-searches the entities of each parent's content
    (minus the query's terms) and returns ``{memory id: (candidate, parent id)}`` for at most
    ``hop_limit`` memories whose own relevance is below the parent's; each candidate carries
    the parent's relevance in ``exact_match`` and a ``hop`` route rank. New rows' payloads are
    added to ``payloads``. ``discount(fused, hopped, parent_scores)`` caps a hopped memory's
    fused score at ``hop_discount`` x its parent's. Raises ConfigError for a
    ``hop_discount`` outside [0, 1] or ``hop_limit`` < 0."""

    def __init__(self, store: VectorStore, builder: CandidateBuilder, rcfg: RetrievalSection) -> None:
        if not 0.0 <= rcfg.hop_discount <= 1.0:
            raise ConfigError("retrieval.hop_discount must be in [0, 1]", key="retrieval.hop_discount")
        if rcfg.hop_limit < 0 or rcfg.hop_parents < 1:
            raise ConfigError("retrieval.hop_limit must be >= 0 and hop_parents >= 1", key="retrieval.hop_limit")
        self.store, self.builder = store, builder
        self.enabled = bool(rcfg.entity_hops and rcfg.hop_limit)
        self.exclude_flagged = rcfg.exclude_flagged
        self.limit, self.parents, self.discount_factor = rcfg.hop_limit, rcfg.hop_parents, rcfg.hop_discount
        self.floor = rcfg.floor

    def hop(self, kept: list[Candidate], fused: list[Candidate], payloads: dict[str, dict[str, Any]],
            flt: StoreFilter, scope: Scope, plan: QueryPlan) -> dict[str, tuple[Candidate, str]]:
        by_id = {c.memory_id: c for c in fused}
        out: dict[str, tuple[Candidate, str]] = {}
        for parent in kept[: self.parents]:
            ents = hop_terms(payloads[parent.memory_id].get("content", "")) - plan.terms
            if not ents:
                continue
            rows = self.store.search_sparse(sparse_query(ents), flt, self.limit + 1)
            missing = [p.id for p in rows if p.id not in payloads]
            vecs = {p.id: p.dense for p in self.store.retrieve(missing, with_vectors=True)} if missing else {}
            for rank, p in enumerate(rows, start=1):
                if p.id == parent.memory_id or not scope.owns(p) or (self.exclude_flagged and p.payload.get("flagged")):
                    continue
                if len(out) >= self.limit:
                    break
                inherited = parent.relevance
                c = by_id.get(p.id)
                if c is None:
                    payloads[p.id] = p.payload
                    v = vecs.get(p.id)
                    cos = float(np.dot(np.asarray(v, dtype=np.float32), plan.vector)) if v is not None else 0.0
                    c = self.builder.candidate(p.id, p.payload, cos, plan.cover_terms, {}, {}, False, plan.session_id,
                                               plan.ts, is_cjk(plan.query), plan.query)
                if c.relevance >= inherited or c.relevance >= self.floor:
                    continue  # it passes on its own: the hop would only cap its score below the parent
                ranks = {**c.route_ranks, "hop": rank}
                scores = {**c.route_scores, "hop": float(p.score)}
                out[p.id] = (replace(c, exact_match=max(c.exact_match, inherited), route_ranks=ranks,
                                     route_scores=scores), parent.memory_id)
        return out

    def discount(self, refused: list[Candidate], hopped: dict[str, tuple[Candidate, str]],
                 parent_score: dict[str, float]) -> list[Candidate]:
        """A memory reached through an entity ranks below the hit that named it."""
        return sorted(
            (replace(c, fused=min(c.fused, self.discount_factor * parent_score[hopped[c.memory_id][1]]))
             if c.memory_id in hopped else c for c in refused),
            key=lambda c: (-c.fused, c.memory_id))
