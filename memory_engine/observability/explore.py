"""The one query layer over a workspace: what the app's pages and the ``memwb`` CLI read.

Everything here is a read, paginated in SQL (never a whole table in pandas),
returning plain dataclasses and dicts; app pages only lay them out.

Warehouse (traces):

* :func:`workspace_summary` - spans per source and a change marker (the app keys its caches on it);
* :func:`filter_options`, :func:`known_owners` - values for the filter widgets and owner pickers;
* :func:`list_retrievals` - retrievals newest first: metric ``Filters``, a search (query
  substring or an exact span/trace id), degraded only, offset/limit and the total count;
* :func:`retrieval_detail` - one retrieval: ranked hits (score, routes, content, cited flag,
  reviewer verdicts), linked answers, the same owner's (tenant + user) writes around it, or
  the latest ones before it when there are none in the window, raw span attributes/events;
* :func:`memory_timeline` - every event of one memory id: its write (outcome, reason,
  importance), retrievals that returned it (rank, score, routes), answers citing it,
  verdicts, supersession both ways and forget events, in time order.

Store (health inputs):

* :func:`health_inputs` - the memory and fact rows
  :func:`~memory_engine.observability.health.health_report` scores, for a list of owners.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from ..errors import ValidationError
from .filters import Filters, span_where
from .warehouse import Warehouse

__all__ = [
    "FILTER_COLUMNS", "MemoryTimeline", "Page", "RankedHit", "RetrievalDetail", "RetrievalRow", "TimelineEvent",
    "WorkspaceSummary", "describe_source", "filter_options", "health_inputs", "known_owners", "list_retrievals",
    "memory_timeline", "ns_to_dt", "retrieval_detail", "workspace_summary",
]

_DAY_NS = 86_400 * 1_000_000_000


def ns_to_dt(ns: int | None) -> datetime | None:
    """UTC datetime of epoch nanoseconds (microsecond precision)."""
    return None if ns is None else datetime.fromtimestamp(ns // 1000 / 1e6, tz=UTC)


# --- provenance and filter values ---------------------------------------------------------------------
#: ``spans.source`` values with a human name (others are shown as they are)
_SOURCE_NAMES = {"demo": "demo replay", "sdk": "live engine"}


def describe_source(source: str | None) -> str:
    """Human name of a ``spans.source`` value: ``demo`` -> 'demo replay',
    ``file:x.json`` -> 'ingested file x.json', ``http``/``otlp-http`` ->
    'live collector', ``sdk`` -> 'live engine'; anything else is returned as is."""
    s = source or "unknown"
    if s in _SOURCE_NAMES:
        return _SOURCE_NAMES[s]
    if s.startswith("file:"):
        return f"ingested file {s[5:]}"
    if s.startswith(("http", "otlp", "collector")):
        return "live collector"
    return s


@dataclass(frozen=True)
class WorkspaceSummary:
    """Spans per ``spans.source`` and a ``version`` tuple that changes whenever
    the warehouse gains spans, verdicts, eval runs or sweep trials (the app keys
    its query caches on it). ``first``/``last`` bound the span start times (UTC)."""

    spans: int
    sources: tuple[tuple[str, int], ...]
    version: tuple[Any, ...]
    first: datetime | None = None
    last: datetime | None = None

    @property
    def provenance(self) -> str:
        """'demo replay (1,234 spans), ingested file x.json (56 spans)' or 'no data yet'."""
        if not self.sources:
            return "no data yet"
        return ", ".join(f"{describe_source(s)} ({n:,} spans)" for s, n in self.sources)


def workspace_summary(wh: Warehouse) -> WorkspaceSummary:
    """Provenance and change marker of a warehouse (a few aggregate queries, milliseconds on 100k spans)."""
    rows = wh.fetchall("SELECT source, count(*) FROM spans GROUP BY source ORDER BY count(*) DESC")
    v = wh.fetchone(
        "SELECT (SELECT count(*) FROM spans), (SELECT max(ingested_at) FROM spans), "
        "(SELECT count(*) FROM verdicts), (SELECT max(judged_at) FROM verdicts), "
        "(SELECT count(*) FROM eval_runs), (SELECT count(*) FROM sweep_trials), "
        "(SELECT min(start_ns) FROM spans), (SELECT max(start_ns) FROM spans)"
    )
    assert v is not None  # aggregates without GROUP BY always return one row
    return WorkspaceSummary(
        spans=int(v[0]), sources=tuple((str(s), int(n)) for s, n in rows), version=tuple(v[:6]),
        first=ns_to_dt(v[6]), last=ns_to_dt(v[7]),
    )  # fmt: skip


FILTER_COLUMNS = ("tenant_id", "user_id", "service", "config_hash")


def filter_options(wh: Warehouse, *, limit: int = 500) -> dict[str, list[str]]:
    """Distinct values (most frequent first, at most ``limit``) of each filter
    column over the retrievals, for the dashboard's filter widgets."""
    out: dict[str, list[str]] = {}
    for col in FILTER_COLUMNS:
        rows = wh.fetchall(
            f"SELECT {col} FROM retrievals WHERE {col} IS NOT NULL GROUP BY {col} ORDER BY count(*) DESC, {col} LIMIT ?",
            [limit],
        )
        out[col] = [str(r[0]) for r in rows]
    return out


def known_owners(wh: Warehouse, *, limit: int = 2000) -> list[tuple[str, str]]:
    """(tenant, user) pairs seen on write or retrieval spans, most active first."""
    rows = wh.fetchall(
        "SELECT tenant_id, user_id, count(*) AS n FROM (SELECT tenant_id, user_id FROM writes UNION ALL "
        "SELECT tenant_id, user_id FROM retrievals) WHERE user_id IS NOT NULL "
        "GROUP BY tenant_id, user_id ORDER BY n DESC, tenant_id, user_id LIMIT ?",
        [limit],
    )
    return [(str(t or "default"), str(u)) for t, u, _ in rows]


# --- retrievals ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetrievalRow:
    """One row of the retrieval list (latency in ms; ``cited_count`` = distinct retrieved ids
    cited by the linked answers; ``answered`` = at least one answer is linked)."""

    span_id: str
    trace_id: str
    at: datetime
    user_id: str | None
    tenant_id: str | None
    session_id: str | None
    query: str | None
    retrieved_count: int | None
    latency_ms: float
    degraded: bool | None
    config_hash: str | None
    service: str | None
    status_code: str | None
    answered: bool
    cited_count: int


@dataclass(frozen=True)
class Page:
    """A page of rows with the total count matching the filters."""

    rows: tuple[Any, ...]
    total: int
    offset: int
    limit: int

    def records(self) -> list[dict[str, Any]]:
        """The rows as dicts (one per row, field name -> value), e.g. for a table."""
        return [asdict(r) for r in self.rows]


_LIST_SQL = """
SELECT r.span_id, r.trace_id, r.start_ns, r.user_id, r.tenant_id, r.session_id, r.query, r.retrieved_count,
       r.latency_ms, r.degraded, r.config_hash, r.service, r.status_code,
       a.retrieve_span_id IS NOT NULL AS answered, coalesce(len(list_intersect(r.retrieved_ids, a.cited)), 0) AS cited,
       count(*) OVER () AS total
FROM retrievals r
LEFT JOIN (SELECT retrieve_span_id, list_distinct(flatten(list(cited_ids))) AS cited FROM answers GROUP BY 1) a
       ON a.retrieve_span_id = r.span_id
WHERE {where} {extra}
ORDER BY r.start_ns DESC, r.span_id
LIMIT ? OFFSET ?
"""


def _row(r: Sequence[Any]) -> RetrievalRow:
    return RetrievalRow(
        span_id=r[0], trace_id=r[1], at=ns_to_dt(r[2]) or datetime.fromtimestamp(0, tz=UTC), user_id=r[3],
        tenant_id=r[4], session_id=r[5], query=r[6], retrieved_count=r[7], latency_ms=float(r[8] or 0.0),
        degraded=r[9], config_hash=r[10], service=r[11], status_code=r[12], answered=bool(r[13]),
        cited_count=int(r[14]),
    )  # fmt: skip


def list_retrievals(
    wh: Warehouse,
    filters: Filters | None = None,
    *,
    search: str | None = None,
    query_contains: str | None = None,
    degraded_only: bool = False,
    offset: int = 0,
    limit: int = 50,
) -> Page:
    """Retrievals matching ``filters`` (metrics :class:`Filters`: window, tenant, user,
    service, config hash), newest first, ``limit`` rows from ``offset``.

    ``search``: a case-insensitive substring of the query, or an exact span or
    trace id; ``query_contains``: a substring of the query only; ``degraded_only``:
    only degraded retrievals. Returns a :class:`Page` of :class:`RetrievalRow`.
    Raises ValidationError for a limit outside 1..1000 or a negative offset.
    """
    if not 1 <= limit <= 1000 or offset < 0:
        raise ValidationError(f"need 1 <= limit <= 1000 and offset >= 0, got {limit}, {offset}", field="limit")
    where, params = span_where(filters or Filters(), "r")
    extra = ""
    q = (search or "").strip()
    if q:
        extra += " AND (r.query ILIKE '%' || ? || '%' OR r.span_id = ? OR r.trace_id = ?)"
        params += [q, q, q]
    if query_contains:
        extra += " AND r.query ILIKE '%' || ? || '%'"
        params.append(query_contains)
    if degraded_only:
        extra += " AND r.degraded"
    rows = wh.fetchall(_LIST_SQL.format(where=where, extra=extra), [*params, limit, offset])
    total = int(rows[0][-1]) if rows else _count(wh, where, extra, params)
    return Page(tuple(_row(r) for r in rows), total, offset, limit)


def _count(wh: Warehouse, where: str, extra: str, params: list[Any]) -> int:
    row = wh.fetchone(f"SELECT count(*) FROM retrievals r WHERE {where} {extra}", params)
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class RankedHit:
    """One hit of a retrieval: 1-based rank, score, routes, content, whether an answer cited it, its verdicts."""

    rank: int
    memory_id: str
    score: float | None
    sources: str | None
    content: str | None
    cited: bool
    verdicts: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class RetrievalDetail:
    """One retrieval in full.

    ``retrieval``: every column of its ``retrievals`` row plus ``started_at``
    (UTC); ``hits``: ranked hits; ``answers``: linked answers (``span_id``,
    ``at``, ``answer_text``, ``cited_ids``), oldest first; ``writes``: the same
    owner's writes (``span_id``, ``at``, ``memory_id``, ``memory_type``,
    ``outcome``, ``reject_reason``, ``superseded_ids``, ``importance``,
    ``content``, ``after_retrieval``), oldest first. ``writes_in_window`` is
    False when the owner wrote nothing in the window and ``writes`` are instead
    the owner's latest writes before the retrieval (e.g. conversations imported
    months earlier). ``attributes``/``events``: the raw span's.
    """

    row: RetrievalRow
    retrieval: Mapping[str, Any]
    hits: tuple[RankedHit, ...]
    answers: tuple[Mapping[str, Any], ...]
    writes: tuple[Mapping[str, Any], ...]
    writes_in_window: bool = True
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[Mapping[str, Any], ...] = ()

    @property
    def rewritten_query(self) -> str | None:
        return self.retrieval.get("rewritten_query")

    @property
    def fusion(self) -> str | None:
        return self.retrieval.get("fusion")

    @property
    def embedding_version(self) -> str | None:
        return self.retrieval.get("embedding_version")

    def hit_records(self) -> list[dict[str, Any]]:
        """The hits as dicts (rank, memory_id, score, routes, content, cited, verdicts), e.g. for a table."""
        return [{"rank": h.rank, "memory_id": h.memory_id, "score": h.score, "routes": h.sources,
                 "content": h.content, "cited": h.cited, "verdicts": len(h.verdicts)} for h in self.hits]  # fmt: skip


_WRITES_SQL = (
    "SELECT w.span_id, w.start_ns, w.memory_id, w.memory_type, w.outcome, w.reject_reason, w.superseded_ids, "
    "w.importance, w.content, w.start_ns > ? AS after_retrieval "
    "FROM writes w WHERE w.user_id IS NOT DISTINCT FROM ? AND w.tenant_id IS NOT DISTINCT FROM ? "
    "AND w.start_ns BETWEEN ? AND ? ORDER BY abs(w.start_ns - ?) LIMIT ?"
)


def retrieval_detail(
    wh: Warehouse,
    span_id: str,
    *,
    writes_before_days: float = 7.0,
    writes_after_days: float = 1.0,
    max_writes: int = 50,
) -> RetrievalDetail | None:
    """The retrieval with span id ``span_id`` (None when the warehouse has none)
    with its hits, answers, verdicts and the same owner's (tenant and user)
    writes from ``writes_before_days`` days before to ``writes_after_days``
    days after it (at most ``max_writes``, nearest first, returned oldest
    first); with none in that window, the owner's latest writes before it."""
    rows = wh.fetchall(_LIST_SQL.format(where="r.span_id = ?", extra=""), [span_id, 1, 0])
    if not rows:
        return None
    row = _row(rows[0])
    det = wh.fetch_dicts(
        "SELECT r.*, make_timestamptz(r.start_ns // 1000) AS started_at, s.attributes AS _attributes, "
        "s.events AS _events FROM retrievals r "
        "LEFT JOIN spans s ON s.trace_id = r.trace_id AND s.span_id = r.span_id WHERE r.span_id = ?",
        [span_id],
    )[0]
    attributes, events = det.pop("_attributes"), det.pop("_events")
    answers = wh.fetch_dicts(
        "SELECT span_id, trace_id, start_ns, cited_ids, answer_text FROM answers WHERE retrieve_span_id = ? "
        "ORDER BY start_ns",
        [span_id],
    )
    for a in answers:
        a["at"] = ns_to_dt(a.pop("start_ns"))
    cited = {c for a in answers for c in (a["cited_ids"] or ())}
    by_mem: dict[str, list[dict[str, Any]]] = {}
    for v in wh.fetch_dicts(
        "SELECT memory_id, reviewer, verdict, note, judged_at FROM verdicts WHERE retrieve_span_id = ?", [span_id]
    ):
        v["judged_at"] = v["judged_at"].replace(tzinfo=UTC)
        by_mem.setdefault(v.pop("memory_id"), []).append(v)
    ids = list(det.get("retrieved_ids") or [])
    scores, sources, contents = (list(det.get(k) or []) for k in
                                 ("retrieved_scores", "retrieved_sources", "retrieved_contents"))  # fmt: skip

    def at(xs: list[Any], i: int) -> Any:
        return xs[i] if i < len(xs) else None

    hits = tuple(
        RankedHit(rank=i + 1, memory_id=mid, score=at(scores, i), sources=at(sources, i), content=at(contents, i),
                  cited=mid in cited, verdicts=tuple(by_mem.get(mid, ())))  # fmt: skip
        for i, mid in enumerate(ids)
    )
    t = int(det["start_ns"])
    owner = [det.get("user_id"), det.get("tenant_id")]
    lo, hi = t - int(writes_before_days * _DAY_NS), t + int(writes_after_days * _DAY_NS)
    writes = wh.fetch_dicts(_WRITES_SQL, [t, *owner, lo, hi, t, max_writes])
    in_window = bool(writes)
    if not in_window:  # nothing nearby: the latest writes before it still explain what it could find
        writes = wh.fetch_dicts(_WRITES_SQL, [t, *owner, -(2**63) + 1, t, t, max_writes])
    for w in writes:
        w["at"] = ns_to_dt(w.pop("start_ns"))
    writes.sort(key=lambda w: w["at"])
    return RetrievalDetail(
        row=row, retrieval=det, hits=hits, answers=tuple(answers), writes=tuple(writes), writes_in_window=in_window,
        attributes=orjson.loads(attributes) if attributes else {},
        events=tuple(orjson.loads(events)) if events else (),
    )  # fmt: skip


# --- one memory's life --------------------------------------------------------------------------------
@dataclass(frozen=True)
class TimelineEvent:
    """One event in a memory's life. ``kind``: ``write``, ``retrieved``,
    ``cited``, ``verdict``, ``superseded_by``, ``supersedes``, ``forget``;
    ``details`` the columns of that event (rank/score/routes for a retrieval,
    outcome/reason/importance for a write...)."""

    at: datetime
    kind: str
    span_id: str | None
    trace_id: str | None
    details: Mapping[str, Any]

    @property
    def summary(self) -> tuple[str, str, str | None]:
        """(what, detail, text) in words: e.g. ('rank 2', 'score 0.81 via vector+keyword', the query)."""
        d = self.details
        if self.kind == "write":
            return str(d.get("outcome")), str(d.get("reason") or ""), d.get("content")
        if self.kind == "retrieved":
            score = d.get("score")
            return (f"rank {d.get('rank')}", f"score {score:.4f} via {d.get('routes')}" if score is not None else "",
                    d.get("query"))  # fmt: skip
        if self.kind == "cited":
            return "cited in answer", "", d.get("answer_text")
        if self.kind == "verdict":
            return str(d.get("verdict")), f"by {d.get('reviewer')}" + (f": {d['note']}" if d.get("note") else ""), None
        if self.kind == "superseded_by":
            return f"superseded by {d.get('by_memory_id')}", "", d.get("content")
        if self.kind == "supersedes":
            return f"supersedes {', '.join(d.get('superseded_ids') or [])}", "", None
        if self.kind == "forget":
            return "forgotten", "erase" if d.get("erase") else "", None
        return self.kind, "", None


@dataclass(frozen=True)
class MemoryTimeline:
    """All events of one memory id, oldest first, with counts per kind."""

    memory_id: str
    events: tuple[TimelineEvent, ...]

    def count(self, kind: str) -> int:
        return sum(1 for e in self.events if e.kind == kind)

    def records(self) -> list[dict[str, Any]]:
        """One dict per event: ``at``, ``event`` (the kind), ``what``, ``detail``, ``text``, ``span_id``."""
        out = []
        for e in self.events:
            what, detail, text = e.summary
            out.append({"at": e.at, "event": e.kind, "what": what, "detail": detail, "text": text,
                        "span_id": e.span_id})  # fmt: skip
        return out


_TIMELINE_SQL = """
SELECT 'write' AS kind, start_ns, span_id, trace_id,
       {'outcome': outcome, 'reason': reject_reason, 'importance': importance, 'memory_type': memory_type,
        'user_id': user_id, 'content': content}::JSON AS details
FROM writes WHERE memory_id = $mid
UNION ALL
SELECT 'supersedes', start_ns, span_id, trace_id, {'superseded_ids': superseded_ids}::JSON
FROM writes WHERE memory_id = $mid AND len(superseded_ids) > 0
UNION ALL
SELECT 'superseded_by', start_ns, span_id, trace_id,
       {'by_memory_id': memory_id, 'outcome': outcome, 'content': content}::JSON
FROM writes WHERE list_contains(superseded_ids, $mid)
UNION ALL
SELECT 'retrieved', start_ns, span_id, trace_id,
       {'rank': list_position(retrieved_ids, $mid), 'score': retrieved_scores[list_position(retrieved_ids, $mid)],
        'routes': retrieved_sources[list_position(retrieved_ids, $mid)], 'query': query, 'user_id': user_id}::JSON
FROM retrievals WHERE list_contains(retrieved_ids, $mid)
UNION ALL
SELECT 'cited', start_ns, span_id, trace_id, {'retrieve_span_id': retrieve_span_id, 'answer_text': answer_text}::JSON
FROM answers WHERE list_contains(cited_ids, $mid)
UNION ALL
SELECT 'forget', start_ns, span_id, trace_id,
       {'user_id': json_extract_string(attributes, '$."memory.user_id"'),
        'erase': coalesce(json_extract_string(attributes, '$."memory.erase"') = 'true', false)}::JSON
FROM spans WHERE name = 'memory.forget' AND json_extract_string(attributes, '$."memory.id"') = $mid
ORDER BY 2, 1
LIMIT $limit
"""


_KIND_ORDER = {k: i for i, k in enumerate(("write", "supersedes", "superseded_by", "retrieved", "cited", "verdict",
                                             "forget"))}


def memory_timeline(wh: Warehouse, memory_id: str, *, limit: int = 500) -> MemoryTimeline:
    """One memory's whole life from the warehouse (see module docstring), oldest first,
    at most ``limit`` span events plus its verdicts (placed at their judgement time)."""
    rows = wh.fetchall(_TIMELINE_SQL, {"mid": memory_id, "limit": limit})
    events = [
        TimelineEvent(ns_to_dt(r[1]) or datetime.fromtimestamp(0, tz=UTC), r[0], r[2], r[3], orjson.loads(r[4]))
        for r in rows
    ]
    for v in wh.fetch_dicts(
        "SELECT retrieve_span_id, reviewer, verdict, note, judged_at FROM verdicts WHERE memory_id = ?", [memory_id]
    ):
        events.append(
            TimelineEvent(
                v["judged_at"].replace(tzinfo=UTC), "verdict", v["retrieve_span_id"], None,
                {"reviewer": v["reviewer"], "verdict": v["verdict"], "note": v["note"]},
            )  # fmt: skip
        )
    # at the same instant a memory is written before its write supersedes others, retrieved before cited
    events.sort(key=lambda e: (e.at, _KIND_ORDER.get(e.kind, len(_KIND_ORDER))))
    return MemoryTimeline(memory_id, tuple(events))


# --- health inputs (the store) ------------------------------------------------------------------------
def health_inputs(
    engine: Any, owners: Sequence[tuple[str, str]], *, per_user: int | None = 10_000
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows for :func:`memory_engine.observability.health.health_report` from the
    engine's store: every record of each (tenant, user) in ``owners`` (all
    statuses, at most ``per_user`` each) as memory rows, and the current facts
    as fact rows (``key``, ``value``, ``updated_at`` epoch seconds, ``user_id``, ``id``)."""
    memories: list[dict[str, Any]] = []
    facts: list[dict[str, Any]] = []
    for tenant, user in owners:
        for r in engine.list_memories(user_id=user, tenant_id=tenant, limit=per_user):
            status = getattr(r.status, "value", r.status)
            memories.append({
                "id": r.id, "user_id": r.user_id, "tenant_id": r.tenant_id,
                "memory_type": getattr(r.memory_type, "value", r.memory_type), "status": status,
                "content": r.content, "embedding_version": r.embedding_version, "fact_key": r.fact_key,
            })  # fmt: skip
            if r.fact_key and status == "current" and r.archived_at is None:
                facts.append({"id": r.id, "key": r.fact_key, "value": r.fact_value,
                              "updated_at": r.updated_at or r.created_at, "user_id": r.user_id,
                              "tenant_id": r.tenant_id})  # fmt: skip
    return memories, facts
