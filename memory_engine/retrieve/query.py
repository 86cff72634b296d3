"""Query preparation, the first retrieval stage: the query's content terms, its
identifiers and date range, the vague-query rewrite (seed 000/003) and the
query embedding, bundled as one :class:`QueryPlan` per call."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..config import RetrievalSection
from ..embedding import CachedEmbedder
from ..errors import ConfigError
from ..scope import Scope
from ..store.base import VectorStore
from ..text import content_terms, identifiers, surface_words
from . import temporal

__all__ = ["VAGUE", "VAGUE_TERMS", "QueryPlan", "QueryPlanner", "VagueRewriter"]

#: a look-back reference: 'that one', 'last time', 上次, 那个 ...
VAGUE = re.compile(
    r"上次|那个|那款|那家|那件|那双|那本|之前|刚才|前面|还记得|\b(that one|last time|the one|earlier|previous|"
    r"that|it|those|again)\b",
    re.IGNORECASE,
)
#: words of a vague reference itself; they say "look back", not what about
VAGUE_TERMS = frozenset("one last time earlier previous again 上次 那个 之前 刚才 前面 那款 那家 那件 上回 说的".split())


@dataclass(frozen=True)
class QueryPlan:
    """One query, prepared. ``text``: what the routes search (the rewrite, else the query);
    ``terms``: the query's content terms without vague words; ``route_terms``: terms of
    ``text``; ``cover_terms``: what keyword coverage is judged on (the user's own terms,
    the rewrite only widens recall); ``identifiers`` of ``text``; ``date_range`` the query
    names (None when none or temporal scoring is off); ``vector`` the query embedding;
    ``ts`` / ``now``: the call's clock (epoch seconds / aware datetime)."""

    query: str
    text: str
    rewritten: str | None
    terms: frozenset[str]
    route_terms: frozenset[str]
    cover_terms: frozenset[str]
    identifiers: frozenset[str]
    date_range: temporal.DateRange | None
    vector: np.ndarray
    session_id: str | None
    ts: float
    now: datetime


class VagueRewriter:
    """Seed 000/003: expand a vague query ('上次那个', 'that one') of at most
    ``retrieval.rewrite_max_terms`` content terms with up to ``rewrite_terms`` words of the
    session's ``rewrite_memories`` latest memories. Off with ``rewrite_vague`` = false or
    without a session. Raises ConfigError at construction for negative sizes."""

    def __init__(self, store: VectorStore, rcfg: RetrievalSection) -> None:
        for name in ("rewrite_terms", "rewrite_memories", "rewrite_max_terms"):
            if int(getattr(rcfg, name)) < 0:
                raise ConfigError(f"retrieval.{name} must be >= 0", key=f"retrieval.{name}")
        self.store, self.rcfg = store, rcfg

    def rewrite(self, query: str, terms: frozenset[str], scope: Scope, session_id: str | None) -> str | None:
        r = self.rcfg
        if not r.rewrite_vague or not session_id or not VAGUE.search(query) or len(terms) > r.rewrite_max_terms:
            return None
        recent = self.store.scroll(scope.filter(session_id=session_id), limit=r.rewrite_memories,
                                   order_by="created_at", descending=True)
        extra: list[str] = []
        for p in recent:
            for w in surface_words(p.payload.get("content", "")):
                if w not in extra and not w.startswith("[") and not (content_terms(w) <= terms):
                    extra.append(w)
        extra = extra[: r.rewrite_terms]
        return f"{query} {' '.join(extra)}" if extra else None


class QueryPlanner:
    """``plan(query, scope, session_id, ts, now)`` -> :class:`QueryPlan` (one embedding call)."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, rcfg: RetrievalSection) -> None:
        if rcfg.temporal_weight < 0:
            raise ConfigError("retrieval.temporal_weight must be >= 0", key="retrieval.temporal_weight")
        self.embedder = embedder
        self.rewriter = VagueRewriter(store, rcfg)
        self.temporal = rcfg.temporal_weight > 0

    def plan(self, query: str, scope: Scope, session_id: str | None, ts: float, now: datetime) -> QueryPlan:
        date_range = temporal.resolve(query, now) if self.temporal else None
        terms = content_terms(query) - VAGUE_TERMS
        rewritten = self.rewriter.rewrite(query, terms, scope, session_id)
        text = rewritten or query
        route_terms = content_terms(rewritten) if rewritten else terms
        return QueryPlan(query=query, text=text, rewritten=rewritten, terms=terms, route_terms=route_terms,
                         cover_terms=terms or route_terms, identifiers=frozenset(identifiers(text)),
                         date_range=date_range, vector=self.embedder.embed_query(text), session_id=session_id,
                         ts=ts, now=now)
