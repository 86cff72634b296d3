"""Reported changes linked to the value they replace (issue 16, failure class 6).

"just finished moving to Shenzhen, boxes everywhere" replaces "I live in Chengdu"; "刚搬到深圳了"
replaces "我住在成都". Told as a completed event, the newer statement shares no word with the older
one and rarely with the question ("where do I live now?"), so it falls under the relevance floor
while the older value answers. Nothing is archived here (a move is no correction: the older
statement was true when said); the newer memory records the link and retrieval uses it
(:func:`memory_engine.retrieve.stale.lift_replacements`: the newer one is lifted to the older
one's score when the older one is found, and the older one ranks below it).

A user statement links an older memory of the same speaker when all hold (numbers are ``write.*``
configuration):

* it reports a change (:func:`memory_engine.write.intents.reports_change`: 'moved', 'settled',
  '搬到', 'switched', '现在' ...) and names no person before it (:func:`memory_engine.text.people`:
  "my brother just moved to Beijing" is the brother's move);
* it names an entity (:func:`memory_engine.text.entities`: a place, an organisation, a name) in the
  clause right after its change marker (the change's object: 'moving to Shenzhen', '入职腾讯') that the
  older memory does not, and the older memory names one the newer does not (a value replaced by
  another: Chengdu -> Shenzhen);
* the older memory speaks in the first person about the speaker (no relative before its first
  entity) and is the nearest such memory by rescaled dense similarity, at least
  ``write.change_link_similarity`` (e5 on the corrections_in_speech suite: a move to another city
  0.40-0.57; a trip or an unrelated slot of the same user mostly lower).

At most ``write.change_link_limit`` older memories are linked (``metadata._replaces``), each with its
evidence in the write result (``rule`` ``reported_change``, ``archived`` False).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..config import WriteSection
from ..embedding import CachedEmbedder
from ..models import MemoryType
from ..scope import Scope
from ..store.base import VectorStore
from ..text import entities, people
from .correction import same_speaker
from .intents import CHANGE, about_speaker, reports_change

__all__ = ["ChangeLinker"]

#: a clause end: the change's object lies before it
_CLAUSE_END = re.compile(r"[,，.。;；!！?？\n]")
_TYPES = tuple(t.value for t in (MemoryType.SEMANTIC, MemoryType.EPISODIC, MemoryType.FACT))


class ChangeLinker:
    """``find(clean, vec, scope, metadata, role)`` -> evidence dicts of the older memories a reported change
    replaces (empty when it reports none). Disabled with ``write.change_link_limit`` = 0."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, cfg: WriteSection, limit: int) -> None:
        self.store, self.embedder, self.cfg, self.search_limit = store, embedder, cfg, limit

    def find(self, clean: str, vec: np.ndarray, scope: Scope, metadata: dict[str, Any], role: str
             ) -> list[dict[str, Any]]:
        if role != "user" or self.cfg.change_link_limit <= 0 or not reports_change(clean):
            return []
        m = CHANGE.search(clean)
        if m is None or people(clean[: m.start()]):
            return []  # someone else's move ('my brother just moved to Beijing', '我朋友小美刚搬到杭州')
        # the value it changes to is the change's object: in the clause right after the marker ('moving to
        # Shenzhen', '搬到深圳', '入职腾讯'); '电动车电池该换了，续航只剩二十公里' changes to nothing named
        end = _CLAUSE_END.search(clean, m.end())
        after = clean[m.end(): end.start() if end else len(clean)].lower()
        new_ents = frozenset(e for e in entities(clean) if e in after)
        if not new_ents:
            return []
        out: list[dict[str, Any]] = []
        for p in self.store.search_dense(vec.tolist(), scope.filter(memory_types=_TYPES), self.search_limit):
            if not scope.owns(p) or not same_speaker(role, metadata, p.payload, clean):
                continue
            sim = float(self.embedder.rescale(p.score))
            if sim < self.cfg.change_link_similarity:
                break  # nearest first: the rest are further
            old = str(p.payload.get("content") or "")
            old_ents = entities(old)
            if not old_ents or not (new_ents - old_ents) or not (old_ents - new_ents):
                continue  # no value replaced by another
            first = min((i for e in old_ents if (i := old.lower().find(e)) >= 0), default=len(old))
            if not about_speaker(old) or people(old[:first]):
                continue  # the older memory is about someone else ('my sister lives in Chengdu')
            out.append({"id": p.id, "rule": "reported_change", "similarity": round(sim, 4), "archived": False,
                        "replaced": sorted(old_ents - new_ents), "by": sorted(new_ents - old_ents)})
            if len(out) >= self.cfg.change_link_limit:
                break
        return out
