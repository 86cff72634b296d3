"""Retrieval routes (SEED_DIGEST section 4): each route is one object behind the
:class:`Route` protocol, registered by name in :data:`ROUTES`.

=============  ========  ==========================================================
name           channel   returns
=============  ========  ==========================================================
``dense``      vector    nearest by the query embedding (cosine)
``keyword``    keyword   sparse BM25 over the query's content terms (seed 002)
``recent``     recent    the owner's most recently used memories (seed 000)
``fact``       fact      structured facts whose key parts or value match a query term
                         (seed 001: exact, never by vector)
``constraint`` fact      every explicit constraint, on a recommendation request
                         (seed 001: constraints are checked first)
``fact_meaning`` meaning   facts by meaning (issue 16): the owner's facts nearest the
                         query embedding, rescaled similarity >= ``fact_similarity``
                         (a shipping request finds the default-courier fact)
``intent``     intent    the owner's memories tagged at write with a fact category
                         the request was routed to (write/categories.py), newest first
``date``       date      the owner's memories written within the date range the query
                         names ('on 7 July', '上周五'), nearest the query embedding first
=============  ========  ==========================================================

The *channel* is the ranked list a route's rows join for fusion (RRF ranks per
channel): the constraint route extends the fact channel. Every route reads
through the call's mandatory filter (owner, status, embedding version). The
entity hop (retrieve/hop.py) adds one more channel, ``hop``. :data:`CHANNELS` lists
them all, once: a hit's ``sources`` and every table of routes (``memwb retrieve``,
its ``--explain``, the app's hits) name a memory's channels in that order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from ..config import IntentSection, RetrievalSection
from ..errors import ConfigError
from ..models import MemoryType
from ..scope import Scope
from ..store.base import ScoredPayload, StoreFilter, VectorStore
from ..text import content_terms, keyword_coverage, sparse_query
from ..write import rules
from ..write.categories import AnswerTypes, Categories, about_other_person

__all__ = ["CHANNELS", "DEFAULT_ROUTES", "HOP_CHANNEL", "ROUTES", "ConstraintRoute", "DateRoute", "DenseRoute", "FactRoute",
           "IntentRoute", "KeywordRoute", "RecentRoute", "Route", "RouteQuery", "build_routes", "channels_of"]


@dataclass(frozen=True)
class RouteQuery:
    """What every route may read: the user's ``query``, the searched ``text`` (rewritten or
    not) and its ``terms``, the query ``vector``, the owner ``scope``, the call's mandatory
    store ``filter``, the caller's ``memory_types`` restriction (None = all) and the fact
    ``category`` the request was routed to (write/categories.py; None = none)."""

    query: str
    text: str
    terms: frozenset[str]
    vector: np.ndarray
    scope: Scope
    filter: StoreFilter
    memory_types: tuple[str, ...] | None = None
    category: str | None = None
    #: further categories the request was routed to (a close call between neighbouring kinds)
    also: tuple[str, ...] = ()
    #: query-side BM25 weight per term (QueryPlan.term_weights; None = 1.0 each)
    weights: Mapping[str, float] | None = None
    #: [start, end) epoch seconds of the date range the query names (QueryPlan.date_range; None = none)
    date_range: tuple[float, float] | None = None

    @property
    def categories(self) -> tuple[str, ...]:
        """Every routed category, best first (empty = not routed)."""
        return ((self.category,) if self.category else ()) + tuple(c for c in self.also if c != self.category)


class Route(Protocol):
    """A retrieval route: ``name`` (registry key), ``channel`` (the ranked list its rows join)
    and ``search(q)``, best first (an empty list when the route does not apply)."""

    name: str
    channel: str

    def search(self, q: RouteQuery) -> list[ScoredPayload]: ...


def _positive(value: int, key: str) -> int:
    if value < 1:
        raise ConfigError(f"{key} must be >= 1", key=key)
    return value


class DenseRoute:
    name, channel = "dense", "vector"

    def __init__(self, store: VectorStore, rcfg: RetrievalSection) -> None:
        self.store, self.limit = store, _positive(rcfg.route_limit, "retrieval.route_limit")

    def search(self, q: RouteQuery) -> list[ScoredPayload]:
        return self.store.search_dense(q.vector.tolist(), q.filter, self.limit)


class DateRoute:
    """The ``retrieval.date_route_limit`` memories written within the query's date range (the store's
    ``created_after`` / ``created_before`` filter), nearest the query embedding first: a question naming a day
    ('What did Maria mention on 31 July?', '上周五我干嘛了') is answered by that day's memories even when they share
    few words with it, and the dense and keyword routes' top rows of all time may hold none of them (the
    candidates' date match, retrieve/candidates.py, then ranks them). Memories that name the day only by an event
    time told on another day are left to the other routes. A range longer than ``retrieval.date_route_max_days``
    ('in March', 'last year') holds too many memories for the date to pick among: the other routes' do. 0 or no date
    = off."""

    name, channel = "date", "date"

    def __init__(self, store: VectorStore, rcfg: RetrievalSection) -> None:
        if rcfg.date_route_limit < 0:
            raise ConfigError("retrieval.date_route_limit must be >= 0", key="retrieval.date_route_limit")
        self.store, self.limit, self.max_days = store, rcfg.date_route_limit, rcfg.date_route_max_days

    def search(self, q: RouteQuery) -> list[ScoredPayload]:
        if not self.limit or q.date_range is None:
            return []
        start, end = q.date_range
        if end - start > self.max_days * 86400.0:
            return []
        # created_before is inclusive: the range is half-open
        flt = replace(q.filter, created_after=start, created_before=max(start, end - 1e-3))
        return self.store.search_dense(q.vector.tolist(), flt, self.limit)


class KeywordRoute:
    """Sparse BM25 over the query terms; rows whose query-term coverage is below
    ``retrieval.keyword_min_coverage`` (0..1) are dropped."""

    name, channel = "keyword", "keyword"

    def __init__(self, store: VectorStore, rcfg: RetrievalSection) -> None:
        if not 0.0 <= rcfg.keyword_min_coverage <= 1.0:
            raise ConfigError("retrieval.keyword_min_coverage must be in [0, 1]", key="retrieval.keyword_min_coverage")
        self.store, self.limit = store, _positive(rcfg.route_limit, "retrieval.route_limit")
        self.min_coverage = rcfg.keyword_min_coverage
        self.tie_extra = rcfg.keyword_tie_extra

    def search(self, q: RouteQuery) -> list[ScoredPayload]:
        if not q.terms:
            return []
        rows = settle_ties(self.store.search_sparse(sparse_query(q.terms, q.weights), q.filter,
                                                    self.limit + self.tie_extra), self.limit)
        if self.min_coverage > 0:
            rows = [p for p in rows if keyword_coverage(q.terms, p.payload.get("terms") or ()) >= self.min_coverage]
        return rows


def settle_ties(rows: list[ScoredPayload], limit: int, rel_tol: float = 1e-6) -> list[ScoredPayload]:
    """The first ``limit`` of ``rows`` (a store's answer, best first, possibly longer than ``limit``) plus every
    later row whose score ties the ``limit``-th's (within ``rel_tol`` relative: float32 scores), the whole list
    ordered by score descending, then memory id: which members of a tie the store returns, and in which order,
    depends on its segment layout; this makes the route's candidates a function of the data alone whenever the
    tie fits in the rows fetched. ``limit`` >= 1; rows untouched."""
    if not rows:
        return []
    ordered = sorted(rows, key=lambda p: (-p.score, p.id))
    if len(ordered) <= limit:
        return ordered
    cut = ordered[limit - 1].score
    tol = rel_tol * max(abs(cut), 1e-12)
    keep = [p for p in ordered[limit:] if abs(p.score - cut) <= tol]
    head = ordered[:limit]
    # rows tied across the sort boundary are one group: order the group by id as well
    return sorted(head + keep, key=lambda p: (-_tie_key(p.score, cut, tol), p.id))


def _tie_key(score: float, cut: float, tol: float) -> float:
    return cut if abs(score - cut) <= tol else score


class RecentRoute:
    """The ``retrieval.recent_limit`` most recently used memories (0 = route off)."""

    name, channel = "recent", "recent"

    def __init__(self, store: VectorStore, rcfg: RetrievalSection) -> None:
        if rcfg.recent_limit < 0:
            raise ConfigError("retrieval.recent_limit must be >= 0", key="retrieval.recent_limit")
        self.store, self.limit = store, rcfg.recent_limit

    def search(self, q: RouteQuery) -> list[ScoredPayload]:
        if not self.limit:
            return []
        return self.store.scroll(q.filter, limit=self.limit, order_by="last_access_at", descending=True)


def fact_key_parts(key: str, value: object) -> set[str]:
    """The words a fact is found by: its key split on ``._-/`` and spaces, plus the content terms of key and value."""
    parts = set(re.split(r"[._\-\s/]+", key.lower())) | content_terms(key.replace(".", " "))
    return parts | content_terms(str(value))


class FactRoute:
    """Structured facts (any embedding version) whose key parts or value share a query term;
    scans at most ``retrieval.fact_scan_limit`` facts of the owner; score 1.0."""

    name, channel = "fact", "fact"

    def __init__(self, store: VectorStore, rcfg: RetrievalSection) -> None:
        self.store, self.limit = store, _positive(rcfg.fact_scan_limit, "retrieval.fact_scan_limit")

    def search(self, q: RouteQuery) -> list[ScoredPayload]:
        if not q.terms or (q.memory_types and MemoryType.FACT.value not in q.memory_types):
            return []
        flt = q.scope.filter(memory_types=(MemoryType.FACT.value,), embedding_version=None)
        out = []
        for p in self.store.scroll(flt, limit=self.limit):
            if q.terms & fact_key_parts(str(p.payload.get("fact_key") or ""), p.payload.get("fact_value")):
                out.append(ScoredPayload(p.id, 1.0, p.payload))
        return out


class ConstraintRoute:
    """On a recommendation request (:data:`memory_engine.write.rules.RECOMMEND_INTENT`) and with
    ``retrieval.constraints_on_recommend``, every constraint of the owner (up to ``route_limit``), score 1.0."""

    name, channel = "constraint", "fact"

    def __init__(self, store: VectorStore, rcfg: RetrievalSection) -> None:
        self.store, self.limit = store, _positive(rcfg.route_limit, "retrieval.route_limit")
        self.enabled = rcfg.constraints_on_recommend

    def search(self, q: RouteQuery) -> list[ScoredPayload]:
        if not self.enabled or not rules.RECOMMEND_INTENT.search(q.query):
            return []
        cflt = q.scope.filter(metadata={"_kind": "constraint"})
        return [ScoredPayload(p.id, 1.0, p.payload) for p in self.store.scroll(cflt, limit=self.limit)]


class FactMeaningRoute:
    """Facts by meaning, not shared tokens: a dense search restricted to the owner's facts
    (current embedding version), at most ``retrieval.fact_meaning_limit`` rows whose
    model-rescaled similarity is >= ``retrieval.fact_similarity``; score = that similarity.
    A request that needs a fact ('send this parcel to my mother') rarely repeats its words
    ('my default courier is SF'); facts are few per user, so the nearest ones by meaning are
    worth a look. Off when ``fact_meaning_limit`` is 0."""

    name, channel = "fact_meaning", "meaning"

    def __init__(self, store: VectorStore, rcfg: RetrievalSection,
                 rescale: Callable[[float], float] = lambda cos: cos) -> None:
        if rcfg.fact_meaning_limit < 0 or not 0.0 <= rcfg.fact_similarity <= 1.0:
            raise ConfigError("retrieval.fact_meaning_limit must be >= 0 and fact_similarity in [0, 1]",
                              key="retrieval.fact_similarity")
        self.store, self.limit, self.threshold, self.rescale = store, rcfg.fact_meaning_limit, rcfg.fact_similarity, rescale

    def search(self, q: RouteQuery) -> list[ScoredPayload]:
        if not self.limit or (q.memory_types and MemoryType.FACT.value not in q.memory_types):
            return []
        flt = replace(q.filter, memory_types=(MemoryType.FACT.value,))
        rows = self.store.search_dense(q.vector.tolist(), flt, self.limit)
        return [ScoredPayload(p.id, self.rescale(float(p.score)), p.payload) for p in rows
                if self.rescale(float(p.score)) >= self.threshold]


class IntentRoute:
    """Facts by intent: when the request was routed to fact categories (``q.categories``), the owner's
    memories of each, at most ``intent.limit`` per category and way (0 = off):

    * tagged with it at write, newest first, score 1.0;
    * not tagged with it, among the ``intent.member_scan`` user statements nearest the category's prototype
      direction, whose query-time membership (:meth:`memory_engine.write.categories.Categories.membership`)
      is >= ``intent.member_min``, best first, score = that membership (needs ``categories``; the request's
      own vector joins the category's examples with weight ``intent.member_request_weight``).

    'Send this parcel to my mother' finds 'my default courier is SF' and the address; 'has the thing I
    ordered arrived' finds the latest purchase; a takeout request finds '我乳糖不耐受' that the write-time tag
    filed under health only."""

    name, channel = "intent", "intent"

    def __init__(self, store: VectorStore, rcfg: RetrievalSection, icfg: IntentSection | None = None,
                 categories: Categories | None = None, answers: AnswerTypes | None = None) -> None:
        icfg = icfg or IntentSection()
        self.store, self.limit = store, icfg.limit if icfg.enabled else 0
        self.categories, self.scan, self.member_min = categories, icfg.member_scan, icfg.member_min
        self.answers, self.answer_min = answers, icfg.answer_member_min

    def _members(self, q: RouteQuery, cat: str, seen: set[str]) -> list[ScoredPayload]:
        """Untagged user statements of category ``cat`` by query-time membership, best first; for an answer type
        (:class:`~memory_engine.write.categories.AnswerTypes`) its own membership, statements about another person
        left out (:func:`~memory_engine.write.categories.about_other_person`)."""
        answer = self.answers is not None and cat in self.answers.names
        clf: Categories | AnswerTypes | None = self.answers if answer else self.categories
        if clf is None or not self.scan:
            return []
        proto = clf.prototype(cat)
        if proto is None:
            return []
        floor = self.answer_min if answer else self.member_min
        near = [p for p in self.store.search_dense(proto.tolist(), q.filter, self.scan)
                if p.id not in seen and str(p.payload.get("role") or "user") == "user"
                and not (answer and about_other_person(str(p.payload.get("content") or "")))]
        if not near:
            return []
        vecs = {p.id: p.dense for p in self.store.retrieve([p.id for p in near], with_vectors=True)
                if p.dense is not None}
        near = [p for p in near if p.id in vecs]
        if not near:
            return []
        member = clf.membership(np.asarray([vecs[p.id] for p in near], dtype=np.float32), cat, q.vector)
        found = sorted(((float(m), p) for m, p in zip(member, near, strict=True) if m >= floor),
                       key=lambda mp: -mp[0])
        return [ScoredPayload(p.id, round(m, 6), p.payload) for m, p in found[: self.limit]]

    def search(self, q: RouteQuery) -> list[ScoredPayload]:
        if not self.limit or not q.categories:
            return []
        out: dict[str, ScoredPayload] = {}
        for cat in q.categories:
            # the best tag (_category) or one of a close call's tags (_categories): at most `limit` of each category;
            # an answer type has no write-time tags
            rows: dict[str, ScoredPayload] = {}
            for field in () if self.answers is not None and cat in self.answers.names else ("_category", "_categories"):
                flt = replace(q.filter, metadata={**q.filter.metadata, field: cat})
                for p in self.store.scroll(flt, limit=self.limit, order_by="created_at", descending=True):
                    rows.setdefault(p.id, p)
            newest = sorted(rows.values(), key=lambda p: -float(p.payload.get("created_at") or 0.0))[: self.limit]
            for p in newest:
                out.setdefault(p.id, ScoredPayload(p.id, 1.0, p.payload))
            for p in self._members(q, cat, set(rows) | set(out)):
                out.setdefault(p.id, p)
        return list(out.values())


#: route classes by name; a new route registers here
ROUTES: dict[str, Callable[..., Route]] = {
    "dense": DenseRoute, "keyword": KeywordRoute, "recent": RecentRoute, "fact": FactRoute,
    "constraint": ConstraintRoute, "fact_meaning": FactMeaningRoute, "intent": IntentRoute, "date": DateRoute,
}
#: the routes every retrieval runs, in this order
DEFAULT_ROUTES: tuple[str, ...] = ("dense", "keyword", "recent", "fact", "constraint", "fact_meaning", "intent",
                                   "date")
#: the channel of the memories the entity hop reaches through a top hit's names (retrieve/hop.py)
HOP_CHANNEL = "hop"
#: every channel a candidate's route ranks may name, in the order tables list them: the channels of the
#: :data:`ROUTES` (dense -> vector, keyword, recent, fact and constraint -> fact, fact_meaning -> meaning,
#: intent, date) then the entity hop's. The one list of route names: a hit's ``sources`` (:func:`channels_of`),
#: the ``memwb retrieve`` tables and the app's hits table (through the spans' ``memory.retrieved_sources``)
CHANNELS: tuple[str, ...] = ("vector", "keyword", "recent", "fact", "meaning", "intent", "date", HOP_CHANNEL)


def channels_of(names: Iterable[str]) -> tuple[str, ...]:
    """The channel names among ``names`` (a candidate's route ranks, or any iterable of channel names), each
    once, in :data:`CHANNELS` order; a name :data:`CHANNELS` does not list comes after them, in its own order,
    so that a table never leaves a route out."""
    have = list(dict.fromkeys(names))
    return tuple(c for c in CHANNELS if c in have) + tuple(c for c in have if c not in CHANNELS)


def build_routes(store: VectorStore, rcfg: RetrievalSection, names: Sequence[str] = DEFAULT_ROUTES,
                 rescale: Callable[[float], float] | None = None, icfg: IntentSection | None = None,
                 categories: Categories | None = None, answers: AnswerTypes | None = None) -> list[Route]:
    """Instantiate the named routes (ConfigError for an unknown name); ``rescale`` is the
    embedder's cosine -> [0, 1] map that similarity-thresholded routes use, ``icfg`` the
    ``intent`` section the intent route reads (None = defaults), ``categories`` the classifier
    its query-time membership uses (None = write-time tags only), ``answers`` the answer types of
    questions (None = none)."""
    unknown = [n for n in names if n not in ROUTES]
    if unknown:
        raise ConfigError(f"unknown retrieval routes {unknown}; known: {sorted(ROUTES)}")
    out: list[Route] = []
    for n in names:
        if n == "fact_meaning" and rescale is not None:
            out.append(FactMeaningRoute(store, rcfg, rescale))
        elif n == "intent":
            out.append(IntentRoute(store, rcfg, icfg, categories, answers))
        else:
            out.append(ROUTES[n](store, rcfg))
    return out
