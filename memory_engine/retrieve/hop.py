"""Entity hop (multi-hop questions): the top hits name entities the query does
not ('my manager is Sarah Lee'); a keyword search for them finds memories one
hop away ('Sarah Lee works in London'). A memory reached that way inherits its
parent's relevance and ranks below the parent (``hop_discount`` x its score).

A link is a shared name (an entity of either memory, or a name introduced by a
naming word: '林静的女儿叫朵朵', 'a dog called Lucky') or at least
``retrieval.hop_min_shared`` shared content words the query does not hold: a
project and its dependency share the project's words ('the checkout redesign
depends on the pricing service'), a dependency and its blocker the dependency's
('支付组的结算接口推迟了'). Chains of ``retrieval.hop_depth`` links are followed
(person -> relation -> attribute; project -> dependency -> blocker): a memory
reached at one hop is searched from in turn, and each step ranks below its parent."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np

from ..config import RetrievalSection
from ..errors import ConfigError
from ..store.base import StoreFilter, VectorStore
from ..text import _CJK, _jieba, _jieba_lock, content_terms, entities, sparse_query
from .admission import Admission
from .candidates import CandidateBuilder, is_cjk
from .fusion import Candidate
from .query import QueryPlan

__all__ = ["EntityHop", "hop_terms", "named_terms"]

#: a name introduced by a naming word ('叫朵朵', '名叫 Lucky', 'named Max', 'called Mochi'): jieba tags
#: reduplicated or rare names as anything but names (朵朵: quantifier), and English names may be lower case
_NAMING = re.compile(r"(?:名叫|叫做|叫|named|called)\s*([A-Za-z][\w'-]*|[\u4e00-\u9fff]{1,3})", re.IGNORECASE)

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


def named_terms(content: str) -> frozenset[str]:
    """Content terms of the names ``content`` introduces through a naming word (叫/名叫/named/called),
    kept only where they are terms of the memory itself (a three-character grab '朵朵今' keeps 朵朵)."""
    own = content_terms(content)
    out: set[str] = set()
    for m in _NAMING.finditer(content):
        name = m.group(1)
        terms: frozenset[str] = content_terms(name) & own
        if not terms and _CJK.fullmatch(name):
            # a CJK grab runs into the next word ('朵朵今'): keep the terms of the memory it starts
            terms = frozenset(t for t in own if name.startswith(t) and len(t) > 1)
        out |= terms
    return frozenset(out)


@lru_cache(maxsize=65_536)
def _link_words(content: str) -> tuple[frozenset[str], frozenset[str]]:
    """(names, words) of a memory for linking: names = entities, Chinese nouns and introduced names;
    words = every content term. Cached: a store's memories recur across queries and jieba's tagger
    costs about a millisecond a sentence."""
    return hop_terms(content) | named_terms(content), content_terms(content)


class EntityHop:
    """``enabled`` when ``retrieval.entity_hops`` and ``hop_limit`` > 0. ``hop(parents, fused,
    payloads, flt, admit, plan)`` keyword-searches the entities of each parent's content
    (minus the query's terms; the rows ``admit`` refuses left out,
    :class:`~memory_engine.retrieve.admission.Admission`) and returns ``{memory id: (candidate, parent id)}`` for at most
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
        if rcfg.hop_depth < 1 or rcfg.hop_min_shared < 1:
            raise ConfigError("retrieval.hop_depth and hop_min_shared must be >= 1", key="retrieval.hop_depth")
        self.store, self.builder = store, builder
        self.enabled = bool(rcfg.entity_hops and rcfg.hop_limit)
        self.limit, self.parents, self.discount_factor = rcfg.hop_limit, rcfg.hop_parents, rcfg.hop_discount
        self.floor = rcfg.floor
        self.depth, self.min_shared = rcfg.hop_depth, rcfg.hop_min_shared
        # a search for every word of the parent ranks rows sharing one common word high: read as many rows as a
        # route does, then keep only the linked ones
        self.search_limit = rcfg.route_limit

    def hop(self, kept: list[Candidate], fused: list[Candidate], payloads: dict[str, dict[str, Any]],
            flt: StoreFilter, admit: Admission, plan: QueryPlan) -> dict[str, tuple[Candidate, str]]:
        by_id = {c.memory_id: c for c in fused}
        out: dict[str, tuple[Candidate, str]] = {}
        frontier = kept[: self.parents]
        seen = {c.memory_id for c in frontier}
        for _ in range(self.depth):
            reached: list[Candidate] = []
            for parent in frontier:
                if len(out) >= self.limit:
                    break
                for c in self._links(parent, by_id, payloads, flt, admit, plan, seen, self.limit - len(out)):
                    out[c.memory_id] = (c, parent.memory_id)
                    seen.add(c.memory_id)
                    reached.append(c)
            if not reached or len(out) >= self.limit:
                break
            frontier = reached[: self.parents]
        return out

    def _links(self, parent: Candidate, by_id: dict[str, Candidate], payloads: dict[str, dict[str, Any]],
               flt: StoreFilter, admit: Admission, plan: QueryPlan, seen: set[str], room: int) -> list[Candidate]:
        """The memories linked to ``parent`` (a shared name, or >= ``min_shared`` shared words outside the
        query), best BM25 first, at most ``room``, each carrying the parent's relevance."""
        names, words = _link_words(payloads[parent.memory_id].get("content", ""))
        names, words = names - plan.terms, words - plan.terms
        if not names and len(words) < self.min_shared:
            return []
        rows = self.store.search_sparse(sparse_query(names | words), flt, self.search_limit + len(seen))
        missing = [p.id for p in rows if p.id not in payloads]
        vecs = {p.id: p.dense for p in self.store.retrieve(missing, with_vectors=True)} if missing else {}
        out: list[Candidate] = []
        for rank, p in enumerate(rows, start=1):
            if p.id in seen or not admit.admits(p):
                continue
            if len(out) >= room:
                break
            c_names, c_words = _link_words(str(p.payload.get("content", "")))
            shared = ((words | names) & (c_words | c_names)) - plan.terms
            if not (shared & (names | c_names)) and len(shared) < self.min_shared:
                continue  # one common word ('quarter', '下周') is no link
            inherited = parent.relevance
            c = by_id.get(p.id)
            if c is None:
                v = vecs.get(p.id)
                cos = float(np.dot(np.asarray(v, dtype=np.float32), plan.vector)) if v is not None else 0.0
                c = self.builder.candidate(p.id, p.payload, cos, plan.cover_terms, {}, {}, False, plan.session_id,
                                           plan.ts, is_cjk(plan.query), plan.query)
            if c.relevance >= inherited or c.relevance >= self.floor:
                continue  # it passes on its own: the hop would only cap its score below the parent
            payloads.setdefault(p.id, p.payload)
            ranks = {**c.route_ranks, "hop": rank}
            scores = {**c.route_scores, "hop": float(p.score)}
            out.append(replace(c, exact_match=max(c.exact_match, inherited), route_ranks=ranks, route_scores=scores))
        return out

    def discount(self, refused: list[Candidate], hopped: dict[str, tuple[Candidate, str]],
                 parent_score: dict[str, float]) -> list[Candidate]:
        """A memory reached through an entity ranks below the hit that named it (a second hop below the
        first: caps follow the chain in the order the hop reached them)."""
        fused = {c.memory_id: c.fused for c in refused}
        capped: dict[str, float] = {}
        for mid, (_, parent) in hopped.items():  # insertion order: a parent is capped before its child
            if mid in fused:
                base = capped.get(parent, parent_score.get(parent, fused.get(parent, 0.0)))
                capped[mid] = min(fused[mid], self.discount_factor * base)
        return sorted((replace(c, fused=capped[c.memory_id]) if c.memory_id in capped else c for c in refused),
                      key=lambda c: (-c.fused, c.memory_id))
