"""Read queries for the Traces page and one memory's life, paginated in SQL.

* :func:`list_retrievals` - retrievals newest first with filters, offset/limit
  and the total count;
* :func:`retrieval_detail` - one retrieval: ranked hits (score, sources,
  content, cited flag, verdicts), linked answers, the user's writes around it;
* :func:`memory_timeline` - every event of one memory id joined from the
  warehouse: its write (outcome, reason, importance), each retrieval that
  returned it (rank, score, routes), each answer that cited it, reviewer
  verdicts, supersession and forget events, in time order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from ..errors import ValidationError
from .filters import Filters, span_where
from .warehouse import Warehouse


def ns_to_dt(ns: int | None) -> datetime | None:
    """UTC datetime of epoch nanoseconds (microsecond precision)."""
    return None if ns is None else datetime.fromtimestamp(ns // 1000 / 1e6, tz=UTC)


@dataclass(frozen=True)
class RetrievalRow:
    """One row of the retrieval list (latency in ms; ``cited`` = ids cited by linked answers)."""

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
    """One retrieval with hits, answers (span id, text, cited ids), nearby writes and raw attributes."""

    row: RetrievalRow
    rewritten_query: str | None
    fusion: str | None
    embedding_version: str | None
    hits: tuple[RankedHit, ...]
    answers: tuple[Mapping[str, Any], ...]
    writes_around: tuple[Mapping[str, Any], ...]
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[Mapping[str, Any], ...] = ()


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


def _row(r: tuple[Any, ...]) -> RetrievalRow:
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
    offset: int = 0,
    limit: int = 50,
    query_contains: str | None = None,
    degraded_only: bool = False,
) -> Page:
    """Retrievals newest first; ``query_contains`` is a case-insensitive substring filter."""
    if limit < 1 or offset < 0:
        raise ValidationError(f"need limit >= 1 and offset >= 0, got {limit}, {offset}", field="limit")
    where, params = span_where(filters or Filters(), "r")
    extra = ""
    if query_contains:
        extra += " AND r.query ILIKE ?"
        params.append(f"%{query_contains}%")
    if degraded_only:
        extra += " AND r.degraded"
    rows = wh.fetchall(_LIST_SQL.format(where=where, extra=extra), [*params, limit, offset])
    total = int(rows[0][-1]) if rows else _count(wh, where, extra, params)
    return Page(tuple(_row(r) for r in rows), total, offset, limit)


def _count(wh: Warehouse, where: str, extra: str, params: list[Any]) -> int:
    row = wh.fetchone(f"SELECT count(*) FROM retrievals r WHERE {where} {extra}", params)
    return int(row[0]) if row else 0


def retrieval_detail(wh: Warehouse, span_id: str, *, around_s: float = 3600.0, max_writes: int = 20) -> RetrievalDetail:
    """One retrieval in full. ``around_s``: seconds before/after it in which
    the same user's writes are listed (at most ``max_writes``, nearest first).
    Raises ValidationError when the span is unknown."""
    rows = wh.fetchall(
        _LIST_SQL.format(where="r.span_id = ?", extra=""), [span_id, 1, 0]
    )
    if not rows:
        raise ValidationError(f"no retrieval with span id {span_id!r}", field="span_id")
    row = _row(rows[0])
    det = wh.fetch_dicts(
        "SELECT r.retrieved_ids, r.retrieved_scores, r.retrieved_sources, r.retrieved_contents, r.rewritten_query, "
        "r.fusion, r.embedding_version, r.start_ns, s.attributes, s.events FROM retrievals r "
        "LEFT JOIN spans s ON s.trace_id = r.trace_id AND s.span_id = r.span_id WHERE r.span_id = ?",
        [span_id],
    )[0]
    answers = wh.fetch_dicts(
        "SELECT span_id, trace_id, start_ns, cited_ids, answer_text FROM answers WHERE retrieve_span_id = ? "
        "ORDER BY start_ns",
        [span_id],
    )
    cited = {c for a in answers for c in (a["cited_ids"] or ())}
    verdicts = wh.fetch_dicts(
        "SELECT memory_id, reviewer, verdict, note, judged_at FROM verdicts WHERE retrieve_span_id = ?", [span_id]
    )
    by_mem: dict[str, list[dict[str, Any]]] = {}
    for v in verdicts:
        v["judged_at"] = v["judged_at"].replace(tzinfo=UTC)
        by_mem.setdefault(v.pop("memory_id"), []).append(v)
    ids = det["retrieved_ids"] or []
    scores, sources, contents = (det[k] or [] for k in ("retrieved_scores", "retrieved_sources", "retrieved_contents"))
    hits = tuple(
        RankedHit(
            rank=i + 1, memory_id=mid, score=scores[i] if i < len(scores) else None,
            sources=sources[i] if i < len(sources) else None, content=contents[i] if i < len(contents) else None,
            cited=mid in cited, verdicts=tuple(by_mem.get(mid, ())),
        )  # fmt: skip
        for i, mid in enumerate(ids)
    )
    win = int(around_s * 1e9)
    writes = wh.fetch_dicts(
        "SELECT span_id, start_ns, memory_id, memory_type, outcome, reject_reason, importance, content "
        "FROM writes WHERE user_id IS NOT DISTINCT FROM ? AND start_ns BETWEEN ? AND ? "
        "ORDER BY abs(start_ns - ?) LIMIT ?",
        [row.user_id, det["start_ns"] - win, det["start_ns"] + win, det["start_ns"], max_writes],
    )
    for w in writes:
        w["at"] = ns_to_dt(w.pop("start_ns"))
    for a in answers:
        a["at"] = ns_to_dt(a.pop("start_ns"))
    return RetrievalDetail(
        row=row, rewritten_query=det["rewritten_query"], fusion=det["fusion"],
        embedding_version=det["embedding_version"], hits=hits, answers=tuple(answers),
        writes_around=tuple(sorted(writes, key=lambda w: w["at"])),
        attributes=orjson.loads(det["attributes"]) if det["attributes"] else {},
        events=tuple(orjson.loads(det["events"])) if det["events"] else (),
    )  # fmt: skip


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


@dataclass(frozen=True)
class MemoryTimeline:
    """All events of one memory id, oldest first, with counts per kind."""

    memory_id: str
    events: tuple[TimelineEvent, ...]

    def count(self, kind: str) -> int:
        return sum(1 for e in self.events if e.kind == kind)


_TIMELINE_SQL = """
SELECT 'write' AS kind, start_ns, span_id, trace_id,
       {{'outcome': outcome, 'reason': reject_reason, 'importance': importance, 'memory_type': memory_type,
         'user_id': user_id, 'content': content}}::JSON AS details
FROM writes WHERE memory_id = $mid
UNION ALL
SELECT 'supersedes', start_ns, span_id, trace_id, {{'superseded_ids': superseded_ids}}::JSON
FROM writes WHERE memory_id = $mid AND len(superseded_ids) > 0
UNION ALL
SELECT 'superseded_by', start_ns, span_id, trace_id, {{'by_memory_id': memory_id, 'outcome': outcome}}::JSON
FROM writes WHERE list_contains(superseded_ids, $mid)
UNION ALL
SELECT 'retrieved', start_ns, span_id, trace_id,
       {{'rank': list_position(retrieved_ids, $mid), 'score': retrieved_scores[list_position(retrieved_ids, $mid)],
         'routes': retrieved_sources[list_position(retrieved_ids, $mid)], 'query': query, 'user_id': user_id}}::JSON
FROM retrievals WHERE list_contains(retrieved_ids, $mid)
UNION ALL
SELECT 'cited', start_ns, span_id, trace_id, {{'retrieve_span_id': retrieve_span_id, 'answer_text': answer_text}}::JSON
FROM answers WHERE list_contains(cited_ids, $mid)
UNION ALL
SELECT 'forget', start_ns, span_id, trace_id, {{'attributes': attributes}}::JSON
FROM spans WHERE name = 'memory.forget' AND json_extract_string(attributes, 'memory.id') = $mid
ORDER BY 2, 1
"""


def memory_timeline(wh: Warehouse, memory_id: str) -> MemoryTimeline:
    """One memory's whole life from the warehouse (see module docstring), oldest first.

    Verdicts are placed at their judgement time.
    """
    rows = wh.fetchall(_TIMELINE_SQL.format(), {"mid": memory_id})
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
    events.sort(key=lambda e: (e.at, e.kind))
    return MemoryTimeline(memory_id, tuple(events))
