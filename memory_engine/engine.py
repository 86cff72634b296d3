"""The :class:`MemoryEngine` facade: write pipeline, hybrid retrieval, facts,
forget/erase, citations, all traced with OpenTelemetry spans (TRACES.md).

Write pipeline (SEED_DIGEST section 3)::

    validate owner -> PII redaction -> chit-chat / one-off rejection
    -> importance + type -> candidate pool (uncertain) -> write threshold
    -> embed -> fact overwrite | dedup (touch) -> correction supersedes -> store

Retrieval pipeline (SEED_DIGEST section 4)::

    mandatory filter (tenant + user + current + not archived + embedding version)
    -> vague-query rewrite -> routes: dense, keyword (sparse BM25), recent, fact
    -> fusion (weighted | five_term | rrf) -> relevance floor -> top_k -> token budget

Any failure inside retrieval returns an empty ``degraded`` result and an error
span; it never raises to the caller. ``now`` overrides the clock everywhere.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, cast

import numpy as np
from opentelemetry.trace import Status, StatusCode

from .config import EngineConfig, FusionStrategy, SupersedeMode
from .embedding import CachedEmbedder, make_embedder
from .errors import ValidationError
from .models import (
    CandidateExplanation,
    Hit,
    MemoryRecord,
    MemoryStatus,
    MemoryType,
    RetrievalResult,
    Source,
    WriteOutcome,
    WriteResult,
    from_epoch,
    to_epoch,
)
from .observability.tracing import (
    SPAN_ANSWER,
    SPAN_FORGET,
    SPAN_RETRIEVE,
    SPAN_WRITE,
    Tracing,
    ids_hex,
    parent_context,
    set_attrs,
)
from .retrieve import temporal
from .retrieve.fusion import Candidate, apply_budget, apply_floor, fuse
from .store.base import ScoredPayload, StoredPoint, StoreFilter, VectorStore
from .text import (
    content_terms,
    count_tokens,
    entities,
    identifiers,
    keyword_coverage,
    sparse_document,
    sparse_query,
    surface_words,
)
from .write import rules
from .write.pii import redact

CITATION = re.compile(r"\[mem-([0-9a-f]{16})\]")
_VAGUE = re.compile(
    r"上次|那个|那款|那家|那件|那双|那本|之前|刚才|前面|还记得|\b(that one|last time|the one|earlier|previous|"
    r"that|it|those|again)\b",
    re.IGNORECASE,
)
#: words of a vague reference itself; they say "look back", not what about
_VAGUE_TERMS = frozenset("one last time earlier previous again 上次 那个 之前 刚才 前面 那款 那家 那件 上回 说的".split())
_ROLE_SOURCE = {"user": Source.USER_STATED, "assistant": Source.MODEL_INFERRED, "tool": Source.TOOL, "system": Source.USER_STATED}


def parse_citations(text: str) -> list[str]:
    """Memory ids cited as ``[mem-<16 hex>]`` in ``text``, first occurrence order, no repeats."""
    seen: dict[str, None] = {}
    for m in CITATION.finditer(text or ""):
        seen.setdefault(m.group(1), None)
    return list(seen)


def _require_owner(user_id: Any, tenant_id: Any) -> tuple[str, str]:
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValidationError("user_id is required: every memory has an owner (seed 004)", field="user_id")
    if not isinstance(tenant_id, str) or not tenant_id.strip():
        raise ValidationError("tenant_id must be a non-empty string", field="tenant_id")
    return user_id, tenant_id


class MemoryEngine:
    """Agent memory on Qdrant.

    ``MemoryEngine(EngineConfig())`` opens the embedded default (a qdrant-edge
    shard in the workspace, spans into the workspace warehouse);
    ``MemoryEngine.in_memory()`` keeps nothing after :meth:`close`.
    ``embedder`` / ``store`` may be injected (a shared embedder lets many
    engines reuse one embedding cache); ``span_processors`` receive every span.
    """

    def __init__(
        self,
        config: EngineConfig | None = None,
        *,
        embedder: CachedEmbedder | None = None,
        store: VectorStore | None = None,
        span_processors: Sequence[Any] = (),
        ephemeral: bool = False,
    ) -> None:
        self.config = config or EngineConfig()
        cfg = self.config
        self.ephemeral = ephemeral
        self.embedder = embedder or make_embedder(cfg.embedding)
        if store is None:
            from .store.factory import make_store

            store = make_store(cfg.storage, cfg.workspace, ephemeral=ephemeral)
        self.store = store
        self.store.ensure_collection(self.embedder.dim)
        self.tracing = Tracing(cfg.tracing.service_name, span_processors, enabled=cfg.tracing.enabled)
        self.warehouse: Any = None
        if not ephemeral and cfg.tracing.enabled and cfg.tracing.warehouse:
            self._attach_warehouse()
        if cfg.tracing.otlp_endpoint:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            from .observability.exporter import otlp_traces_url

            self.tracing.add_processor(
                BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_traces_url(cfg.tracing.otlp_endpoint)))
            )
        self._config_hash = cfg.config_hash()
        # load jieba's dictionary and the tokenizer now, not inside the first span (it would
        # show up as a 1-2 s retrieval in the latency dashboards)
        content_terms("预热 warm-up")
        count_tokens("warm-up")
        self._user_locks: dict[tuple[str, str], threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._closed = False

    @classmethod
    def in_memory(
        cls,
        config: EngineConfig | None = None,
        *,
        embedder: CachedEmbedder | None = None,
        span_processors: Sequence[Any] = (),
    ) -> MemoryEngine:
        """An engine whose store lives in a temporary shard removed on close; no warehouse export."""
        return cls(config, embedder=embedder, span_processors=span_processors, ephemeral=True)

    def _attach_warehouse(self) -> None:
        try:
            from .observability.exporter import attach_warehouse_exporter
        except ImportError:
            return
        self.warehouse = attach_warehouse_exporter(self)

    # ------------------------------------------------------------------ utils
    @property
    def embedding_version(self) -> str:
        return self.embedder.version

    @property
    def config_hash(self) -> str:
        return self._config_hash

    def _now(self, now: datetime | None) -> float:
        if now is None:
            return time.time()
        if now.tzinfo is None:
            raise ValidationError("now must be timezone-aware", field="now")
        return to_epoch(now)

    def _user_lock(self, tenant_id: str, user_id: str) -> threading.Lock:
        key = (tenant_id, user_id)
        with self._locks_guard:
            lock = self._user_locks.get(key)
            if lock is None:
                lock = self._user_locks[key] = threading.Lock()
            return lock

    def _filter(self, tenant_id: str, user_id: str, **kw: Any) -> StoreFilter:
        kw.setdefault("embedding_version", self.embedding_version)
        return StoreFilter(tenant_id=tenant_id, user_id=user_id, **kw)

    def _owned(self, p: ScoredPayload, tenant_id: str, user_id: str) -> bool:
        return p.payload.get("tenant_id") == tenant_id and p.payload.get("user_id") == user_id

    # ------------------------------------------------------------------ write
    def add(
        self,
        text: str,
        *,
        user_id: str,
        tenant_id: str = "default",
        session_id: str | None = None,
        role: str = "user",
        memory_type: str | MemoryType | None = None,
        metadata: dict[str, Any] | None = None,
        fact: dict[str, Any] | None = None,
        now: datetime | None = None,
        permanent: bool = False,
    ) -> WriteResult:
        """Run ``text`` through the write pipeline.

        Returns :class:`WriteResult` with outcome ``stored`` / ``merged`` /
        ``rejected`` / ``candidate``. Raises :class:`ValidationError` (and
        stores nothing) for a missing ``user_id``/``tenant_id``, a non-string
        text, an unknown ``memory_type``/``role`` or a malformed ``fact``
        (needs ``key`` and ``value``).
        """
        user_id, tenant_id = _require_owner(user_id, tenant_id)
        if not isinstance(text, str):
            raise ValidationError("text must be a string", field="text")
        if role not in _ROLE_SOURCE:
            raise ValidationError(f"role must be one of {sorted(_ROLE_SOURCE)}", field="role")
        hint = None
        if memory_type is not None:
            try:
                hint = MemoryType(memory_type)
            except ValueError as e:
                raise ValidationError(
                    f"unknown memory_type {memory_type!r}; valid: {', '.join(t.value for t in MemoryType)}", field="memory_type"
                ) from e
        if fact is not None:
            if not isinstance(fact, dict) or not str(fact.get("key", "")).strip() or "value" not in fact:
                raise ValidationError("fact must be a dict with a non-empty 'key' and a 'value'", field="fact")
        ts = self._now(now)
        with self.tracing.tracer.start_as_current_span(SPAN_WRITE) as span:
            set_attrs(span, {
                "memory.tenant_id": tenant_id, "memory.user_id": user_id, "memory.session_id": session_id,
                "memory.config_hash": self._config_hash, "memory.embedding_version": self.embedding_version,
            })
            try:
                with self._user_lock(tenant_id, user_id):
                    result = self._add(text, user_id, tenant_id, session_id, role, hint, dict(metadata or {}), fact, ts,
                                       permanent, now)
            except Exception as e:
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, str(e)))
                raise
            set_attrs(span, {
                "memory.id": result.memory_id, "memory.type": result.memory_type,
                "memory.write_outcome": result.outcome, "memory.reject_reason": result.reason or None,
                "memory.importance": result.importance, "memory.superseded_ids": list(result.superseded_ids) or None,
                "memory.content": self._span_content,
            })
            return result

    _span_content: str | None = None

    def _add(
        self, text: str, user_id: str, tenant_id: str, session_id: str | None, role: str, hint: MemoryType | None,
        metadata: dict[str, Any], fact: dict[str, Any] | None, ts: float, permanent: bool, now: datetime | None = None,
    ) -> WriteResult:
        wcfg = self.config.write
        self._span_content = None
        if not self.config.memory.enabled:
            return WriteResult(WriteOutcome.REJECTED.value, None, "memory_disabled")
        clean, kinds = text.strip()[: wcfg.max_chars], cast(tuple[str, ...], ())
        if wcfg.redact_pii:
            red = redact(clean)
            clean, kinds = red.text, red.kinds
        self._span_content = clean
        reason = rules.reject_reason(clean)
        if reason and fact is None:
            return WriteResult(WriteOutcome.REJECTED.value, None, reason, redactions=kinds)
        sig = rules.signals(clean)
        imp = rules.importance(clean, sig, wcfg, has_fact=fact is not None)
        mtype = rules.classify(sig, fact is not None, hint)
        uncertain = sig.uncertain and fact is None and hint in (None, MemoryType.EPISODIC) and mtype != MemoryType.FACT
        if hint is None and fact is None and not uncertain and imp < wcfg.threshold:
            return WriteResult(WriteOutcome.REJECTED.value, None, f"below_threshold:{imp:.2f}", importance=imp,
                               memory_type=mtype.value, redactions=kinds)
        vec = self.embedder.embed_documents([clean])[0]
        terms = tuple(content_terms(clean))
        # "yesterday I called the landlord" is about the day before it was said
        when = temporal.resolve(clean, now if now is not None else datetime.fromtimestamp(ts, UTC))
        base: dict[str, Any] = dict(event_start=when.start if when else None, event_end=when.end if when else None,
                    user_id=user_id, tenant_id=tenant_id, session_id=session_id, role=role, metadata=metadata,
                    importance=imp, source=_ROLE_SOURCE[role], created_at=ts, updated_at=ts, last_access_at=ts,
                    embedding_version=self.embedding_version, terms=terms, permanent=permanent,
                    tokens=count_tokens(clean))
        if uncertain:
            return self._add_candidate(clean, vec, base, kinds, ts)
        superseded: list[str] = []
        if fact is not None:
            key = str(fact["key"]).strip().lower()
            value = fact["value"]
            old = self._current_fact(tenant_id, user_id, key)
            if old is not None and old.fact_value == value:
                self._touch(old, ts, updated=True)
                return WriteResult(WriteOutcome.MERGED.value, old.id, f"duplicate_fact:{key}", importance=imp,
                                   memory_type=MemoryType.FACT.value, redactions=kinds)
            if old is not None:
                superseded.append(old.id)
            if sig.correction:  # 'change my default courier to SF' also retires 'I use ZTO'
                superseded.extend(pid for pid, _ in self._related_for_correction(clean, vec, terms, tenant_id, user_id))
            base.update(fact_key=key, fact_value=value)
            mtype = MemoryType.FACT
        else:
            dup = self._find_duplicate(clean, vec, mtype, tenant_id, user_id)
            if dup is not None:
                self._touch(dup, ts, updated=True)
                self._confirm_if_repeated(dup, ts)
                return WriteResult(WriteOutcome.MERGED.value, dup.id, f"duplicate_of:{dup.id}", importance=imp,
                                   memory_type=mtype.value, redactions=kinds)
            if sig.correction:
                related = self._related_for_correction(clean, vec, terms, tenant_id, user_id)
                superseded.extend(pid for pid, _ in related)
                if related and hint is None:
                    mtype = MemoryType(related[0][1])  # a correction replaces a memory of the same kind
        if mtype != MemoryType.FACT and rules.is_constraint(clean, sig):
            base["metadata"] = {**base["metadata"], "_kind": "constraint"}
        rec = MemoryRecord(id=self._new_id(), content=clean, memory_type=mtype, status=MemoryStatus.CURRENT,
                           supersedes=tuple(superseded), **base)
        self._write([rec], vec[None, :])
        if superseded:
            self._supersede(superseded, rec.id, ts)
        return WriteResult(WriteOutcome.STORED.value, rec.id, "supersedes" if superseded else "", tuple(superseded),
                           importance=imp, memory_type=mtype.value, redactions=kinds)

    def _add_candidate(self, clean: str, vec: np.ndarray, base: dict[str, Any], kinds: tuple[str, ...], ts: float) -> WriteResult:
        """Candidate pool (seed 002): an uncertain item waits; when it recurs in
        ``candidate_promote_count`` distinct sessions it is promoted to current."""
        wcfg = self.config.write
        flt = self._filter(base["tenant_id"], base["user_id"], statuses=(MemoryStatus.CANDIDATE.value,))
        for p in self.store.search_dense(vec.tolist(), flt, self.config.write.dedup_candidates):
            if self.embedder.rescale(p.score) < wcfg.dedup_similarity:
                continue
            old = MemoryRecord.from_payload(p.id, p.payload)
            sessions = set(old.metadata.get("_sessions", [old.session_id]))
            sessions.add(base["session_id"])
            patch: dict[str, Any] = {"recurrence": old.recurrence + 1, "updated_at": ts,
                                     "metadata": {**old.metadata, "_sessions": sorted(s for s in sessions if s)}}
            if len(sessions) >= wcfg.candidate_promote_count:
                patch["status"] = MemoryStatus.CURRENT.value
                self.store.set_payload([old.id], patch)
                return WriteResult(WriteOutcome.STORED.value, old.id, "promoted_candidate", importance=old.importance,
                                   memory_type=old.memory_type.value, redactions=kinds)
            self.store.set_payload([old.id], patch)
            return WriteResult(WriteOutcome.CANDIDATE.value, old.id, "candidate_recurred", importance=old.importance,
                               memory_type=old.memory_type.value, redactions=kinds)
        meta = {**base.pop("metadata"), "_sessions": [base["session_id"]] if base["session_id"] else []}
        rec = MemoryRecord(id=self._new_id(), content=clean, memory_type=MemoryType.EPISODIC,
                           status=MemoryStatus.CANDIDATE, metadata=meta, **base)
        self._write([rec], vec[None, :])
        return WriteResult(WriteOutcome.CANDIDATE.value, rec.id, "uncertain", importance=rec.importance,
                           memory_type=rec.memory_type.value, redactions=kinds)

    def _find_duplicate(self, clean: str, vec: np.ndarray, mtype: MemoryType, tenant_id: str, user_id: str) -> MemoryRecord | None:
        """Seed 000: cosine >= dedup_similarity with a current memory of the same type
        -> touch instead of a new record. Compared on the model-rescaled similarity,
        and only when identifiers and negation agree (normalise-then-match, seed 002):
        'order A123' never merges into 'order A124', 'I like X' never into 'I don't like X'."""
        flt = self._filter(tenant_id, user_id, memory_types=(mtype.value,))
        ids_new = sorted(identifiers(clean))
        nums_new = rules.numbers(clean)
        neg_new = rules.polarity(clean)
        for p in self.store.search_dense(vec.tolist(), flt, self.config.write.dedup_candidates):
            if not self._owned(p, tenant_id, user_id):
                continue
            old_text = p.payload.get("content", "")
            exact = rules.normalise(old_text) == rules.normalise(clean)
            if not exact and self.embedder.rescale(p.score) < self.config.write.dedup_similarity:
                continue
            if (sorted(identifiers(old_text)) != ids_new or rules.numbers(old_text) != nums_new
                    or rules.polarity(old_text) != neg_new):
                continue
            return MemoryRecord.from_payload(p.id, p.payload)
        return None

    def _related_for_correction(
        self, clean: str, vec: np.ndarray, terms: tuple[str, ...], tenant_id: str, user_id: str
    ) -> list[tuple[str, str]]:
        """Older current memories a correction replaces (seed 000, step 4): related when
        the rescaled similarity is >= supersede_similarity AND the corrected part of the
        new text (from the first correction marker on) shares content terms with the old
        one (share >= supersede_keyword_overlap, marker words excluded). Two negations
        (two constraints) only when also strongly similar. Returns (memory id, memory type) pairs."""
        wcfg = self.config.write
        flt = self._filter(tenant_id, user_id, memory_types=(MemoryType.SEMANTIC.value, MemoryType.EPISODIC.value,
                                                              MemoryType.PROCEDURAL.value))
        new_terms = set(content_terms(rules.correction_scope(clean))) - rules.MARKER_TERMS
        new_idents = {i for i in identifiers(clean) if sum(ch.isdigit() for ch in i) >= 3}
        neg_new = rules.polarity(clean)
        out = []
        for p in self.store.search_dense(vec.tolist(), flt, self.config.retrieval.route_limit):
            if not self._owned(p, tenant_id, user_id):
                continue
            sim = self.embedder.rescale(p.score)
            if sim < wcfg.supersede_similarity:
                continue
            old_text = p.payload.get("content", "")
            old_idents = {i for i in identifiers(old_text) if sum(ch.isdigit() for ch in i) >= 3}
            if new_idents and old_idents and not (new_idents & old_idents):
                continue  # different entities (card 尾号0988 vs 尾号8890)
            old_terms = set(p.payload.get("terms") or ()) - rules.MARKER_TERMS
            overlap = len(new_terms & old_terms) / max(1, min(len(new_terms), len(old_terms)))
            if overlap < wcfg.supersede_keyword_overlap:
                continue  # the correction must name what the old memory is about
            if neg_new and rules.polarity(old_text) and sim < wcfg.supersede_strong_similarity:
                continue  # two constraints ('no games', 'no horror') normally coexist
            out.append((p.id, p.payload.get("memory_type", MemoryType.SEMANTIC.value)))
        return out

    def _supersede(self, old_ids: Iterable[str], new_id: str, ts: float) -> None:
        if self.config.write.supersede_mode == SupersedeMode.PENDING_CONFIRMATION:
            patch = {"status": MemoryStatus.PENDING_CONFIRMATION.value, "superseded_by": new_id, "updated_at": ts}
        else:
            patch = {"status": MemoryStatus.DEPRECATED.value, "superseded_by": new_id, "archived_at": ts,
                     "archived": 1, "updated_at": ts}
        self.store.set_payload(list(old_ids), patch)

    def _confirm_if_repeated(self, rec: MemoryRecord, ts: float) -> None:
        """Seed 004: in pending_confirmation mode the old values a new memory replaced stay
        pending until the user repeats the new one ``lifecycle.confirm_repeats`` times;
        then they are archived like in archive mode."""
        if not rec.supersedes or rec.access_count + 1 < self.config.lifecycle.confirm_repeats:
            return
        pending = [p.id for p in self.store.retrieve(list(rec.supersedes))
                   if p.payload.get("status") == MemoryStatus.PENDING_CONFIRMATION.value]
        if pending:
            self.store.set_payload(pending, {"status": MemoryStatus.DEPRECATED.value, "archived_at": ts, "archived": 1,
                                             "updated_at": ts})

    def _touch(self, rec: MemoryRecord, ts: float, updated: bool = False) -> None:
        patch: dict[str, Any] = {"access_count": rec.access_count + 1, "last_access_at": ts}
        if updated:
            patch["updated_at"] = ts
        self.store.set_payload([rec.id], patch)

    def _new_id(self) -> str:
        return secrets.token_hex(8)

    def _write(self, recs: Sequence[MemoryRecord], vecs: np.ndarray) -> None:
        pts = [
            StoredPoint(r.id, v.tolist(), sparse_document(r.terms), r.to_payload())
            for r, v in zip(recs, vecs, strict=True)
        ]
        self.store.upsert(pts)

    def _current_fact(self, tenant_id: str, user_id: str, key: str) -> MemoryRecord | None:
        flt = self._filter(tenant_id, user_id, fact_key=key, memory_types=(MemoryType.FACT.value,), embedding_version=None)
        rows = self.store.scroll(flt, limit=1, order_by="created_at", descending=True)
        return MemoryRecord.from_payload(rows[0].id, rows[0].payload) if rows else None

    # ------------------------------------------------------------------ facts
    def get_fact(self, key: str, *, user_id: str, tenant_id: str = "default") -> Any:
        """Current value of structured fact ``key`` for the owner, or None. Exact
        lookup, never by similarity (seed 001)."""
        user_id, tenant_id = _require_owner(user_id, tenant_id)
        rec = self._current_fact(tenant_id, user_id, str(key).strip().lower())
        return None if rec is None else rec.fact_value

    def fact_history(self, key: str, *, user_id: str, tenant_id: str = "default") -> list[MemoryRecord]:
        """Every version of a fact (current and superseded), oldest first."""
        user_id, tenant_id = _require_owner(user_id, tenant_id)
        flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, fact_key=str(key).strip().lower(), statuses=None,
                          include_archived=True)
        rows = self.store.scroll(flt, order_by="created_at", descending=False)
        return [MemoryRecord.from_payload(r.id, r.payload) for r in rows]

    def facts(self, *, user_id: str, tenant_id: str = "default") -> dict[str, Any]:
        """All current facts of the owner as {key: value}."""
        user_id, tenant_id = _require_owner(user_id, tenant_id)
        flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, memory_types=(MemoryType.FACT.value,))
        return {r.payload["fact_key"]: r.payload.get("fact_value") for r in self.store.scroll(flt)}

    # ------------------------------------------------------------------ read
    def memory(self, memory_id: str, *, user_id: str, tenant_id: str = "default") -> MemoryRecord | None:
        """One record of the owner by id (any status), or None (also for another owner's id)."""
        user_id, tenant_id = _require_owner(user_id, tenant_id)
        if not re.fullmatch(r"[0-9a-f]{16}", memory_id or ""):
            return None
        rows = self.store.retrieve([memory_id])
        if not rows or not self._owned(rows[0], tenant_id, user_id):
            return None
        return MemoryRecord.from_payload(rows[0].id, rows[0].payload)

    def list_memories(
        self, *, user_id: str, tenant_id: str = "default", statuses: Sequence[str] | None = None,
        include_archived: bool = True, memory_types: Sequence[str] | None = None, limit: int | None = None,
    ) -> list[MemoryRecord]:
        """The owner's records, newest first (all statuses by default)."""
        user_id, tenant_id = _require_owner(user_id, tenant_id)
        flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, statuses=tuple(statuses) if statuses else None,
                          include_archived=include_archived, memory_types=tuple(memory_types) if memory_types else None)
        rows = self.store.scroll(flt, limit=limit, order_by="created_at", descending=True)
        return [MemoryRecord.from_payload(r.id, r.payload) for r in rows]

    def retrieve(
        self,
        query: str,
        *,
        user_id: str,
        tenant_id: str = "default",
        session_id: str | None = None,
        top_k: int | None = None,
        now: datetime | None = None,
        explain: bool = False,
        memory_types: Sequence[str] | None = None,
    ) -> RetrievalResult:
        """Hybrid retrieval for the owner.

        Returns at most ``top_k`` (default ``retrieval.top_k``) hits, best
        first, within ``retrieval.token_budget`` tokens. ``explain=True``
        adds a :class:`CandidateExplanation` for every candidate (route ranks
        and scores, relevance, fused score, dropping stage). A missing
        ``user_id`` raises ValidationError (seed 004: no owner, no read);
        every other failure returns ``degraded=True`` with no hits.
        """
        user_id, tenant_id = _require_owner(user_id, tenant_id)
        started = time.perf_counter()
        rcfg = self.config.retrieval
        k = top_k if top_k is not None else rcfg.top_k
        with self.tracing.tracer.start_as_current_span(SPAN_RETRIEVE) as span:
            trace_id, span_id = ids_hex(span)
            set_attrs(span, {
                "memory.tenant_id": tenant_id, "memory.user_id": user_id, "memory.session_id": session_id,
                "memory.query": (f"sha256:{_sha(query)}" if self.config.tracing.redact_query else query),
                "memory.top_k": k, "memory.config_hash": self._config_hash,
                "memory.embedding_version": self.embedding_version, "memory.fusion": rcfg.fusion.value,
            })
            base: dict[str, Any] = dict(query=query, user_id=user_id, tenant_id=tenant_id, session_id=session_id,
                        span_id=span_id, trace_id=trace_id)
            try:
                hits: list[Hit]
                expl: list[CandidateExplanation]
                if not self.config.memory.enabled:
                    hits, expl, rewritten = [], [], None
                else:
                    ts = self._now(now)
                    hits, expl, rewritten = self._retrieve(query, user_id, tenant_id, session_id, k, ts,
                                                           memory_types, now or datetime.fromtimestamp(ts, UTC))
                degraded, error = False, None
            except Exception as e:  # degrade, never raise (seed 000)
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, f"{type(e).__name__}: {e}"))
                hits, expl, rewritten, degraded, error = [], [], None, True, f"{type(e).__name__}: {e}"
            latency = (time.perf_counter() - started) * 1000
            set_attrs(span, {
                "memory.retrieved_ids": [h.memory_id for h in hits],
                "memory.retrieved_scores": [float(h.score) for h in hits],
                "memory.retrieved_sources": ["+".join(h.sources) for h in hits],
                "memory.retrieved_contents": [h.content for h in hits],
                "memory.retrieved_count": len(hits), "memory.degraded": degraded,
                "memory.rewritten_query": rewritten,
            })
            return RetrievalResult(hits=hits, degraded=degraded, latency_ms=latency, rewritten_query=rewritten,
                                   error=error, explanations=expl if explain else None, **base)

    def _rewrite(self, query: str, q_terms: frozenset[str], tenant_id: str, user_id: str, session_id: str | None) -> str | None:
        """Seed 000/003: expand a vague query ('上次那个', 'that one') with the
        session's recent topic terms, taken from the owner's latest memories of that session."""
        rcfg = self.config.retrieval
        if (not rcfg.rewrite_vague or not session_id or not _VAGUE.search(query)
                or len(q_terms) > rcfg.rewrite_max_terms):
            return None
        flt = self._filter(tenant_id, user_id, session_id=session_id)
        recent = self.store.scroll(flt, limit=rcfg.rewrite_memories, order_by="created_at", descending=True)
        extra: list[str] = []
        for p in recent:
            for w in surface_words(p.payload.get("content", "")):
                if w not in extra and not w.startswith("[") and not (content_terms(w) <= q_terms):
                    extra.append(w)
        extra = extra[: rcfg.rewrite_terms]
        return f"{query} {' '.join(extra)}" if extra else None

    def _retrieve(
        self, query: str, user_id: str, tenant_id: str, session_id: str | None, k: int, ts: float,
        memory_types: Sequence[str] | None, now_dt: datetime,
    ) -> tuple[list[Hit], list[CandidateExplanation], str | None]:
        rcfg = self.config.retrieval
        q_range = temporal.resolve(query, now_dt) if rcfg.temporal_weight > 0 else None
        q_terms = content_terms(query) - _VAGUE_TERMS
        rewritten = self._rewrite(query, q_terms, tenant_id, user_id, session_id)
        text = rewritten or query
        route_terms = content_terms(rewritten) if rewritten else q_terms
        # coverage is judged on what the user asked; the rewrite only widens recall
        cover_terms = q_terms or route_terms
        qvec = self.embedder.embed_query(text)
        pending_mode = self.config.write.supersede_mode == SupersedeMode.PENDING_CONFIRMATION
        statuses = (MemoryStatus.CURRENT.value,) + ((MemoryStatus.PENDING_CONFIRMATION.value,) if pending_mode else ())
        flt = self._filter(tenant_id, user_id, memory_types=tuple(memory_types) if memory_types else None,
                           statuses=statuses)
        lim = rcfg.route_limit
        routes: dict[str, list[ScoredPayload]] = {"vector": self.store.search_dense(qvec.tolist(), flt, lim)}
        if route_terms:
            routes["keyword"] = self.store.search_sparse(sparse_query(route_terms), flt, lim)
        if rcfg.recent_limit:
            routes["recent"] = self.store.scroll(flt, limit=rcfg.recent_limit, order_by="last_access_at", descending=True)
        routes["fact"] = self._fact_route(route_terms, tenant_id, user_id, memory_types)
        if rcfg.constraints_on_recommend and rules.RECOMMEND_INTENT.search(query):
            # seed 001: explicit constraints are checked first on every recommendation request
            cflt = self._filter(tenant_id, user_id, metadata={"_kind": "constraint"})
            routes["fact"] += [ScoredPayload(p.id, 1.0, p.payload) for p in self.store.scroll(cflt, limit=lim)]
        payloads: dict[str, dict[str, Any]] = {}
        ranks: dict[str, dict[str, int]] = {}
        scores: dict[str, dict[str, float]] = {}
        for route, rows in routes.items():
            for i, p in enumerate(rows, start=1):
                if not self._owned(p, tenant_id, user_id):  # defence in depth: the filter already isolates
                    continue
                payloads[p.id] = p.payload
                ranks.setdefault(p.id, {})[route] = i
                scores.setdefault(p.id, {})[route] = float(p.score)
        sims = {mid: s["vector"] for mid, s in scores.items() if "vector" in s}
        missing = [mid for mid in payloads if mid not in sims]
        if missing:
            for p in self.store.retrieve(missing, with_vectors=True):
                if p.dense is not None:
                    sims[p.id] = float(np.dot(np.asarray(p.dense, dtype=np.float32), qvec))
        fact_ids = {p.id for p in routes["fact"]}
        q_idents = frozenset(identifiers(text))
        cands = []
        for mid, pl in payloads.items():
            has_ident = bool(q_idents & set(pl.get("terms") or ()))
            c = self._candidate(mid, pl, sims.get(mid, 0.0), cover_terms, ranks[mid], scores[mid],
                                mid in fact_ids or has_ident, session_id, ts)
            if q_idents and not has_ident:
                c = replace(c, similarity=c.similarity * rcfg.identifier_mismatch,
                            coverage=c.coverage * rcfg.identifier_mismatch)
            if q_range is not None:
                # payload values are untyped (epoch seconds or None)
                start: Any = pl.get("event_start")
                end: Any = pl.get("event_end")
                if start is None:  # no date in the memory: it is about the day it was written
                    day = datetime.fromtimestamp(float(pl.get("created_at") or ts), now_dt.tzinfo)
                    d0 = day.replace(hour=0, minute=0, second=0, microsecond=0)
                    start, end = d0.timestamp(), d0.timestamp() + 86_400
                if q_range.overlaps(float(start), float(end)):
                    c = replace(c, temporal_match=1.0)
            if pl.get("status") == MemoryStatus.PENDING_CONFIRMATION.value:
                # seed 004: an unconfirmed old value shows only when strongly relevant, below the new one
                if c.relevance < self.config.write.supersede_strong_similarity:
                    continue
                c = replace(c, source_weight=c.source_weight * rcfg.inferred_weight)
            cands.append(c)
        fused = fuse(cands, rcfg.fusion.value, self._fusion_params())
        kept, below = apply_floor(fused, rcfg.floor)
        if rcfg.entity_hops and rcfg.hop_limit and kept:
            hopped = self._entity_hop(kept[: rcfg.hop_parents], q_terms, fused, payloads, flt, qvec, cover_terms, session_id, ts)
            if hopped:
                parent_score = {c.memory_id: c.fused for c in fused}
                refused = fuse([c for c in fused if c.memory_id not in hopped] + [c for c, _ in hopped.values()],
                               rcfg.fusion.value, self._fusion_params())
                # a memory reached through an entity ranks below the hit that named it
                fused = sorted(
                    (replace(c, fused=min(c.fused, rcfg.hop_discount * parent_score[hopped[c.memory_id][1]]))
                     if c.memory_id in hopped else c for c in refused),
                    key=lambda c: (-c.fused, c.memory_id))
                kept, below = apply_floor(fused, rcfg.floor)
        final, over_k, over_budget = apply_budget(kept, k, rcfg.token_budget)
        hits = []
        for c in final:
            pl = payloads[c.memory_id]
            hits.append(Hit(memory_id=c.memory_id, content=pl["content"], score=round(c.fused, 6),
                            sources=tuple(r for r in ("vector", "keyword", "recent", "fact")
                                          if r in c.route_ranks or (r == "keyword" and "hop" in c.route_ranks)),
                            memory_type=pl["memory_type"], created_at=from_epoch(pl["created_at"]) or datetime.now(UTC),
                            importance=float(pl.get("importance", 0.5)), relevance=round(c.relevance, 6),
                            metadata=dict(pl.get("metadata") or {})))
        if rcfg.touch_on_hit:
            for c in final:
                pl = payloads[c.memory_id]
                self.store.set_payload([c.memory_id], {"access_count": int(pl.get("access_count", 0)) + 1,
                                                       "last_access_at": ts})
        stage = {c.memory_id: "floor" for c in below} | {c.memory_id: "top_k" for c in over_k} | {
            c.memory_id: "token_budget" for c in over_budget}
        rank_of = {c.memory_id: i for i, c in enumerate(final, start=1)}
        expl = [CandidateExplanation(c.memory_id, dict(c.route_ranks), dict(c.route_scores), round(c.relevance, 6),
                                     round(c.fused, 6), rank_of.get(c.memory_id), stage.get(c.memory_id))
                for c in fused]
        return hits, expl, rewritten

    def _entity_hop(
        self, parents: list[Candidate], q_terms: frozenset[str], fused: list[Candidate], payloads: dict[str, dict[str, Any]],
        flt: StoreFilter, qvec: np.ndarray, cover_terms: frozenset[str], session_id: str | None, ts: float,
    ) -> dict[str, tuple[Candidate, str]]:
        """One entity hop (multi-hop questions): keyword-search the entities the top
        hits name but the query does not; a memory found that way inherits its
        parent's relevance (carried in ``exact_match``), so 'Sarah Lee works in
        London' follows 'my manager is Sarah Lee'. Returns {id: (candidate, parent id)}."""
        rcfg = self.config.retrieval
        by_id = {c.memory_id: c for c in fused}
        out: dict[str, tuple[Candidate, str]] = {}
        for parent in parents:
            ents = entities(payloads[parent.memory_id].get("content", "")) - q_terms
            if not ents:
                continue
            rows = self.store.search_sparse(sparse_query(ents), flt, rcfg.hop_limit + 1)
            missing = [p.id for p in rows if p.id not in payloads]
            vecs = {p.id: p.dense for p in self.store.retrieve(missing, with_vectors=True)} if missing else {}
            for rank, p in enumerate(rows, start=1):
                if p.id == parent.memory_id or not self._owned(p, flt.tenant_id, flt.user_id or ""):
                    continue
                if len(out) >= rcfg.hop_limit:
                    break
                inherited = parent.relevance
                c = by_id.get(p.id)
                if c is None:
                    payloads[p.id] = p.payload
                    v = vecs.get(p.id)
                    cos = float(np.dot(np.asarray(v, dtype=np.float32), qvec)) if v is not None else 0.0
                    c = self._candidate(p.id, p.payload, cos, cover_terms, {}, {}, False, session_id, ts)
                if c.relevance >= inherited:
                    continue
                ranks = {**c.route_ranks, "hop": rank}
                scores = {**c.route_scores, "hop": float(p.score)}
                out[p.id] = (replace(c, exact_match=max(c.exact_match, inherited), route_ranks=ranks, route_scores=scores),
                             parent.memory_id)
        return out

    def _fact_route(self, q_terms: frozenset[str], tenant_id: str, user_id: str, memory_types: Sequence[str] | None) -> list[ScoredPayload]:
        """Structured facts whose key parts or value match a query term (seed 001: exact, not by vector)."""
        if not q_terms or (memory_types and MemoryType.FACT.value not in memory_types):
            return []
        flt = self._filter(tenant_id, user_id, memory_types=(MemoryType.FACT.value,), embedding_version=None)
        out = []
        for p in self.store.scroll(flt, limit=self.config.retrieval.fact_scan_limit):
            key = str(p.payload.get("fact_key") or "")
            parts = set(re.split(r"[._\-\s/]+", key.lower())) | content_terms(key.replace(".", " "))
            parts |= content_terms(str(p.payload.get("fact_value")))
            if q_terms & parts:
                out.append(ScoredPayload(p.id, 1.0, p.payload))
        return out

    def _candidate(
        self, mid: str, pl: dict[str, Any], cos: float, q_terms: frozenset[str], ranks: dict[str, int],
        scores: dict[str, float], exact_hit: bool, session_id: str | None, ts: float,
    ) -> Candidate:
        rcfg = self.config.retrieval
        mtype = pl.get("memory_type", "episodic")
        meta = pl.get("metadata") or {}
        checks = []
        if session_id:
            checks.append(1.0 if pl.get("session_id") == session_id else 0.0)
        topic = meta.get("topic")
        if topic:
            checks.append(1.0 if content_terms(str(topic).replace("_", " ")) & q_terms else 0.0)
        src = pl.get("source", "user_stated")
        return Candidate(
            memory_id=mid,
            similarity=self.embedder.rescale(cos),
            coverage=keyword_coverage(q_terms, pl.get("terms") or ()),
            exact_match=1.0 if exact_hit else 0.0,
            metadata_match=sum(checks) / len(checks) if checks else 0.0,
            importance=float(pl.get("importance", 0.5)),
            age_seconds=max(0.0, ts - float(pl.get("updated_at") or pl.get("created_at") or ts)),
            half_life_days=getattr(rcfg.half_life_days, mtype, None),
            route_ranks=ranks,
            route_scores=scores,
            source_weight=rcfg.inferred_weight if src == Source.MODEL_INFERRED.value else rcfg.user_stated_weight,
            tokens=int(pl.get("tokens") or 0),
        )

    def _fusion_params(self) -> dict[str, float]:
        r = self.config.retrieval
        if r.fusion == FusionStrategy.WEIGHTED:
            return {"similarity": r.weights.similarity, "recency": r.weights.recency,
                    "importance": r.weights.importance, "tau_days": r.tau_days, "temporal": r.temporal_weight}
        if r.fusion == FusionStrategy.FIVE_TERM:
            w = r.five_term_weights
            return {"vector": w.vector, "keyword": w.keyword, "metadata": w.metadata, "time": w.time,
                    "importance": w.importance, "temporal": r.temporal_weight}
        rw = r.route_weights
        # RRF scores are ~1/(k+rank): scale the date bonus to that range
        return {"k": r.rrf_k, "route.vector": rw.vector, "route.keyword": rw.keyword, "route.recent": rw.recent,
                "route.fact": rw.fact, "temporal": r.temporal_weight / r.rrf_k}

    # ------------------------------------------------------------------ context & citations
    def context_block(self, res: RetrievalResult) -> str:
        """Prompt block, one ``[mem-<id>] content`` line per hit (seed 000), so answers can cite ids."""
        return "\n".join(f"[mem-{h.memory_id}] {h.content}" for h in res.hits)

    def record_answer(self, res: RetrievalResult, answer_text: str) -> list[str]:
        """Parse ``[mem-<id>]`` citations in an answer, emit a ``memory.answer`` span
        linked to the retrieval (same trace, ``memory.retrieve_span_id``) and
        return the cited ids in order of first citation."""
        cited = parse_citations(answer_text)
        ctx = parent_context(res.trace_id, res.span_id)
        with self.tracing.tracer.start_as_current_span(SPAN_ANSWER, context=ctx) as span:
            set_attrs(span, {
                "memory.tenant_id": res.tenant_id, "memory.user_id": res.user_id, "memory.session_id": res.session_id,
                "memory.cited_ids": cited, "memory.retrieve_span_id": res.span_id, "memory.answer_text": answer_text,
                "memory.config_hash": self._config_hash,
            })
        return cited

    # ------------------------------------------------------------------ forget
    def forget(self, memory_id: str, *, user_id: str, tenant_id: str = "default") -> bool:
        """Delete one of the owner's memories; False when it does not exist or belongs to someone else."""
        user_id, tenant_id = _require_owner(user_id, tenant_id)
        with self.tracing.tracer.start_as_current_span(SPAN_FORGET) as span:
            set_attrs(span, {"memory.tenant_id": tenant_id, "memory.user_id": user_id, "memory.id": memory_id})
            rec = self.memory(memory_id, user_id=user_id, tenant_id=tenant_id)
            if rec is None:
                span.set_attribute("memory.forgotten_count", 0)
                return False
            self.store.delete([memory_id])
            set_attrs(span, {"memory.type": rec.memory_type.value, "memory.forgotten_count": 1})
            return True

    def erase_user(self, user_id: str, *, tenant_id: str = "default") -> int:
        """Remove every record of the owner (all statuses, archived, every embedding
        version) from the store (seed 002: GDPR-style erase) and, per
        ``lifecycle.erase_warehouse`` (delete | pseudonymise | keep), the owner's
        spans and verdicts from the workspace warehouse. Returns the count of
        store records removed (``lifecycle.forget.erase_user`` gives full counts)."""
        user_id, tenant_id = _require_owner(user_id, tenant_id)
        with self.tracing.tracer.start_as_current_span(SPAN_FORGET) as span:
            flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, statuses=None, include_archived=True)
            ids = [p.id for p in self.store.scroll(flt)]
            if ids:
                self.store.delete(ids)
            # the erase span must not re-introduce the erased id into the warehouse
            alias = "anon-" + hashlib.sha256(f"|{tenant_id}|{user_id}".encode()).hexdigest()[:12]
            set_attrs(span, {"memory.tenant_id": tenant_id, "memory.user_id": alias, "memory.erase": True,
                             "memory.forgotten_count": len(ids)})
        mode = self.config.lifecycle.erase_warehouse
        if self.warehouse is not None and mode != "keep":
            from .lifecycle.forget import erase_user_warehouse

            self.tracing.force_flush()
            erase_user_warehouse(self.warehouse, user_id, tenant_id=tenant_id, mode=mode)
        return len(ids)

    def health_report(self, *, tenant_id: str = "default", now: datetime | None = None) -> Any:
        """Health score 0..100 of one tenant's store (seed 001): freshness, coverage of
        ``health.key_attributes``, consistency of facts with semantic memories, penalties
        for ownerless records and mixed embedding versions. Returns
        :class:`memory_engine.observability.health.HealthReport`."""
        from .observability.health import HealthWeights, health_report

        h = self.config.health
        flt = StoreFilter(tenant_id=tenant_id, user_id=None, tenant_scan=True, statuses=None, include_archived=True)
        memories: list[dict[str, Any]] = []
        facts: list[dict[str, Any]] = []
        for p in self.store.scroll(flt):
            pl = p.payload
            memories.append({"id": p.id, "user_id": pl.get("user_id"), "tenant_id": pl.get("tenant_id"),
                             "memory_type": pl.get("memory_type"), "status": pl.get("status"),
                             "content": pl.get("content", ""), "embedding_version": pl.get("embedding_version"),
                             "fact_key": pl.get("fact_key")})
            if pl.get("fact_key") and pl.get("status") == MemoryStatus.CURRENT.value and not pl.get("archived"):
                facts.append({"id": p.id, "key": pl["fact_key"], "value": pl.get("fact_value"),
                              "updated_at": pl.get("updated_at") or pl.get("created_at"), "user_id": pl.get("user_id"),
                              "tenant_id": pl.get("tenant_id")})
        return health_report(
            memories, facts, now=self._now(now), key_attributes=tuple(h.key_attributes),
            weights=HealthWeights(h.weight_freshness, h.weight_coverage, h.weight_consistency),
            freshness_days=h.freshness_days, freshness_alert=h.freshness_alert, coverage_alert=h.coverage_alert,
            composite_alert=h.composite_alert,
        )

    # ------------------------------------------------------------------ lifecycle & working memory
    def build_context(self, query: str, **kw: Any) -> Any:
        """Context blocks (system, summary, recent turns, memories) within the
        ``working`` budgets; see :func:`memory_engine.working.build_context`."""
        from .working import build_context

        return build_context(self, query, **kw)

    def add_turn(self, text: str, **kw: Any) -> Any:
        """Append a conversation turn to the session's working memory (not the long-term store)."""
        from .working import sessions_for

        return sessions_for(self).add_turn(text, **kw)

    def lifecycle_run(self, **kw: Any) -> Any:
        """Archive / expire / evict per the lifecycle rules; see :func:`memory_engine.lifecycle.runner.run_lifecycle`."""
        from .lifecycle.runner import run_lifecycle

        return run_lifecycle(self, **kw)

    def forget_where(self, **kw: Any) -> Any:
        """Forget the owner's memories matching a filter (type, topic, time range);
        see :func:`memory_engine.lifecycle.forget.forget_where`."""
        from .lifecycle.forget import forget_where

        return forget_where(self, **kw)

    def consolidate(self, **kw: Any) -> Any:
        """Merge near-duplicates, fold profiles, resolve conflicts for one owner;
        see :func:`memory_engine.lifecycle.consolidate.consolidate`."""
        from .lifecycle.consolidate import consolidate

        return consolidate(self, **kw)

    def writer(self, **kw: Any) -> Any:
        """An :class:`memory_engine.lifecycle.writer.AsyncWriter` (one queue per user, batching, back-pressure)."""
        from .lifecycle.writer import AsyncWriter

        return AsyncWriter(self, **kw)

    def flush(self) -> None:
        self.store.flush()
        self.tracing.force_flush()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.tracing.force_flush()
            self.tracing.shutdown()
        finally:
            self.store.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _sha(s: str) -> str:
    import hashlib

    return hashlib.sha256(s.encode()).hexdigest()[:16]


__all__ = ["MemoryEngine", "parse_citations", "replace"]
