"""The :class:`MemoryEngine` facade: validate the arguments, take the owner's
lock, open the span, delegate to the stages, record the outcome.

* writes run the write pipeline (:mod:`memory_engine.write.pipeline`);
* reads run the retrieval pipeline (:mod:`memory_engine.retrieve.pipeline`);
  any failure inside retrieval returns an empty ``degraded`` result and an
  error span, it never raises to the caller;
* lifecycle jobs, working memory and the async writer live in
  :mod:`memory_engine.lifecycle` and :mod:`memory_engine.working`; the methods
  here forward to them.

Spans follow TRACES.md. ``now`` overrides the clock everywhere.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Status, StatusCode

from .citations import CITATION, CitedIds, UnknownCitationWarning, context_block, parse_citations
from .config import EngineConfig
from .embedding import CachedEmbedder, make_embedder
from .errors import StoreError
from .models import (
    CandidateExplanation,
    Hit,
    MemoryRecord,
    MemoryStatus,
    MemoryType,
    RetrievalResult,
    WriteResult,
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
from .paths import workspace_root
from .retrieve import temporal
from .retrieve.pipeline import RetrievalPipeline, RetrievalRequest
from .scope import Scope
from .store.base import StoreFilter, VectorStore
from .text import configure_names, content_terms, count_tokens
from .validation import (
    check_read_bounds,
    check_write_bounds,
    epoch_now,
    parse_memory_type,
    require_fact,
    require_owner,
    require_role,
    require_text,
    require_timezone,
)
from .write.facts import FactBook
from .write.pii import PiiSettings, redact
from .write.pipeline import AddRequest, WritePipeline

if TYPE_CHECKING:
    from .lifecycle.consolidate import ConsolidationReport, LLMExtractor
    from .lifecycle.forget import ForgetReport
    from .lifecycle.policy import LifecyclePolicy
    from .lifecycle.runner import LifecycleReport
    from .lifecycle.writer import AsyncWriter, WriteMode, WriteRequest
    from .observability.health import HealthReport
    from .working import ContextBundle, Turn, WorkingMemory

log = logging.getLogger(__name__)


class MemoryEngine:
    """Agent memory on Qdrant.

    ``MemoryEngine(EngineConfig())`` opens the embedded default store (a
    qdrant-edge shard in the workspace); its spans go to ``span_processors``
    only. :func:`memory_engine.workspace.open_workspace` builds the engine with
    the workspace's exporters (DuckDB warehouse, OTLP) and the active embedding.
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
        self._stages: tuple[WritePipeline, RetrievalPipeline] | None = None
        self._pii_secret: bytes | None = None
        self.config = config or EngineConfig()
        cfg = self.config
        configure_names(cfg.keyword)  # the tokenizer's name recogniser (process-wide, memory_engine.text)
        self.ephemeral = ephemeral
        self.embedder = embedder or make_embedder(cfg.embedding)
        if store is None:
            from .store.factory import make_store

            store = make_store(cfg.storage, cfg.workspace, ephemeral=ephemeral)
        self.store = store
        self.store.ensure_collection(self.embedder.dim)
        # exporters (workspace warehouse, OTLP) are attached by the composition root,
        # memory_engine.workspace.open_workspace; the engine holds no warehouse
        self.tracing = Tracing(cfg.tracing.service_name, span_processors, enabled=cfg.tracing.enabled,
                               max_attribute_chars=cfg.limits.max_attribute_chars)
        self._config_hash = cfg.config_hash()
        # load jieba's dictionary and the tokenizer now, not inside the first span (it would
        # show up as a 1-2 s retrieval in the latency dashboards)
        content_terms("预热 warm-up")
        count_tokens("warm-up")
        temporal.warm_up()
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

    # ------------------------------------------------------------------ parts
    # store, embedder and config may be swapped (re-embedding switches store and model):
    # the stages are rebuilt from the new parts on next use
    @property
    def store(self) -> VectorStore:
        return self._store

    @store.setter
    def store(self, value: VectorStore) -> None:
        self._store = value
        self._stages = None

    @property
    def embedder(self) -> CachedEmbedder:
        return self._embedder

    @embedder.setter
    def embedder(self, value: CachedEmbedder) -> None:
        self._embedder = value
        self._stages = None

    @property
    def config(self) -> EngineConfig:
        return self._config

    @config.setter
    def config(self, value: EngineConfig) -> None:
        self._config = value
        self._stages = None

    def _pipelines(self) -> tuple[WritePipeline, RetrievalPipeline]:
        stages = self._stages
        if stages is None:
            key = self._pii_key()
            stages = self._stages = (WritePipeline(self._store, self._embedder, self._config, pii_key=key),
                                     RetrievalPipeline(self._store, self._embedder, self._config, pii_key=key))
        return stages

    def _pii_key(self) -> bytes:
        """The key of the search terms redacted values leave (``pii.fingerprint_terms``): HMAC-SHA256 of a
        fixed label under the workspace's secret salt (the erase pseudonyms' salt, created on first use;
        a one-off salt for an engine without a workspace folder), so write and read agree and the terms
        mean nothing without the workspace. Empty when the feature is off."""
        if not self._config.pii.fingerprint_terms:
            return b""
        if self._pii_secret is None:
            from .lifecycle.forget import workspace_salt

            ws = self._config.workspace
            salt = workspace_salt(None if self.ephemeral and ws is None else workspace_root(ws)).encode("utf-8")
            self._pii_secret = hmac.new(salt, b"memwb pii search terms", hashlib.sha256).digest()
        return self._pii_secret

    @property
    def write_pipeline(self) -> WritePipeline:
        """The write stages over the current store, embedder and config."""
        return self._pipelines()[0]

    @property
    def retrieval_pipeline(self) -> RetrievalPipeline:
        """The retrieval stages over the current store, embedder and config."""
        return self._pipelines()[1]

    @property
    def embedding_version(self) -> str:
        return self.embedder.version

    @property
    def config_hash(self) -> str:
        return self._config_hash

    def _user_lock(self, tenant_id: str, user_id: str) -> threading.Lock:
        key = (tenant_id, user_id)
        with self._locks_guard:
            lock = self._user_locks.get(key)
            if lock is None:
                lock = self._user_locks[key] = threading.Lock()
            return lock

    def _scope(self, user_id: str, tenant_id: str) -> Scope:
        return Scope(tenant_id, user_id, self.embedding_version)

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
        timezone: str | None = None,
    ) -> WriteResult:
        """Run ``text`` through the write pipeline.

        Returns :class:`WriteResult` with outcome ``stored`` / ``merged`` /
        ``rejected`` / ``candidate`` / ``forgotten`` (a forget instruction:
        ``superseded_ids`` and ``evidence`` name what it archived; a forget
        instruction naming no memory is ``rejected`` with reason
        ``forget_intent:no_match`` and is not stored). Every
        substantive statement is kept (below ``write.threshold`` as an episodic
        memory); only noise is rejected. ``role`` ``assistant`` / ``tool`` texts are
        kept as episodic records of what was said, never the user's fact; tool
        texts with planted instructions are flagged. ``metadata={"speaker": ...}``
        names who said it (a correction only retires the same speaker's memories).
        Dates in the text ('yesterday', '6月3号') are resolved in ``timezone`` (IANA
        name or '+08:00'; default ``memory.timezone``, else ``now``'s tzinfo).
        Raises :class:`ValidationError` (and stores nothing) for a missing
        ``user_id``/``tenant_id``, a non-string text, an unknown
        ``memory_type``/``role``/``timezone`` or a malformed ``fact`` (needs
        ``key`` and ``value``).
        """
        user_id, tenant_id = require_owner(user_id, tenant_id)
        text, role, hint, fact = require_text(text), require_role(role), parse_memory_type(memory_type), require_fact(fact)
        check_write_bounds(self.config.limits, text=text, user_id=user_id, tenant_id=tenant_id, session_id=session_id,
                           metadata=metadata, fact=fact)
        ts = epoch_now(now)
        ref = temporal.user_time(ts, now, require_timezone(timezone), self.config.memory.timezone)
        req = AddRequest(text, user_id, tenant_id, ts, session_id, role, hint, dict(metadata or {}), fact,
                         permanent, ref)
        with self.tracing.tracer.start_as_current_span(SPAN_WRITE) as span:
            set_attrs(span, {
                "memory.tenant_id": tenant_id, "memory.user_id": user_id, "memory.session_id": session_id,
                "memory.config_hash": self._config_hash, "memory.embedding_version": self.embedding_version,
            })
            try:
                with self._user_lock(tenant_id, user_id):
                    run = self.write_pipeline.run(req)
            except Exception as e:
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, str(e)))
                if isinstance(e, TimeoutError | OSError):  # a store's raw I/O error: one error family for callers
                    raise StoreError(f"write failed: {type(e).__name__}: {e}") from e
                raise
            result = run.result
            set_attrs(span, {
                "memory.id": result.memory_id, "memory.type": result.memory_type,
                "memory.write_outcome": result.outcome, "memory.reject_reason": result.reason or None,
                "memory.importance": result.importance, "memory.superseded_ids": list(result.superseded_ids) or None,
                "memory.supersede_evidence": (json.dumps(list(result.evidence), ensure_ascii=False)
                                              if result.evidence else None),
                "memory.redacted_versions": (json.dumps([list(v) for v in result.redacted_versions])
                                             if result.redacted_versions else None),
                "memory.content": run.content,
            })
            return result

    # ------------------------------------------------------------------ facts
    def get_fact(self, key: str, *, user_id: str, tenant_id: str = "default") -> Any:
        """Current value of structured fact ``key`` for the owner, or None. Exact
        lookup, never by similarity (seed 001)."""
        user_id, tenant_id = require_owner(user_id, tenant_id)
        rec = FactBook(self.store).current(self._scope(user_id, tenant_id), key)
        return None if rec is None else rec.fact_value

    def fact_history(self, key: str, *, user_id: str, tenant_id: str = "default") -> list[MemoryRecord]:
        """Every version of a fact (current and superseded), oldest first."""
        user_id, tenant_id = require_owner(user_id, tenant_id)
        return FactBook(self.store).history(self._scope(user_id, tenant_id), key)

    def facts(self, *, user_id: str, tenant_id: str = "default") -> dict[str, Any]:
        """All current facts of the owner as {key: value}."""
        user_id, tenant_id = require_owner(user_id, tenant_id)
        return FactBook(self.store).values(self._scope(user_id, tenant_id))

    # ------------------------------------------------------------------ read
    def memory(self, memory_id: str, *, user_id: str, tenant_id: str = "default") -> MemoryRecord | None:
        """One record of the owner by id (any status), or None (also for another owner's id)."""
        user_id, tenant_id = require_owner(user_id, tenant_id)
        if not re.fullmatch(r"[0-9a-f]{16}", memory_id or ""):
            return None
        rows = self.store.retrieve([memory_id])
        if not rows or not self._scope(user_id, tenant_id).owns(rows[0]):
            return None
        return MemoryRecord.from_payload(rows[0].id, rows[0].payload)

    def list_memories(
        self, *, user_id: str, tenant_id: str = "default", statuses: Sequence[str] | None = None,
        include_archived: bool = True, memory_types: Sequence[str] | None = None, limit: int | None = None,
    ) -> list[MemoryRecord]:
        """The owner's records, newest first (all statuses by default)."""
        user_id, tenant_id = require_owner(user_id, tenant_id)
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
        timezone: str | None = None,
    ) -> RetrievalResult:
        """Hybrid retrieval for the owner.

        Returns at most ``top_k`` (default ``retrieval.top_k``) hits, best
        first, within ``retrieval.token_budget`` tokens. ``explain=True``
        adds a :class:`CandidateExplanation` for every candidate (route ranks
        and scores, relevance, fused score, dropping stage). A missing
        ``user_id`` raises ValidationError (seed 004: no owner, no read), so
        does input beyond ``config.limits`` (a query longer than
        ``max_query_chars``, ``top_k`` outside ``1..max_top_k``, an id longer
        than ``max_id_chars``); every other failure (store, embedder, a
        non-finite query vector) returns ``degraded=True`` with no hits. Dates the
        query names are resolved in ``timezone`` (as in :meth:`add`; an unknown
        name raises ValidationError).
        """
        user_id, tenant_id = require_owner(user_id, tenant_id)
        timezone = require_timezone(timezone)
        check_read_bounds(self.config.limits, query=query, top_k=top_k, user_id=user_id, tenant_id=tenant_id,
                          session_id=session_id)
        started = time.perf_counter()
        rcfg = self.config.retrieval
        k = top_k if top_k is not None else rcfg.top_k
        # one PII pass over the query serves the span and the planner's keyed search terms
        redaction = (redact(query, PiiSettings.from_config(self.config.pii))
                     if self.config.tracing.redact_query and not self.config.tracing.hash_query else None)
        with self.tracing.tracer.start_as_current_span(SPAN_RETRIEVE) as span:
            trace_id, span_id = ids_hex(span)
            set_attrs(span, {
                "memory.tenant_id": tenant_id, "memory.user_id": user_id, "memory.session_id": session_id,
                "memory.query": self._span_query(query) if redaction is None else redaction.text,
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
                    ts = epoch_now(now)
                    run = self.retrieval_pipeline.run(RetrievalRequest(
                        query, user_id, tenant_id, k, ts,
                        temporal.user_time(ts, now, timezone, self.config.memory.timezone), session_id, memory_types,
                        redaction))
                    hits, expl, rewritten = run.hits, run.explanations, run.rewritten
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
                "memory.rewritten_query": None if rewritten is None else self._span_query(rewritten),
            })
            return RetrievalResult(hits=hits, degraded=degraded, latency_ms=latency, rewritten_query=rewritten,
                                   error=error, explanations=expl if explain else None, **base)

    #: what :meth:`warm_up` asks: an English and a Chinese question naming a weekday, a relative and a need, so
    #: that the tokenizers, the date reader, the category examples and the model's first inference all run
    WARM_UP_QUERIES: tuple[str, ...] = ("What did my sister say about the hotel last Friday?",
                                        "我上周五说的新地址是哪里？")
    #: the owner (user id, tenant id) :meth:`warm_up` reads as: ids :func:`require_owner` refuses (a control
    #: character), so no caller's memories can match it
    WARM_UP_OWNER = ("\x00warm-up", "\x00warm-up")

    def warm_up(self, now: datetime | None = None) -> float:
        """Pay the retrieval stages' one-time costs (the tokenizers' dictionaries, the date reader, the embedding
        of the fact categories' examples, the model's first inference: about 1-3 s on two cores, measured on
        this machine) outside any span, so that the first traced retrieve of a short-lived process (one
        ``memwb retrieve``) records the retrieval's latency, not the process's start-up, in the warehouse's
        p95 / p99. Runs :attr:`WARM_UP_QUERIES` through the pipeline for :attr:`WARM_UP_OWNER`, whom no
        caller can be: nothing of any owner is read or changed, no span is made. Returns the seconds taken
        (>= 0); a failure is logged and ignored (the timed call reports it in its own span)."""
        started = time.perf_counter()
        if not self.config.memory.enabled:
            return 0.0
        user_id, tenant_id = self.WARM_UP_OWNER
        ts = epoch_now(now)
        try:
            for q in self.WARM_UP_QUERIES:
                self.retrieval_pipeline.run(RetrievalRequest(
                    q, user_id, tenant_id, self.config.retrieval.top_k, ts,
                    temporal.user_time(ts, now, None, self.config.memory.timezone)))
        except Exception as e:  # noqa: BLE001 - a warm-up never fails the call it prepares
            log.warning("retrieval warm-up failed: %s: %s", type(e).__name__, e)
        return time.perf_counter() - started

    def _span_text(self, text: str, redact_it: bool) -> str:
        """``text`` as a span may carry it: PII masked by the ``config.pii`` detectors when ``redact_it``."""
        if not redact_it:
            return text
        return redact(text, PiiSettings.from_config(self.config.pii)).text

    def _span_query(self, query: str) -> str:
        """The query as spans store it: ``tracing.hash_query`` -> a hash; ``tracing.redact_query`` -> PII masked."""
        if self.config.tracing.hash_query:
            return f"sha256:{_sha(query)}"
        return self._span_text(query, self.config.tracing.redact_query)

    # ------------------------------------------------------------------ context & citations
    def context_block(self, res: RetrievalResult) -> str:
        """Prompt block, one ``[mem-<id>] content`` line per hit (seed 000), so answers can cite ids."""
        return context_block(res.hits)

    def record_answer(self, res: RetrievalResult, answer_text: str, *, now: datetime | None = None) -> CitedIds:
        """Parse ``[mem-<id>]`` citations in an answer, emit a ``memory.answer`` span
        linked to the retrieval (same trace, ``memory.retrieve_span_id``) and
        return the cited ids in order of first citation.

        ``now`` (timezone-aware) is the answer's time: the span starts then (a
        replay of old conversations keeps their times). An id cited but not
        among the retrieval's hits cannot be a grounded citation: it is kept in
        the result's ``unknown`` (and the span's ``memory.unknown_cited_ids``)
        and an :class:`UnknownCitationWarning` is issued; it still counts as
        cited (the metrics count only ids that were retrieved).
        Raises ValidationError for a naive ``now``.
        """
        at_ns = int(epoch_now(now) * 1e9) if now is not None else None
        cited = parse_citations(answer_text)
        retrieved = {h.memory_id for h in res.hits}
        unknown = tuple(c for c in cited if c not in retrieved)
        ctx = parent_context(res.trace_id, res.span_id)
        started = time.perf_counter()
        with self.tracing.tracer.start_as_current_span(
            SPAN_ANSWER, context=ctx, start_time=at_ns, end_on_exit=at_ns is None
        ) as span:
            set_attrs(span, {
                "memory.tenant_id": res.tenant_id, "memory.user_id": res.user_id, "memory.session_id": res.session_id,
                "memory.cited_ids": cited, "memory.retrieve_span_id": res.span_id,
                "memory.answer_text": self._span_text(answer_text, self.config.tracing.redact_answers),
                "memory.config_hash": self._config_hash,
            })  # fmt: skip
            if unknown:
                span.set_attribute("memory.unknown_cited_ids", list(unknown))
        if at_ns is not None:
            span.end(end_time=at_ns + int((time.perf_counter() - started) * 1e9))
        if unknown:
            warnings.warn(
                f"answer cites {len(unknown)} memory id(s) not among the retrieval's hits: {', '.join(unknown)}",
                UnknownCitationWarning, stacklevel=2,
            )  # fmt: skip
        return CitedIds(cited, unknown=unknown)

    # ------------------------------------------------------------------ forget
    def undo_forget(self, memory_ids: Sequence[str] | None = None, *, user_id: str, tenant_id: str = "default",
                    now: datetime | None = None) -> list[str]:
        """Restore memories a forget instruction ('forget that I ...', '别记...了') or a correction
        archived, while their undo window (``write.undo_days``) is open: ``memory_ids``, else the
        latest such batch. Returns the restored ids (empty when nothing is restorable)."""
        user_id, tenant_id = require_owner(user_id, tenant_id)
        ts = epoch_now(now)
        with self.tracing.tracer.start_as_current_span(SPAN_FORGET) as span:
            with self._user_lock(tenant_id, user_id):
                ids = self.write_pipeline.forgetter.undo(tenant_id, user_id, ts,
                                                         list(memory_ids) if memory_ids else None)
            set_attrs(span, {"memory.tenant_id": tenant_id, "memory.user_id": user_id, "memory.undo": True,
                             "memory.restored_ids": ids or None, "memory.forgotten_count": 0})
        return ids

    def forget(self, memory_id: str, *, user_id: str, tenant_id: str = "default") -> bool:
        """Delete one of the owner's memories; False when it does not exist or belongs to someone else."""
        user_id, tenant_id = require_owner(user_id, tenant_id)
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
        version) from the store (seed 002: GDPR-style erase). Returns the count of
        store records removed. The store only: the owner's trace rows are erased,
        pseudonymised or kept by :meth:`memory_engine.workspace.Workspace.erase_user`
        (one mode, chosen by the caller), which calls this."""
        user_id, tenant_id = require_owner(user_id, tenant_id)
        with self.tracing.tracer.start_as_current_span(SPAN_FORGET) as span:
            flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, statuses=None, include_archived=True)
            ids = [p.id for p in self.store.scroll(flt)]
            if ids:
                self.store.delete(ids)
            # the erase span must not re-introduce the erased id, nor an unsalted (guessable) hash of it:
            # it names no user (lifecycle.forget.erase_user emits the salted pseudonym)
            set_attrs(span, {"memory.tenant_id": tenant_id, "memory.erase": True, "memory.forgotten_count": len(ids)})
        return len(ids)

    def health_report(self, *, tenant_id: str = "default", now: datetime | None = None) -> HealthReport:
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
            memories, facts, now=epoch_now(now), key_attributes=tuple(h.key_attributes),
            weights=HealthWeights(h.weight_freshness, h.weight_coverage, h.weight_consistency),
            freshness_days=h.freshness_days, freshness_alert=h.freshness_alert, coverage_alert=h.coverage_alert,
            composite_alert=h.composite_alert,
        )

    # ------------------------------------------------------------------ lifecycle & working memory
    def build_context(self, query: str, *, user_id: str, session_id: str | None = None, tenant_id: str = "default",
                      system: str = "", now: datetime | None = None, top_k: int | None = None,
                      working: WorkingMemory | None = None) -> ContextBundle:
        """Context blocks (system, summary, recent turns, memories) within the
        ``working`` budgets; see :func:`memory_engine.working.build_context`."""
        from .working import build_context

        return build_context(self, query, user_id=user_id, session_id=session_id, tenant_id=tenant_id, system=system,
                             now=now, top_k=top_k, working=working)

    def add_turn(self, text: str, *, user_id: str, session_id: str, role: str = "user", tenant_id: str = "default",
                 now: datetime | None = None) -> Turn:
        """Append a conversation turn to the session's working memory (not the long-term store)."""
        from .working import sessions_for

        return sessions_for(self).add_turn(text, user_id=user_id, session_id=session_id, role=role,
                                           tenant_id=tenant_id, now=now)

    def lifecycle_run(self, *, now: datetime | None = None, tenant_id: str = "default", user_id: str | None = None,
                      dry_run: bool = False, policy: LifecyclePolicy | None = None) -> LifecycleReport:
        """Archive / expire / evict per the lifecycle rules; see :func:`memory_engine.lifecycle.runner.run_lifecycle`."""
        from .lifecycle.runner import run_lifecycle

        return run_lifecycle(self, now=now, tenant_id=tenant_id, user_id=user_id, dry_run=dry_run, policy=policy)

    def forget_where(self, *, user_id: str, tenant_id: str = "default", memory_types: Sequence[str] | None = None,
                     topic: str | None = None, created_after: datetime | None = None,
                     created_before: datetime | None = None, metadata: dict[str, Any] | None = None,
                     dry_run: bool = False) -> ForgetReport:
        """Forget the owner's memories matching a filter (type, topic, time range);
        see :func:`memory_engine.lifecycle.forget.forget_where`."""
        from .lifecycle.forget import forget_where

        return forget_where(self, user_id=user_id, tenant_id=tenant_id, memory_types=memory_types, topic=topic,
                            created_after=created_after, created_before=created_before, metadata=metadata,
                            dry_run=dry_run)

    def consolidate(self, *, user_id: str, tenant_id: str = "default", now: datetime | None = None,
                    profile_min_sources: int | None = None, extractor: LLMExtractor | None = None,
                    min_confidence: float | None = None, dry_run: bool = False) -> ConsolidationReport:
        """Merge near-duplicates, fold profiles, resolve conflicts for one owner;
        see :func:`memory_engine.lifecycle.consolidate.consolidate`."""
        from .lifecycle.consolidate import consolidate

        return consolidate(self, user_id=user_id, tenant_id=tenant_id, now=now,
                           profile_min_sources=profile_min_sources, extractor=extractor,
                           min_confidence=min_confidence, dry_run=dry_run)

    def writer(self, *, mode: WriteMode | str = "pipeline", batch_size: int = 64, max_queue: int = 1024,
               put_timeout_s: float | None = 5.0, max_attempts: int = 4, backoff_s: float = 0.05,
               backoff_max_s: float = 2.0, dead_letter_path: str | os.PathLike[str] | None = None,
               idle_exit_s: float = 30.0, on_result: Callable[[WriteRequest, WriteResult], None] | None = None,
               apply: Callable[[Any, Sequence[WriteRequest]], list[WriteResult]] | None = None) -> AsyncWriter:
        """An :class:`memory_engine.lifecycle.writer.AsyncWriter` (one queue per user, batching, back-pressure)."""
        from .lifecycle.writer import AsyncWriter

        return AsyncWriter(self, mode=mode, batch_size=batch_size, max_queue=max_queue, put_timeout_s=put_timeout_s,
                           max_attempts=max_attempts, backoff_s=backoff_s, backoff_max_s=backoff_max_s,
                           dead_letter_path=dead_letter_path, idle_exit_s=idle_exit_s, on_result=on_result,
                           apply=apply)

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
    return hashlib.sha256(s.encode()).hexdigest()[:16]


__all__ = ["CITATION", "CitedIds", "MemoryEngine", "UnknownCitationWarning", "parse_citations", "replace"]
