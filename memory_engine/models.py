"""Record model and result types (SEED_DIGEST section 2).

Results are frozen dataclasses. Times are timezone-aware ``datetime`` in the
API and epoch seconds (float) in the store payload, so range filters and
decay arithmetic are cheap.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any


class MemoryType(StrEnum):
    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    FACT = "fact"
    PROCEDURAL = "procedural"


class MemoryStatus(StrEnum):
    CANDIDATE = "candidate"
    CURRENT = "current"
    DEPRECATED = "deprecated"
    PENDING_CONFIRMATION = "pending_confirmation"


class Source(StrEnum):
    USER_STATED = "user_stated"
    MODEL_INFERRED = "model_inferred"
    TOOL = "tool"


class WriteOutcome(StrEnum):
    STORED = "stored"
    MERGED = "merged"
    REJECTED = "rejected"
    CANDIDATE = "candidate"
    FORGOTTEN = "forgotten"


def to_epoch(dt: datetime) -> float:
    """Epoch seconds of an aware datetime (naive datetimes are taken as UTC)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def from_epoch(ts: float | None) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, tz=UTC)


def now_utc() -> datetime:
    """Wall clock (UTC) for callers at the edge (CLI, app); library functions take ``now``."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class MemoryRecord:
    """One stored memory. Times are epoch seconds; ``archived_at`` set = soft-deleted."""

    id: str
    tenant_id: str
    user_id: str
    content: str
    memory_type: MemoryType
    status: MemoryStatus = MemoryStatus.CURRENT
    session_id: str | None = None
    role: str = "user"
    metadata: dict[str, Any] = field(default_factory=dict)
    importance: float = 0.5
    confidence: float = 1.0
    source: Source = Source.USER_STATED
    access_count: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    last_access_at: float | None = None
    archived_at: float | None = None
    expires_at: float | None = None
    superseded_by: str | None = None
    supersedes: tuple[str, ...] = ()
    permanent: bool = False
    embedding_version: str = ""
    fact_key: str | None = None
    fact_value: Any = None
    terms: tuple[str, ...] = ()
    recurrence: int = 1
    tokens: int = 0
    event_start: float | None = None
    event_end: float | None = None
    #: the writer's UTC offset in seconds when it was said (the user's zone at write): the calendar day the
    #: memory was written on is read in it, whatever the zone of a later question (memory.writer_day)
    utc_offset: float | None = None
    #: planted-instruction signals found at write (tool / web content), see write/injection.py
    flags: tuple[str, ...] = ()
    #: set when a forget instruction or a correction archived the memory; undo_forget restores it until undo_until
    forgotten_at: float | None = None
    undo_until: float | None = None

    def to_payload(self) -> dict[str, Any]:
        """Flat JSON payload for the vector store (booleans as 0/1: edge cannot match bools)."""
        d = dataclasses.asdict(self)
        d.pop("id")
        d["memory_type"] = self.memory_type.value
        d["status"] = self.status.value
        d["source"] = self.source.value
        d["supersedes"] = list(self.supersedes)
        d["terms"] = list(self.terms)
        d["flags"] = list(self.flags)
        d["flagged"] = int(bool(self.flags))
        d["permanent"] = int(self.permanent)
        d["archived"] = int(self.archived_at is not None)
        d["memory_id"] = self.id
        return d

    @classmethod
    def from_payload(cls, id: str, payload: dict[str, Any]) -> MemoryRecord:
        p = dict(payload)
        p.pop("archived", None)
        p.pop("memory_id", None)
        p.pop("flagged", None)
        names = {f.name for f in dataclasses.fields(cls)}
        p = {k: v for k, v in p.items() if k in names}
        p["memory_type"] = MemoryType(p["memory_type"])
        p["status"] = MemoryStatus(p.get("status", "current"))
        p["source"] = Source(p.get("source", "user_stated"))
        p["supersedes"] = tuple(p.get("supersedes") or ())
        p["terms"] = tuple(p.get("terms") or ())
        p["flags"] = tuple(p.get("flags") or ())
        p["permanent"] = bool(p.get("permanent", 0))
        p["metadata"] = dict(p.get("metadata") or {})
        return cls(id=id, **p)


@dataclass(frozen=True)
class WriteResult:
    """Outcome of :meth:`MemoryEngine.add`.

    ``outcome`` is one of ``stored``, ``merged``, ``rejected``, ``candidate``, ``forgotten``
    (a forget request that archived memories; one that named none is ``rejected`` with
    reason ``forget_intent:no_match``: nothing archived, the request not stored);
    ``memory_id`` the new record (stored/candidate) or the one merged into,
    ``None`` when rejected; ``reason`` a short machine-readable reason
    (``chit_chat``, ``below_threshold:0.50``, ``duplicate_of:<id>``, ``supersedes`` on a
    correction that replaced older memories ...);
    ``superseded_ids`` older memories this write replaced (outcome ``forgotten``: the
    memories a forget instruction archived); ``evidence`` one dict per such id saying why
    (``id``, ``similarity``, ``shared_terms``, ``rule``): nothing is retired silently.
    ``redacted_versions`` ``(archived id, new id)`` pairs of a forget that named only part of a
    message: the new version keeps the rest (its evidence dict says ``kept_as``).
    """

    outcome: str
    memory_id: str | None
    reason: str = ""
    superseded_ids: tuple[str, ...] = ()
    importance: float | None = None
    memory_type: str | None = None
    redactions: tuple[str, ...] = ()
    evidence: tuple[dict[str, Any], ...] = ()
    redacted_versions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Hit:
    """One retrieved memory. ``score`` is the fused score of the configured
    strategy (weighted/five_term: 0..1; rrf: sum of 1/(k+rank)); ``sources``
    the channels that found it, in :data:`memory_engine.retrieve.routes.CHANNELS` order (``vector``,
    ``keyword``, ``recent``, ``fact``, ``meaning``, ``intent``, ``date``, ``hop``)."""

    memory_id: str
    content: str
    score: float
    sources: tuple[str, ...]
    memory_type: str
    created_at: datetime
    importance: float
    relevance: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CandidateExplanation:
    """Why-not data for one candidate: per-route rank (1-based) and score,
    the fused score, the relevance the floor saw, and the stage that dropped it
    (``None`` = returned; else ``floor``, ``hop_focus``, ``stale``, ``top_k``, ``token_budget``).

    A candidate the floor dropped says which of its two checks did and with which numbers
    (:class:`memory_engine.retrieve.cutoffs.RelevanceFloor`): ``floor_check`` ``gate`` (no candidate
    of the query reached ``retrieval.floor`` on its gate relevance, so the question reads as a
    never-stored topic and nothing is returned) or ``candidate_floor`` (the gate was open; this
    candidate's relevance is under ``retrieval.candidate_floor``); ``compared`` the value that check
    read (gate: the candidate's gate relevance, in [0, 1]; candidate floor: its relevance), ``threshold``
    the one it missed and ``threshold_key`` the config field that set it (``retrieval.candidate_floor`` only
    when that is set below ``retrieval.floor``; at None the candidate floor is the floor's value). All four are
    None for a candidate the floor did not drop."""

    memory_id: str
    route_ranks: dict[str, int]
    route_scores: dict[str, float]
    relevance: float
    fused_score: float
    final_rank: int | None
    dropped_at: str | None
    floor_check: str | None = None
    compared: float | None = None
    threshold: float | None = None
    threshold_key: str | None = None

    @property
    def margin(self) -> float | None:
        """``compared - threshold`` (negative: by how much it missed), None when the floor did not drop it."""
        if self.compared is None or self.threshold is None:
            return None
        return round(self.compared - self.threshold, 6)

    def why(self) -> str:
        """The drop in words with its numbers, e.g. 'floor gate: gate relevance 0.212 < retrieval.floor 0.250
        (margin -0.038); no candidate reached it'; '' for a returned candidate."""
        if self.dropped_at is None:
            return ""
        if self.floor_check == "gate" and self.compared is not None and self.threshold is not None:
            return (f"floor gate: gate relevance {self.compared:.3f} < retrieval.floor {self.threshold:.3f} "
                    f"(margin {self.margin:+.3f}); no candidate reached it, the question reads as a never-stored topic")
        if self.floor_check == "candidate_floor" and self.compared is not None and self.threshold is not None:
            key = self.threshold_key or "retrieval.candidate_floor"
            return (f"candidate floor: relevance {self.compared:.3f} < {key} {self.threshold:.3f} "
                    f"(margin {self.margin:+.3f}); the gate was open")
        return {"hop_focus": "hop focus: about another subject than the chain of names the top hit starts, or "
                "another holder of the role the question names (retrieval.hop_chain_focus)",
                "stale": "stale: its current value, a newer memory, is returned in its place (present-tense question)",
                "top_k": "top_k: ranked below the top k",
                "token_budget": "token_budget: over retrieval.token_budget"}.get(self.dropped_at, self.dropped_at)


@dataclass(frozen=True)
class RetrievalResult:
    """Outcome of :meth:`MemoryEngine.retrieve`; ``degraded`` is true when a
    failure made it return empty; ``latency_ms`` wall time in milliseconds."""

    hits: list[Hit]
    degraded: bool = False
    latency_ms: float = 0.0
    query: str = ""
    rewritten_query: str | None = None
    span_id: str | None = None
    trace_id: str | None = None
    user_id: str = ""
    tenant_id: str = "default"
    session_id: str | None = None
    error: str | None = None
    explanations: list[CandidateExplanation] | None = None

    @property
    def ids(self) -> list[str]:
        return [h.memory_id for h in self.hits]
