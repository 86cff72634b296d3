"""Stale values (issue 16): among the retrieved memories about the same subject,
a newer statement outranks an older one, so a silent habit change ("lunch at
the noodle bar" -> "lunch at the Thai place"), a status update or an A -> B -> A
flip answers with the latest value first. Nothing is archived here (the write
path owns supersession); the older memory only ranks below the newer one.

Same subject = the two memories' own embeddings are close: rescaled cosine
>= ``retrieval.stale_similarity`` (measured on the golden supersession pairs:
same-subject updates 0.58..0.94, different subjects of one user 0.23..0.56 with
e5; see benchmarks/README.md). The older one's fused score becomes at most
``retrieval.stale_discount`` x the newer one's.

A memory's time is when the user last *stated* it: a restatement merged into it
(dedup) moves its ``updated_at``, so in an A -> B -> A flip whose second A merged
into the first, A is newer than B. An older memory that states its value as
provisional ("tentatively on May 12", "暂定12月20号",
:func:`memory_engine.write.intents.provisional`) is the same subject as a newer one
already at ``retrieval.stale_provisional_similarity`` (the final value reads
differently: "confirmed for May 19 at the lake house").

What the assistant suggested or a tool returned ranks below what the user said about
the same subject, whatever their times (:func:`defer_to_user`,
``retrieval.stale_user_precedence``).

An explicit correction that names the replaced value of an older memory it did not archive
("My daughter is six" <- "Actually she's seven, not six": no subject term shared) lists
that memory in its ``metadata._corrects`` (memory_engine/write/supersede.py); whenever both
are candidates the older one ranks below the correction, whatever their sessions or
similarity (:func:`demote_corrected`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..config import RetrievalSection
from ..embedding import CachedEmbedder
from ..errors import ConfigError
from ..store.base import VectorStore
from ..write.correction import same_speaker
from ..write.intents import provisional
from ..write.roles import author_role
from .fusion import Candidate

__all__ = ["StaleValues", "competing", "defer_to_user", "demote_corrected", "demote_stale", "states_something"]

#: a sentence: text up to and including its end mark (or the end of the text)
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
#: a content word of at least this many letters / one CJK ideograph makes a statement
_WORDLIKE = re.compile(r"[A-Za-z]{3,}|\d|[\u3400-\u9fff]")


def states_something(content: str) -> bool:
    """Whether ``content`` has at least one sentence that is not a question (does not end
    with '?' / '？') and holds a word: "Wow, what an experience! How did it make you feel?"
    has one ("Wow, what an experience!"), "What kind of pots do you make?" none."""
    for m in _SENTENCE.finditer(content):
        sent = m.group(0).strip()
        if sent and not sent.endswith(("?", "？")) and _WORDLIKE.search(sent):
            return True
    return False


def competing(old: dict[str, Any], new: dict[str, Any], *, across_sessions: bool = True,
              statements_only: bool = True) -> bool:
    """Whether payload ``new`` can state a newer value of what payload ``old`` states: the
    same author (role and ``metadata.speaker``, :func:`memory_engine.write.correction.same_speaker`),
    with ``across_sessions`` not two turns of one session (both carry the same ``session_id``),
    with ``statements_only`` the newer one not only a question (:func:`states_something`)."""
    if not same_speaker(str(new.get("role") or "user"), dict(new.get("metadata") or {}), old):
        return False
    if across_sessions and old.get("session_id") and old.get("session_id") == new.get("session_id"):
        return False
    return not statements_only or states_something(str(new.get("content") or ""))


def demote_stale(ranked: list[Candidate], vectors: dict[str, np.ndarray], written: dict[str, float],
                 rescale: Any, similarity: float, discount: float, relevance_share: float = 0.9,
                 may_compete: Callable[[str, str], bool] | None = None,
                 provisional_ids: frozenset[str] = frozenset(), provisional_similarity: float = 1.0,
                 ) -> tuple[list[Candidate], dict[str, str]]:
    """For every pair of ``ranked`` candidates whose vectors' rescaled cosine is >= ``similarity``,
    whose write times differ and where the newer one answers the query about as well
    (:func:`_newer_value`: relevance >= ``relevance_share`` x the older one's, so order A124 asked
    about A123 demotes nothing; the same query words covered; no date match lost), cap the
    older one's fused score at ``discount`` x the newer one's. ``vectors``: unit vectors by id (a candidate without one is left alone);
    ``written``: epoch seconds by id; ``rescale``: raw cosine -> [0, 1]; ``may_compete(older id,
    newer id)``: an extra gate (None = every pair may, see :func:`competing`); an older memory in
    ``provisional_ids`` needs only ``provisional_similarity``. Returns the
    re-sorted candidates and {older id: newer id} for each demoted memory."""
    ids = [c.memory_id for c in ranked if c.memory_id in vectors]
    if len(ids) < 2:
        return ranked, {}
    mat = np.stack([np.asarray(vectors[i], dtype=np.float32) for i in ids])
    sims = mat @ mat.T
    fused = {c.memory_id: c.fused for c in ranked}
    by_id = {c.memory_id: c for c in ranked}
    newer_of: dict[str, str] = {}
    # newest first, so a chain A -> B -> C caps A by B after B was capped by C
    order = sorted(range(len(ids)), key=lambda i: -written.get(ids[i], 0.0))
    for pos, i in enumerate(order):
        for j in order[:pos]:
            a, b = ids[i], ids[j]  # a older than (or as old as) b
            if written.get(a, 0.0) >= written.get(b, 0.0):
                continue
            bar = min(similarity, provisional_similarity) if a in provisional_ids else similarity
            if not _newer_value(by_id[a], by_id[b], relevance_share) or rescale(float(sims[i, j])) < bar:
                continue
            if may_compete is not None and not may_compete(a, b):
                continue
            cap = discount * fused[b]
            if fused[a] > cap:
                fused[a] = cap
                newer_of[a] = b
    return _recapped(ranked, fused, newer_of)


def defer_to_user(ranked: list[Candidate], vectors: dict[str, np.ndarray], roles: dict[str, str], rescale: Any,
                  similarity: float, discount: float, relevance_share: float = 0.5
                  ) -> tuple[list[Candidate], dict[str, str]]:
    """What the assistant suggested or a tool returned never outranks what the user said about the
    same subject (seed 004: user-stated > model-inferred), whatever their times: for every pair of an
    assistant / tool candidate and a user candidate whose vectors' rescaled cosine is >= ``similarity``
    and where the user's one is found on its own (not through an entity hop) with a relevance >=
    ``relevance_share`` x the other's (the assistant's restatement often repeats the question's
    words: "So you drink a flat white every morning" vs the user's "I drink green tea every
    morning"), the other's fused score is capped at ``discount`` x the user's. ``roles``: role by id (missing = 'user').
    Returns the re-sorted candidates and {capped id: user memory id}."""
    users = [c for c in ranked if roles.get(c.memory_id, "user") == "user" and c.memory_id in vectors]
    others = [c for c in ranked if roles.get(c.memory_id, "user") != "user" and c.memory_id in vectors]
    if not users or not others:
        return ranked, {}
    fused = {c.memory_id: c.fused for c in ranked}
    capped: dict[str, str] = {}
    for o in others:
        for u in users:
            sim = float(np.dot(np.asarray(vectors[o.memory_id], dtype=np.float32),
                               np.asarray(vectors[u.memory_id], dtype=np.float32)))
            if rescale(sim) < similarity or "hop" in u.route_ranks or u.relevance < relevance_share * o.relevance:
                continue
            if fused[o.memory_id] > discount * fused[u.memory_id]:
                fused[o.memory_id] = discount * fused[u.memory_id]
                capped[o.memory_id] = u.memory_id
    return _recapped(ranked, fused, capped)


def demote_corrected(ranked: list[Candidate], corrects: dict[str, tuple[str, ...]], discount: float
                     ) -> tuple[list[Candidate], dict[str, str]]:
    """Cap the fused score of every candidate an explicit correction among ``ranked`` links
    (``corrects``: correction id -> the older ids it corrects) at ``discount`` x the correction's,
    so the replaced value never ranks first. Returns the re-sorted candidates and {older id: correction id}."""
    present = {c.memory_id for c in ranked}
    fused = {c.memory_id: c.fused for c in ranked}
    capped: dict[str, str] = {}
    for new, olds in corrects.items():
        if new not in present:
            continue
        for old in olds:
            if old in present and old != new and fused[old] > discount * fused[new]:
                fused[old] = discount * fused[new]
                capped[old] = new
    return _recapped(ranked, fused, capped)


def _newer_value(old: Candidate, new: Candidate, relevance_share: float) -> bool:
    """Whether ``new`` can stand for a newer value of what ``old`` answers: found on its own
    (not only through an entity hop, whose relevance is borrowed), about as relevant, covering
    at least the query words ``old`` covers (a same-subject memory on another attribute,
    'the contact at ACME' vs 'the quote plan for ACME', covers fewer), and not losing a date
    the query names."""
    if "hop" in new.route_ranks or new.temporal_match < old.temporal_match:
        return False
    return new.relevance >= relevance_share * old.relevance and new.coverage >= old.coverage


class StaleValues:
    """``enabled`` when ``retrieval.stale_discount`` < 1. ``apply(kept, payloads, top_k)`` looks at
    the best ``top_k + retrieval.stale_window`` candidates (one vector fetch) and demotes stale
    ones (:func:`demote_stale`). Raises ConfigError for values outside [0, 1]."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, rcfg: RetrievalSection) -> None:
        if not 0.0 <= rcfg.stale_discount <= 1.0 or not 0.0 <= rcfg.stale_similarity <= 1.0:
            raise ConfigError("retrieval.stale_discount and stale_similarity must be in [0, 1]",
                              key="retrieval.stale_discount")
        if rcfg.stale_window < 0:
            raise ConfigError("retrieval.stale_window must be >= 0", key="retrieval.stale_window")
        self.store, self.embedder = store, embedder
        self.similarity, self.discount, self.window = rcfg.stale_similarity, rcfg.stale_discount, rcfg.stale_window
        self.relevance_share = rcfg.stale_relevance_share
        self.provisional_similarity = rcfg.stale_provisional_similarity
        self.user_precedence = rcfg.stale_user_precedence
        self.user_relevance_share = rcfg.stale_user_relevance_share
        self.across_sessions, self.statements_only = rcfg.stale_across_sessions, rcfg.stale_statements_only
        self.enabled = rcfg.stale_discount < 1.0

    def apply(self, kept: list[Candidate], payloads: dict[str, dict[str, Any]], top_k: int,
              precedence: bool = True) -> list[Candidate]:
        """``precedence=False`` (a query about what the assistant said, retrieve/addressee.py) skips the
        user precedence: the assistant's suggestion is then the answer, not a rival of the user's words."""
        head, tail = kept[: top_k + self.window], kept[top_k + self.window:]
        if len(head) < 2:
            return kept
        vecs = {p.id: np.asarray(p.dense, dtype=np.float32)
                for p in self.store.retrieve([c.memory_id for c in head], with_vectors=True) if p.dense is not None}
        # when the user last stated it: a merged restatement moves updated_at (an A -> B -> A flip)
        written = {c.memory_id: max(float(payloads.get(c.memory_id, {}).get("created_at") or 0.0),
                                    float(payloads.get(c.memory_id, {}).get("updated_at") or 0.0)) for c in head}
        tentative = frozenset(c.memory_id for c in head
                              if provisional(str(payloads.get(c.memory_id, {}).get("content") or "")))
        def may_compete(old: str, new: str) -> bool:
            return competing(payloads.get(old, {}), payloads.get(new, {}), across_sessions=self.across_sessions,
                             statements_only=self.statements_only)

        demoted, _ = demote_stale(head, vecs, written, self.embedder.rescale, self.similarity, self.discount,
                                  self.relevance_share, may_compete, tentative, self.provisional_similarity)
        if self.user_precedence and precedence:
            # a suggestion the user confirmed speaks for the user (write/roles.py)
            roles = {c.memory_id: author_role(payloads.get(c.memory_id, {})) for c in head}
            demoted, _ = defer_to_user(demoted, vecs, roles, self.embedder.rescale, self.similarity, self.discount,
                                       self.user_relevance_share)
        corrects = {c.memory_id: tuple(str(i) for i in links) for c in head
                    if (links := (payloads.get(c.memory_id, {}).get("metadata") or {}).get("_corrects"))}
        if corrects:
            demoted, _ = demote_corrected(demoted, corrects, self.discount)
        return demoted + tail


def _recapped(ranked: list[Candidate], fused: dict[str, float], capped: dict[str, str]
              ) -> tuple[list[Candidate], dict[str, str]]:
    """``ranked`` with the capped candidates' new fused scores, re-sorted (score desc, id), and
    ``capped`` ({capped id: the memory it yields to}); ``ranked`` unchanged when nothing was capped."""
    if not capped:
        return ranked, {}
    out = [replace(c, fused=fused[c.memory_id]) if c.memory_id in capped else c for c in ranked]
    out.sort(key=lambda c: (-c.fused, c.memory_id))
    return out, capped
