"""Dedup (seed 000): a statement that repeats a current memory of the same type
touches it instead of adding a record. "The same type" reads episodic, semantic and
procedural as one (``write.dedup_across_kinds``): those are the gate's guess from incidental
words ("我是" makes a statement factual), so a rewording merges across them and the kept
memory takes the more curated kind (:func:`merged_kind_patch`).

Two texts are *the same memory* when their normalised forms are equal, or their
model-rescaled cosine is >= ``write.dedup_similarity``, or they are a rewording
(:func:`memory_engine.write.hygiene.same_meaning`: similarity >=
``write.dedup_reworded_similarity`` and Jaccard term overlap >=
``write.dedup_term_overlap``), said in the same role, and in every case they
name the same identifiers, numbers and people, have the same polarity, the same
past aspect and, when both are dated, overlapping event times (normalise-then-match, seed 002): 'order A123' never merges into 'order A124',
'82 kg' never into '78 kg', 'I like X' never into 'I don't like X', "I'm allergic to cats
too" never into "my wife is allergic to cats", '我现在住在上海' never into '我以前在上海住过三年'.
Terms are compared without discourse fillers (``write.dedup_ignore_fillers``) and with
English stems of one word family aligned (``write.dedup_stem_prefix``), so "penicillin
allergy here, just so you know" merges into "I'm allergic to penicillin". A merge keeps
only the older memory, so a new statement that adds a content term the older one
lacks is kept on its own (:func:`memory_engine.write.hygiene.adds_content`: a merge
never loses the user's words), and so is one whose redacted values (``pii_terms``, the
keyed search terms of :func:`memory_engine.write.pii.fingerprints`) the older one lacks. The same rule
decides merges in consolidation (:mod:`memory_engine.lifecycle.consolidate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import WriteSection
from ..embedding import CachedEmbedder
from ..errors import ConfigError
from ..models import MemoryRecord, MemoryType
from ..scope import Scope
from ..store.base import VectorStore
from ..text import content_terms, identifiers, relatives
from . import rules
from .hygiene import adds_content, align_stems, informative, same_meaning

__all__ = ["DuplicateFinder", "Identity", "disjoint_events", "identity", "merged_kind_patch"]

#: the kinds the gate guesses from incidental words; a reworded duplicate merges across them
#: (``write.dedup_across_kinds``); facts and working memory keep their own rules
_KINDS = (MemoryType.EPISODIC, MemoryType.SEMANTIC, MemoryType.PROCEDURAL)
#: how curated a kind is: the kept memory of a cross-kind merge takes the more curated one
_CURATED = {MemoryType.EPISODIC: 0, MemoryType.PROCEDURAL: 1, MemoryType.SEMANTIC: 1}


def merged_kind_patch(kept: MemoryRecord, new_kind: MemoryType, new_importance: float) -> dict[str, Any]:
    """Payload patch for the memory a duplicate merges into: one more restatement (``recurrence`` + 1, so
    how often the user said it stays visible after the words are folded into one memory), the more
    curated kind (an episodic memory restated as a preference becomes semantic; never the reverse)
    and the higher importance."""
    patch: dict[str, Any] = {"recurrence": kept.recurrence + 1}
    if kept.memory_type in _CURATED and new_kind in _CURATED and _CURATED[new_kind] > _CURATED[kept.memory_type]:
        patch["memory_type"] = new_kind.value
    if new_importance > kept.importance:
        patch["importance"] = new_importance
    return patch


@dataclass(frozen=True)
class Identity:
    """What must agree for two texts to be one memory: normalised text (exact repeats),
    sorted identifiers, numbers, polarity (negation present), the relatives the text is about
    (:func:`memory_engine.text.relatives`; empty = the user) and past aspect
    (:func:`memory_engine.write.rules.past_aspect`)."""

    normalised: str
    identifiers: tuple[str, ...]
    numbers: frozenset[str]
    negated: bool
    people: frozenset[str] = frozenset()
    past: bool = False

    def agrees(self, other: Identity) -> bool:
        """Same identifiers, numbers, polarity, people and aspect (the similarity test is separate)."""
        return (self.identifiers == other.identifiers and self.numbers == other.numbers
                and self.negated == other.negated and self.people == other.people and self.past == other.past)


def identity(text: str) -> Identity:
    return Identity(rules.normalise(text), tuple(sorted(identifiers(text))), rules.numbers(text), rules.polarity(text),
                    relatives(text), rules.past_aspect(text))


def disjoint_events(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    """Whether two resolved event times [start, end) (epoch seconds; None = undated, then never disjoint) share no
    instant."""
    if a[0] is None or b[0] is None:
        return False
    a_end = a[1] if a[1] is not None else a[0]
    b_end = b[1] if b[1] is not None else b[0]
    return float(a_end) <= float(b[0]) or float(b_end) <= float(a[0])


class DuplicateFinder:
    """``find(clean, vec, memory_type, scope)``: the first of the ``write.dedup_candidates``
    nearest current memories of that type (owner's, current embedding version) that is
    the same memory (module docstring), or None. Raises ConfigError at construction for
    a ``write.dedup_similarity`` outside [0, 1]."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, cfg: WriteSection) -> None:
        if not 0.0 <= cfg.dedup_similarity <= 1.0:
            raise ConfigError("write.dedup_similarity must be in [0, 1]", key="write.dedup_similarity")
        if cfg.dedup_candidates < 1:
            raise ConfigError("write.dedup_candidates must be >= 1", key="write.dedup_candidates")
        self.store, self.embedder = store, embedder
        self.similarity, self.candidates = cfg.dedup_similarity, cfg.dedup_candidates
        self.reworded, self.overlap = cfg.dedup_reworded_similarity, cfg.dedup_term_overlap
        self.distinct = cfg.dedup_distinct_terms
        self.across_kinds = cfg.dedup_across_kinds
        self.fillers, self.stem_prefix = cfg.dedup_ignore_fillers, cfg.dedup_stem_prefix
        self.same_terms = cfg.dedup_same_terms_similarity

    def find(self, clean: str, vec: np.ndarray, memory_type: MemoryType, scope: Scope,
             role: str = "user", pii_terms: tuple[str, ...] = (),
             event: tuple[float | None, float | None] = (None, None)) -> MemoryRecord | None:
        """The current memory ``clean`` repeats (module docstring), or None. ``event``: the new statement's resolved
        event time [start, end) in epoch seconds (None = undated): a memory dated to a disjoint time is another
        occurrence ('Dentist on Monday' said in two weeks: two appointments), never a repeat."""
        new = identity(clean)
        new_all = informative(content_terms(clean), self.fillers)
        kinds = (memory_type,) + (_KINDS if self.across_kinds and memory_type in _KINDS else ())
        flt = scope.filter(memory_types=tuple(dict.fromkeys(k.value for k in kinds)))
        for p in self.store.search_dense(vec.tolist(), flt, self.candidates):
            if not scope.owns(p) or (p.payload.get("role") or "user") != role:
                continue  # the assistant repeating the user's words does not confirm them
            old = identity(p.payload.get("content", ""))
            stored_terms = set(p.payload.get("terms") or ())
            if set(pii_terms) - stored_terms:
                continue  # '[PHONE]' vs '[PHONE]': the redacted values differ (their keyed search terms do)
            old_terms = informative(stored_terms, self.fillers)
            new_terms = align_stems(new_all, old_terms, self.stem_prefix)
            if old.normalised != new.normalised and (adds_content(new_terms, old_terms) or not same_meaning(
                    self.embedder.rescale(p.score), new_terms, old_terms,
                    repeat_similarity=self.similarity, reworded_similarity=self.reworded, term_overlap=self.overlap,
                    distinct_terms=self.distinct, same_terms_similarity=self.same_terms)):
                continue
            if not old.agrees(new):
                continue
            if disjoint_events(event, (p.payload.get("event_start"), p.payload.get("event_end"))):
                continue  # the same words for another day: merging would file the new one under the old date
            return MemoryRecord.from_payload(p.id, p.payload)
        return None
