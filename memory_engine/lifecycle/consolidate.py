"""Consolidation, the "sleep" job (seed 002: compress, associate, resolve
conflicts; seed 004: nightly extraction to JSON facts with confidence and
source event ids).

Rule-based steps over one owner's current memories (current embedding version):

1. **merge near-duplicates**: same type, equal normalised text or rescaled
   cosine >= ``write.dedup_similarity`` (0.92, seed 000), same identifiers and polarity (so ``A123`` never merges
   into ``A124``, "like" never into "don't like"). The most used, then newest,
   survives and takes the others' access counts and highest importance.
2. **resolve conflicts** by source then time: two memories about the same
   thing (the engine's correction test: rescaled similarity >=
   ``write.supersede_similarity`` with shared terms, or >=
   ``supersede_strong_similarity``) with opposite polarity; user-stated beats tool beats model-inferred (seed 004),
   then the newer wins.
3. **fold** scattered semantic memories about one subject (same
   ``metadata.topic``, at least ``profile_min_sources``) into one profile
   memory that lists them and names their ids (``metadata._sources``).
4. optional **LLM extraction** (:class:`LLMExtractor`): JSON facts with
   confidence and source ids, validated; facts at or above
   ``min_confidence`` (seed 001: 0.85) are added as model-inferred memories
   citing their sources (sources stay current).

Nothing is lost: every replaced memory is archived (status ``deprecated``,
``archived_at``) with ``superseded_by`` pointing at its replacement, which
lists it in ``supersedes`` and ``metadata._sources``; it stays readable by id.

:class:`ConsolidationTrigger` runs the job per user after
``lifecycle.consolidate_after_events`` (50) new events or
``lifecycle.consolidate_after_hours`` (24 h) since the last run (seed 002).
"""

from __future__ import annotations

import json
import os
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from ..errors import ValidationError
from ..models import MemoryRecord, MemoryType, Source
from ..observability.tracing import SPAN_CONSOLIDATE, set_attrs
from ..paths import workspace_paths
from ..store.base import StoreFilter
from ..validation import epoch_now, require_owner
from ..write.dedup import disjoint_events, identity
from ..write.records import build_record, deprecate_patch, upsert_records
from ..write.supersede import SubjectRule
from .llm import ChatClient, LLMError

if TYPE_CHECKING:
    from ..ports import Host

__all__ = [
    "ConsolidationAction",
    "ConsolidationReport",
    "ConsolidationTrigger",
    "ExtractedFact",
    "LLMExtractor",
    "consolidate",
    "consolidation_due",
    "source_rank",
]

_SOURCE_RANK = {Source.USER_STATED: 2, Source.TOOL: 1, Source.MODEL_INFERRED: 0}


def source_rank(src: Source) -> int:
    """Trust order of sources (seed 004: user-stated > model-inferred): user 2, tool 1, model 0."""
    return _SOURCE_RANK.get(src, 0)


@dataclass(frozen=True)
class ConsolidationAction:
    """One change: ``kind`` (``merge`` | ``conflict`` | ``profile`` | ``extract``), the
    memory that now stands for the sources, the sources archived under it (none for
    ``extract``, whose sources stay current) and a reason."""

    kind: str
    survivor_id: str
    source_ids: tuple[str, ...]
    reason: str = ""


@dataclass(frozen=True)
class ConsolidationReport:
    """Outcome of :func:`consolidate`: memories scanned, actions in order, ids
    created (profiles, extracted facts) and archived, and warnings (e.g. an
    LLM answer that failed validation)."""

    user_id: str
    tenant_id: str
    scanned: int
    actions: tuple[ConsolidationAction, ...] = ()
    created_ids: tuple[str, ...] = ()
    archived_ids: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    dry_run: bool = False


class ExtractedFact(BaseModel):
    """One fact of the LLM extractor's JSON answer."""

    model_config = ConfigDict(extra="ignore")
    content: str = Field(min_length=1, max_length=2000)
    confidence: float = Field(ge=0.0, le=1.0)
    source_ids: list[str] = Field(min_length=1)
    topic: str | None = None


class _Extraction(BaseModel):
    facts: list[ExtractedFact]


class LLMExtractor:
    """Facts from memories by an LLM (OpenAI-compatible, JSON mode).

    The answer must be ``{"facts": [{"content", "confidence" (0..1),
    "source_ids" (ids given in the prompt), "topic"?}]}``; anything else raises
    :class:`LLMError` naming the problem; facts citing unknown ids are dropped
    with a warning.
    """

    SYSTEM = ('Extract durable facts about the user from the memories below. Answer JSON only: {"facts": '
              '[{"content": str, "confidence": number 0..1, "source_ids": [ids of the memories used], '
              '"topic": str}]}. Use only the given ids; skip anything uncertain.')

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def extract(self, records: Sequence[MemoryRecord]) -> tuple[list[ExtractedFact], list[str]]:
        body = "\n".join(f"[{r.id}] ({r.created_at:.0f}, {r.source.value}) {r.content}" for r in records)
        raw = self.client.complete(self.SYSTEM, body, json_mode=True)
        try:
            parsed = _Extraction.model_validate(json.loads(raw))
        except (ValueError, PydanticValidationError) as e:
            raise LLMError(f"extractor answer is not valid JSON of the expected shape: {str(e)[:300]}") from e
        known = {r.id for r in records}
        facts, warnings = [], []
        for i, f in enumerate(parsed.facts):
            bad = [s for s in f.source_ids if s not in known]
            if bad:
                warnings.append(f"facts[{i}]: unknown source ids {bad}; dropped")
                continue
            facts.append(f)
        return facts, warnings


def _rescaled_matrix(eng: Host, vecs: np.ndarray) -> np.ndarray:
    sims = vecs @ vecs.T
    b = eng.embedder.baseline
    return np.clip((sims - b) / (1.0 - b), 0.0, 1.0)


def _archive_under(eng: Host, rec: MemoryRecord, survivor: str, ts: float, reason: str) -> None:
    # re-read: an earlier step of this run may have changed the record's metadata (a merge survivor's _sources)
    fresh = eng.store.retrieve([rec.id])
    base = dict(fresh[0].payload.get("metadata") or {}) if fresh else dict(rec.metadata)
    meta = {**base, "_lifecycle": "consolidated", "_archive_reason": reason}
    eng.store.set_payload([rec.id], deprecate_patch(ts, superseded_by=survivor, metadata=meta))


def _new_record(eng: Host, content: str, base: MemoryRecord, sources: Sequence[MemoryRecord], ts: float,
                source: Source, metadata: dict[str, Any], confidence: float = 1.0,
                supersedes: bool = True) -> MemoryRecord:
    """A consolidated memory standing for ``sources``, stored with its vector."""
    rec = build_record(
        content, tenant_id=base.tenant_id, user_id=base.user_id, memory_type=MemoryType.SEMANTIC,
        embedding_version=eng.embedding_version, ts=ts, session_id=None, role="system", metadata=metadata,
        importance=max(r.importance for r in sources), source=source, resolve_dates=False, confidence=confidence,
        access_count=sum(r.access_count for r in sources),
        supersedes=tuple(r.id for r in sources) if supersedes else (),
    )
    upsert_records(eng.store, [rec], eng.embedder.embed_documents([content]), eng.config.keyword)
    return rec


def consolidate(
    eng: Host,
    *,
    user_id: str,
    tenant_id: str = "default",
    now: datetime | None = None,
    profile_min_sources: int | None = None,
    extractor: LLMExtractor | None = None,
    min_confidence: float | None = None,
    dry_run: bool = False,
) -> ConsolidationReport:
    """Consolidate one owner's current memories (see the module docstring).

    ``profile_min_sources``: memories of one topic needed for a profile
    (default ``lifecycle.profile_min_sources``); ``extractor``: optional LLM step
    (a failing or invalid answer becomes a warning, the rule-based steps still
    apply); ``min_confidence``: extracted facts below it are skipped (default
    ``lifecycle.extract_min_confidence``); ``dry_run`` plans without writing. Emits one
    ``memory.consolidate`` span. Raises ValidationError for a missing owner.
    """
    user_id, tenant_id = require_owner(user_id, tenant_id)
    lc = eng.config.lifecycle
    profile_min_sources = lc.profile_min_sources if profile_min_sources is None else profile_min_sources
    min_confidence = lc.extract_min_confidence if min_confidence is None else min_confidence
    if profile_min_sources < 2:
        raise ValidationError("profile_min_sources must be >= 2", field="profile_min_sources")
    ts = epoch_now(now)
    wcfg = eng.config.write
    subject = SubjectRule(wcfg)
    with eng.tracing.tracer.start_as_current_span(SPAN_CONSOLIDATE) as span:
        flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, embedding_version=eng.embedding_version)
        rows = [p for p in eng.store.scroll(flt, with_vectors=True) if p.dense is not None]
        recs = [MemoryRecord.from_payload(p.id, p.payload) for p in rows]
        actions: list[ConsolidationAction] = []
        created: list[str] = []
        archived: list[str] = []
        warnings: list[str] = []
        alive = [True] * len(recs)
        by_id = {r.id: r for r in recs}
        if recs:
            sim = _rescaled_matrix(eng, np.asarray([p.dense for p in rows], dtype=np.float32))
            ident = [identity(r.content) for r in recs]
            terms = [set(r.terms) for r in recs]

            # 1. near-duplicates: union-find over qualifying pairs
            parent = list(range(len(recs)))

            def find(i: int) -> int:
                while parent[i] != i:
                    parent[i] = parent[parent[i]]
                    i = parent[i]
                return i

            for i in range(len(recs)):
                for j in range(i + 1, len(recs)):
                    a, b = recs[i], recs[j]
                    same = ident[i].normalised == ident[j].normalised or sim[i, j] >= wcfg.dedup_similarity
                    if (a.memory_type == b.memory_type and a.memory_type != MemoryType.FACT
                            and same and ident[i].agrees(ident[j])
                            # the same words for two dates are two occurrences ('Dentist on Monday' in two weeks)
                            and not disjoint_events((a.event_start, a.event_end), (b.event_start, b.event_end))):
                        parent[find(i)] = find(j)
            groups: dict[int, list[int]] = defaultdict(list)
            for i in range(len(recs)):
                groups[find(i)].append(i)
            for members in groups.values():
                if len(members) < 2:
                    continue
                members.sort(key=lambda k: (-recs[k].access_count, -recs[k].updated_at, recs[k].id))
                keep, rest = members[0], members[1:]
                survivor = recs[keep]
                srcs = tuple(recs[k].id for k in rest)
                actions.append(ConsolidationAction("merge", survivor.id, srcs, f"near_duplicate>={wcfg.dedup_similarity}"))
                if not dry_run:
                    meta = {**survivor.metadata, "_sources": sorted({*survivor.metadata.get("_sources", []), *srcs})}
                    eng.store.set_payload([survivor.id], {
                        "access_count": sum(recs[k].access_count for k in members),
                        "importance": max(recs[k].importance for k in members), "updated_at": ts,
                        "supersedes": sorted({*survivor.supersedes, *srcs}), "metadata": meta})
                    for k in rest:
                        _archive_under(eng, recs[k], survivor.id, ts, f"merged_into:{survivor.id}")
                for k in rest:
                    alive[k] = False
                    archived.append(recs[k].id)

            # 2. conflicts: same subject, opposite polarity -> trust source, then time
            for i in range(len(recs)):
                for j in range(i + 1, len(recs)):
                    if not (alive[i] and alive[j]) or ident[i].negated == ident[j].negated:
                        continue
                    a, b = recs[i], recs[j]
                    if MemoryType.FACT in (a.memory_type, b.memory_type) or not subject.related(sim[i, j], terms[i], terms[j]):
                        continue
                    wi, li = (i, j) if (source_rank(a.source), a.updated_at) >= (source_rank(b.source), b.updated_at) else (j, i)
                    win, lose = recs[wi], recs[li]
                    why = "source" if source_rank(win.source) != source_rank(lose.source) else "newer"
                    actions.append(ConsolidationAction("conflict", win.id, (lose.id,), f"conflict:{why}"))
                    if not dry_run:
                        _archive_under(eng, lose, win.id, ts, f"conflict_lost_to:{win.id}")
                        cur = eng.store.retrieve([win.id])[0].payload
                        eng.store.set_payload([win.id], {"supersedes": sorted({*(cur.get("supersedes") or ()), lose.id})})
                    alive[li] = False
                    archived.append(lose.id)

            # 3. fold scattered semantic memories of one topic into a profile memory
            topics: dict[str, list[int]] = defaultdict(list)
            for i, r in enumerate(recs):
                topic = r.metadata.get("topic")
                if (alive[i] and topic and r.memory_type == MemoryType.SEMANTIC
                        and r.metadata.get("_kind") not in ("constraint", "profile")):
                    topics[str(topic)].append(i)
            for topic, members in sorted(topics.items()):
                if len(members) < profile_min_sources:
                    continue
                members.sort(key=lambda k: (recs[k].created_at, recs[k].id))
                srcs_r = [recs[k] for k in members]
                content = f"Profile ({topic}): " + "; ".join(r.content.rstrip("。.；; ") for r in srcs_r)
                src = Source.USER_STATED if all(r.source == Source.USER_STATED for r in srcs_r) else Source.MODEL_INFERRED
                meta = {"topic": topic, "_kind": "profile", "_sources": [r.id for r in srcs_r]}
                if dry_run:
                    actions.append(ConsolidationAction("profile", "(planned)", tuple(meta["_sources"]), f"topic:{topic}"))
                    continue
                rec = _new_record(eng, content, srcs_r[0], srcs_r, ts, src, meta)
                for r in srcs_r:
                    _archive_under(eng, r, rec.id, ts, f"folded_into:{rec.id}")
                for k in members:
                    alive[k] = False
                actions.append(ConsolidationAction("profile", rec.id, tuple(meta["_sources"]), f"topic:{topic}"))
                created.append(rec.id)
                archived.extend(meta["_sources"])

        # 4. optional LLM extraction over what is still current
        if extractor is not None and any(alive):
            live = [r for r, ok in zip(recs, alive, strict=True) if ok]
            try:
                facts, warns = extractor.extract(live)
                warnings.extend(warns)
            except LLMError as e:
                facts = []
                warnings.append(str(e))
            for f in facts:
                if f.confidence < min_confidence:
                    warnings.append(f"skipped fact below confidence {min_confidence}: {f.content[:60]!r}")
                    continue
                srcs_r = [by_id[s] for s in f.source_ids]
                if dry_run:
                    actions.append(ConsolidationAction("extract", "(planned)", (), f"confidence:{f.confidence:.2f}"))
                    continue
                meta = {"_kind": "extracted", "_sources": list(f.source_ids), **({"topic": f.topic} if f.topic else {})}
                # extraction adds; its sources stay current
                rec = _new_record(eng, f.content, srcs_r[0], srcs_r, ts, Source.MODEL_INFERRED, meta, f.confidence,
                                  supersedes=False)
                actions.append(ConsolidationAction("extract", rec.id, (), f"confidence:{f.confidence:.2f}"))
                created.append(rec.id)

        set_attrs(span, {"memory.tenant_id": tenant_id, "memory.user_id": user_id,
                         "memory.lifecycle.job": "consolidate", "memory.lifecycle.scanned": len(recs),
                         "memory.consolidate.merged": sum(len(a.source_ids) for a in actions if a.kind == "merge"),
                         "memory.consolidate.conflicts": sum(1 for a in actions if a.kind == "conflict"),
                         "memory.consolidate.profiles": sum(1 for a in actions if a.kind == "profile"),
                         "memory.consolidate.extracted": sum(1 for a in actions if a.kind == "extract"),
                         "memory.lifecycle.dry_run": dry_run, "memory.config_hash": eng.config_hash})
        return ConsolidationReport(user_id, tenant_id, len(recs), tuple(actions), tuple(created), tuple(archived),
                                   tuple(warnings), dry_run)


def consolidation_due(events_since: int, last_run: float | None, now: float, after_events: int,
                      after_hours: float) -> str | None:
    """Why a consolidation is due (seed 002: 50 new events or 24 h), or None.
    ``last_run`` None = never ran (the hour clock then has not started)."""
    if events_since >= after_events:
        return f"events:{events_since}"
    if last_run is not None and events_since > 0 and now - last_run >= after_hours * 3600.0:
        return f"hours:{(now - last_run) / 3600.0:.1f}"
    return None


@dataclass
class _UserState:
    events: int = 0
    last_run: float | None = None


@dataclass
class ConsolidationTrigger:
    """Per-user trigger state: call :meth:`note_event` after each write; it
    runs :func:`consolidate` for that user when due and returns its report.

    ``after_events``/``after_hours`` default to ``lifecycle.consolidate_after_events``
    and ``consolidate_after_hours``; ``state_path`` (default
    ``<workspace>/consolidation_state.json`` for persistent engines, none for
    in-memory ones) keeps counts across restarts. The hour clock starts at a
    user's first event. ``consolidate_kwargs`` pass through (e.g. an extractor).
    """

    eng: Any
    after_events: int | None = None
    after_hours: float | None = None
    state_path: Path | None = None
    consolidate_kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        lc = self.eng.config.lifecycle
        self.after_events = self.after_events or lc.consolidate_after_events
        self.after_hours = self.after_hours or lc.consolidate_after_hours
        if self.state_path is None and not getattr(self.eng, "ephemeral", True):
            self.state_path = workspace_paths(self.eng.config).consolidation_state
        self._lock = threading.Lock()
        self._state: dict[tuple[str, str], _UserState] = {}
        if self.state_path and Path(self.state_path).exists():
            raw = json.loads(Path(self.state_path).read_text(encoding="utf-8"))
            for k, v in raw.items():
                tenant, _, user = k.partition("\x1f")
                self._state[(tenant, user)] = _UserState(int(v["events"]), v.get("last_run"))

    def _save(self) -> None:
        if not self.state_path:
            return
        p = Path(self.state_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps({f"{t}\x1f{u}": {"events": s.events, "last_run": s.last_run}
                                   for (t, u), s in self._state.items()}), encoding="utf-8")
        os.replace(tmp, p)

    def note_event(self, user_id: str, *, tenant_id: str = "default", now: datetime | None = None,
                   ) -> ConsolidationReport | None:
        """Count one new event for the owner; consolidate and return the report when due."""
        ts = epoch_now(now)
        with self._lock:
            st = self._state.setdefault((tenant_id, user_id), _UserState())
            st.events += 1
            if st.last_run is None:
                st.last_run = ts  # the hour clock starts at the first event
            due = consolidation_due(st.events, st.last_run, ts, int(self.after_events or 1),
                                    float(self.after_hours or 24.0))
            if due is None:
                self._save()
                return None
            st.events, st.last_run = 0, ts
            self._save()
        return consolidate(self.eng, user_id=user_id, tenant_id=tenant_id, now=now, **self.consolidate_kwargs)
