"""Conversation context (issue 16): in a dialogue the answer often sits in the
turn next to the one that shares the question's words ("Did you go to the
support group?" / "Yes, yesterday, it was powerful"). Two steps after fusion:

* **expand**: the neighbours of the ``retrieval.context_parents`` best
  candidates, i.e. the owner's memories of the same session nearest in write
  time (``retrieval.context_width`` on each side), join the candidates;
* **smooth**: every candidate's fused score gains ``context_weight`` x the
  fused score of each known neighbour, halved per turn of distance
  (score propagation over the conversation graph, in the spirit of
  neighbourhood smoothing in passage retrieval; weights chosen on LoCoMo dev,
  see benchmarks/README.md). Optionally a neighbour borrows
  ``context_relevance`` x its neighbour's relevance for the floor.
* **adjacency pairs**: the turn right after a question, by another known
  speaker, is its answer (:func:`answers`): it gains
  ``context_answer_weight`` x the question's score instead, and borrows the
  question's relevance from ``context_answer_min_relevance`` of its own
  ("How often do you work out?" / "Three times a week").

Memories without a session have no conversational neighbours. Pure
arithmetic plus two bounded store scrolls per parent; no clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..config import RetrievalSection
from ..errors import ConfigError
from ..store.base import StoreFilter, VectorStore
from ..write.roles import last_question
from .admission import Admission
from .candidates import CandidateBuilder, is_cjk
from .fusion import Candidate, rank_key
from .query import QueryPlan
from .speakers import speaker_of

__all__ = ["ConversationContext", "answers", "smooth"]

#: (memory id, neighbour id, distance in turns >= 1, reply): ``reply`` 1 = the neighbour is the next turn, by another
#: speaker, after the memory asked a question (it answers it), -1 = the memory answers the neighbour's question, 0 = neither
Link = tuple[str, str, int, int]


def smooth(fused: list[Candidate], links: list[Link], weight: float, relevance_share: float,
           discount: float = 0.9, min_own: float = 0.0, answer_weight: float | None = None,
           answer_min_own: float | None = None) -> list[Candidate]:
    """Add ``weight * 0.5**(d-1) * fused(neighbour)`` for every link (both directions; the turn that answers
    the neighbour's question, the link's ``reply``, gains ``answer_weight`` x the question's score instead,
    None = ``weight``; a 3-tuple link has no reply; it borrows relevance from at least ``answer_min_own`` of its
    own, None = ``min_own``) and,
    with ``relevance_share`` > 0, lift a candidate's ``context_relevance`` to that share of
    its neighbour's own relevance (and its ``context_gate_relevance``, what the floor's gate reads, to that share of the
    neighbour's own gate relevance) (halved per turn the same way) when its own relevance is at
    least ``min_own`` (an unrelated turn of a multi-topic session is not lifted) and it ``borrows`` (another
    relative than the one a path question asks about is not lifted, retrieve/relations.py). A candidate that scored
    below its best neighbour stays below it: its smoothed score is capped at ``discount`` x
    that neighbour's score (never below its own). Returns the candidates re-sorted by fused
    score (ties by id); inputs untouched. ``weight`` >= 0, share and discount in [0, 1]."""
    by_id = {c.memory_id: c for c in fused}
    best_nb: dict[str, float] = {}
    bonus: dict[str, float] = {}
    borrowed: dict[str, float] = {}
    borrowed_gate: dict[str, float] = {}  # the same share of the neighbour's gate relevance (fusion.Candidate)
    seen: set[tuple[str, str]] = set()
    aw = weight if answer_weight is None else answer_weight
    am = min_own if answer_min_own is None else answer_min_own
    for a, b, d, *rest in links:
        if a == b or a not in by_id or b not in by_id or (a, b) in seen:
            continue
        seen.add((a, b))
        seen.add((b, a))
        reply = int(rest[0]) if rest else 0
        decay = 0.5 ** (max(1, d) - 1)
        ca, cb = by_id[a], by_id[b]
        best_nb[a] = max(best_nb.get(a, 0.0), cb.fused)
        best_nb[b] = max(best_nb.get(b, 0.0), ca.fused)
        wa, wb = (aw if reply < 0 else weight), (aw if reply > 0 else weight)
        bonus[a] = bonus.get(a, 0.0) + wa * decay * ca.source_weight * cb.fused / max(cb.source_weight, 1e-9)
        bonus[b] = bonus.get(b, 0.0) + wb * decay * cb.source_weight * ca.fused / max(ca.source_weight, 1e-9)
        if relevance_share > 0:
            ma, mb = (am if reply < 0 else min_own), (am if reply > 0 else min_own)
            if ca.borrows and _own_relevance(ca) >= ma:
                borrowed[a] = max(borrowed.get(a, 0.0), relevance_share * decay * _own_relevance(cb))
                borrowed_gate[a] = max(borrowed_gate.get(a, 0.0), relevance_share * decay * _own_gate_relevance(cb))
            if cb.borrows and _own_relevance(cb) >= mb:
                borrowed[b] = max(borrowed.get(b, 0.0), relevance_share * decay * _own_relevance(ca))
                borrowed_gate[b] = max(borrowed_gate.get(b, 0.0), relevance_share * decay * _own_gate_relevance(ca))
    out = []
    for c in fused:
        new = c.fused + bonus.get(c.memory_id, 0.0)
        nb = best_nb.get(c.memory_id, 0.0)
        if nb > c.fused:  # brought up by a better neighbour: ranks below it
            new = max(c.fused, min(new, discount * nb))
        out.append(replace(c, fused=new, context_relevance=max(c.context_relevance, borrowed.get(c.memory_id, 0.0)),
                           context_gate_relevance=max(c.gate_context, borrowed_gate.get(c.memory_id, 0.0))))
    out.sort(key=rank_key)
    return out


def _own_relevance(c: Candidate) -> float:
    # a neighbour's borrowed relevance never chains from another borrowed relevance
    return max(c.exact_match, 1.0 - (1.0 - c.similarity) * (1.0 - c.coverage))


def _own_gate_relevance(c: Candidate) -> float:
    # what the floor's gate sees of the same (fusion.Candidate.gate_relevance without borrowed or category evidence)
    sim = min(1.0, c.similarity * c.gate_similarity_share)
    return max(c.exact_match, 1.0 - (1.0 - sim) * (1.0 - c.coverage * c.gate_share))


class ConversationContext:
    """``enabled`` when ``retrieval.context_parents`` and ``context_width`` are > 0 and
    ``context_weight`` > 0 or ``context_relevance`` > 0.

    ``expand(fused, payloads, flt, admit, plan)`` -> (new candidates, links): neighbours of the
    top ``context_parents`` candidates that have a session, the rows ``admit`` refuses left out
    (:class:`~memory_engine.retrieve.admission.Admission`); new rows' payloads are added to
    ``payloads``. ``apply(fused, links, fuse)`` re-fuses nothing: it smooths already fused
    candidates (:func:`smooth`). Raises ConfigError for negative sizes or weights."""

    def __init__(self, store: VectorStore, builder: CandidateBuilder, rcfg: RetrievalSection) -> None:
        for name in ("context_parents", "context_width"):
            if int(getattr(rcfg, name)) < 0:
                raise ConfigError(f"retrieval.{name} must be >= 0", key=f"retrieval.{name}")
        if rcfg.context_weight < 0 or not 0.0 <= rcfg.context_relevance <= 1.0:
            raise ConfigError("retrieval.context_weight must be >= 0 and context_relevance in [0, 1]",
                              key="retrieval.context_weight")
        self.store, self.builder = store, builder
        self.parents, self.width = rcfg.context_parents, rcfg.context_width
        self.weight, self.share = rcfg.context_weight, rcfg.context_relevance
        self.discount, self.min_own = rcfg.hop_discount, rcfg.context_min_relevance
        self.answer_weight, self.answer_min_own = rcfg.context_answer_weight, rcfg.context_answer_min_relevance
        self.enabled = bool(self.parents and self.width and (self.weight > 0 or self.share > 0))

    def _neighbours(self, mid: str, pl: dict[str, Any], flt: StoreFilter) -> list[tuple[Any, int, int]]:
        """(row, distance, side): the ``width`` nearest turns of the session before (side -1) and after (+1)."""
        session, at = pl.get("session_id"), pl.get("created_at")
        if not session or at is None:
            return []
        base = replace(flt, session_id=str(session))
        t = float(at)
        before = self.store.scroll(replace(base, created_before=t), limit=self.width + 1, order_by="created_at",
                                   descending=True)
        after = self.store.scroll(replace(base, created_after=t), limit=self.width + 1, order_by="created_at",
                                  descending=False)
        out = []
        for side, rows in ((-1, before), (1, after)):
            d = 0
            for p in rows:
                if p.id == mid:
                    continue  # the parent itself (inclusive bounds)
                d += 1
                if d > self.width:
                    break
                out.append((p, d, side))
        return out

    def expand(self, fused: list[Candidate], payloads: dict[str, dict[str, Any]], flt: StoreFilter, admit: Admission,
               plan: QueryPlan) -> tuple[list[Candidate], list[Link]]:
        known = {c.memory_id for c in fused}
        links: list[Link] = []
        rows: dict[str, Any] = {}
        for parent in fused[: self.parents]:
            ppl = payloads[parent.memory_id]
            for p, d, side in self._neighbours(parent.memory_id, ppl, flt):
                if p.id == parent.memory_id or not admit.admits(p):
                    continue  # a planted instruction (or the assistant's word on the user) stays out like everywhere else
                reply = 0
                if d == 1 and self.answer_weight is not None:
                    first, second = (p.payload, ppl) if side < 0 else (ppl, p.payload)
                    if answers(first, second):
                        reply = side  # +1: the neighbour after the parent answers it; -1: the parent answers it
                links.append((parent.memory_id, p.id, d, reply))
                if p.id not in known and p.id not in rows:
                    rows[p.id] = p
        new: list[Candidate] = []
        if rows:
            vecs = {p.id: p.dense for p in self.store.retrieve(list(rows), with_vectors=True)}
            for mid, p in rows.items():
                payloads[mid] = p.payload
                v = vecs.get(mid)
                cos = float(np.dot(np.asarray(v, dtype=np.float32), plan.vector)) if v is not None else 0.0
                new.append(self.builder.candidate(mid, p.payload, cos, plan.cover_terms, {}, {}, False,
                                                  plan.session_id, plan.ts, is_cjk(plan.query), plan.query,
                                       is_cjk(plan.query) and not plan.last_turn_lookup))
        return new, links

    def apply(self, fused: list[Candidate], payloads: dict[str, dict[str, Any]], flt: StoreFilter, admit: Admission,
              plan: QueryPlan, fuse: Callable[[list[Candidate]], list[Candidate]]
              ) -> tuple[list[Candidate], list[Link]]:
        """Expand, fuse the new neighbours with the same fuser, smooth; returns the new ranking
        and the links (a later re-fusion, e.g. after the entity hop, smooths again with them)."""
        new, links = self.expand(fused, payloads, flt, admit, plan)
        if not links:
            return fused, links
        ranked = sorted([*fused, *fuse(new)], key=rank_key) if new else fused
        return self.smooth(ranked, links), links

    def smooth(self, fused: list[Candidate], links: list[Link]) -> list[Candidate]:
        return smooth(fused, links, self.weight, self.share, self.discount, self.min_own,
                      self.answer_weight, self.answer_min_own) if links else fused


def answers(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Whether turn ``second`` (a payload), written right after ``first`` in its session, is the reply to a
    question ``first`` asks: ``first`` holds a question clause (write/roles.last_question) and the two have
    different known speakers (retrieve/speakers.speaker_of). A question and the turn after it by the other
    party form an adjacency pair, the second part answering the first (Schegloff & Sacks 1973, "Opening up
    closings"): "How often do you work out?" / "Three times a week" shares no word with "How often does John
    work out?" but is its answer."""
    sa, sb = speaker_of(first), speaker_of(second)
    return bool(sa) and bool(sb) and sa != sb and last_question(str(first.get("content") or "")) is not None
