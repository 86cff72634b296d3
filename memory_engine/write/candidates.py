"""Candidate pool (seed 002): an uncertain statement ('maybe I'll learn Rust')
is kept as a ``candidate``, invisible to retrieval, until it recurs in
``write.candidate_promote_count`` distinct sessions; then it is promoted to
``current``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..config import KeywordSection, WriteSection
from ..embedding import CachedEmbedder
from ..errors import ConfigError
from ..models import MemoryRecord, MemoryStatus, MemoryType, WriteOutcome, WriteResult
from ..scope import Scope
from ..store.base import VectorStore
from .records import upsert_records

__all__ = ["CandidatePool"]


class CandidatePool:
    """``add(rec, vec, scope, redactions)``: ``rec`` is the would-be candidate record (built
    by the pipeline). When a candidate of the owner is the same statement (rescaled
    similarity >= ``write.dedup_similarity`` among the ``write.dedup_candidates`` nearest), it
    is counted again (``recurrence`` + 1, its sessions in ``metadata._sessions``) and promoted
    once seen in ``candidate_promote_count`` sessions (outcome ``stored``, reason
    ``promoted_candidate``; else ``candidate``/``candidate_recurred``); otherwise ``rec`` is
    stored as a new episodic candidate (``candidate``/``uncertain``).
    Raises ConfigError at construction for ``candidate_promote_count`` < 1."""

    def __init__(self, store: VectorStore, embedder: CachedEmbedder, cfg: WriteSection,
                 keyword: KeywordSection | None = None) -> None:
        if cfg.candidate_promote_count < 1:
            raise ConfigError("write.candidate_promote_count must be >= 1", key="write.candidate_promote_count")
        self.store, self.embedder = store, embedder
        self.similarity, self.candidates = cfg.dedup_similarity, cfg.dedup_candidates
        self.promote_count = cfg.candidate_promote_count
        self.keyword = keyword

    def add(self, rec: MemoryRecord, vec: np.ndarray, scope: Scope, redactions: tuple[str, ...]) -> WriteResult:
        ts = rec.created_at
        flt = scope.filter(statuses=(MemoryStatus.CANDIDATE.value,))
        for p in self.store.search_dense(vec.tolist(), flt, self.candidates):
            if self.embedder.rescale(p.score) < self.similarity:
                continue
            old = MemoryRecord.from_payload(p.id, p.payload)
            sessions = set(old.metadata.get("_sessions", [old.session_id]))
            sessions.add(rec.session_id)
            patch = {"recurrence": old.recurrence + 1, "updated_at": ts,
                     "metadata": {**old.metadata, "_sessions": sorted(s for s in sessions if s)}}
            promoted = len(sessions) >= self.promote_count
            if promoted:
                patch["status"] = MemoryStatus.CURRENT.value
            self.store.set_payload([old.id], patch)
            outcome, reason = ((WriteOutcome.STORED, "promoted_candidate") if promoted
                               else (WriteOutcome.CANDIDATE, "candidate_recurred"))
            return WriteResult(outcome.value, old.id, reason, importance=old.importance,
                               memory_type=old.memory_type.value, redactions=redactions)
        meta = {**rec.metadata, "_sessions": [rec.session_id] if rec.session_id else []}
        new = replace(rec, memory_type=MemoryType.EPISODIC, status=MemoryStatus.CANDIDATE, metadata=meta)
        upsert_records(self.store, [new], vec[None, :], self.keyword)
        return WriteResult(WriteOutcome.CANDIDATE.value, new.id, "uncertain", importance=new.importance,
                           memory_type=new.memory_type.value, redactions=redactions)
