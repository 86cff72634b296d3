"""Read queries for viewing any trace: memwb's spans and anyone else's.

* :func:`search_traces` - traces matching a trace id, span id, service name or
  a text (span name, attribute values, status message), newest first;
* :func:`trace_tree` - every span of one trace in tree order (parents before
  children, siblings by start time) with depth and offset from the trace
  start, attributes and events decoded: what a waterfall and a span table need;
* :func:`services` - the services seen in the ``spans`` table.

Queries are bounded (``limit``) and run in SQL; nothing loads the whole table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from .warehouse import Warehouse

_HEX = frozenset("0123456789abcdef")


def _ns_dt(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns // 1000 / 1e6, tz=UTC)


@dataclass(frozen=True)
class TraceSummary:
    """One trace in a search result: its root span name (the earliest parentless span, or
    the earliest span when the root was never received), the services taking part, the
    start time (UTC), the duration in ms (first start to last end), spans and error spans."""

    trace_id: str
    root_name: str
    services: tuple[str, ...]
    started_at: datetime
    duration_ms: float
    spans: int
    errors: int


@dataclass(frozen=True)
class TraceSpan:
    """One span of a trace, placed in its tree: ``depth`` 0 for a root (or a span whose
    parent was never received, ``orphan`` True), ``offset_ms`` from the trace's first start."""

    span_id: str
    parent_span_id: str | None
    name: str
    service: str | None
    kind: str | None
    status_code: str | None
    status_message: str | None
    start_ns: int
    end_ns: int
    duration_ms: float
    offset_ms: float
    depth: int
    orphan: bool
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[Mapping[str, Any], ...] = ()
    resource: Mapping[str, Any] = field(default_factory=dict)


_SEARCH_SQL = """
WITH hit AS (
    SELECT DISTINCT trace_id FROM spans
    WHERE ($service IS NULL OR service = $service)
      AND ($q IS NULL OR trace_id = $q OR span_id = $q OR trace_id LIKE $q || '%'
           OR name ILIKE '%' || $q || '%' OR service ILIKE $q
           OR CAST(attributes AS VARCHAR) ILIKE '%' || $q || '%' OR status_message ILIKE '%' || $q || '%')
)
SELECT s.trace_id,
       arg_min(s.name, (s.parent_span_id IS NOT NULL, s.start_ns)) AS root_name,
       list_sort(list_distinct(list(s.service) FILTER (WHERE s.service IS NOT NULL))) AS services,
       min(s.start_ns) AS start_ns, max(s.end_ns) AS end_ns, count(*) AS n,
       count(*) FILTER (WHERE s.status_code = 'ERROR') AS errors
FROM spans s SEMI JOIN hit ON hit.trace_id = s.trace_id
GROUP BY s.trace_id
ORDER BY start_ns DESC, s.trace_id
LIMIT $limit
"""


def search_traces(
    wh: Warehouse, query: str | None = None, *, service: str | None = None, limit: int = 50
) -> list[TraceSummary]:
    """Traces matching ``query``, newest first, at most ``limit``.

    ``query`` matches a whole trace id, a trace id prefix, a span id, a service
    name (case-insensitive), or text inside a span name, an attribute value or a
    status message (case-insensitive substring). Empty/``None`` matches every
    trace. ``service`` restricts to traces with a span of that service.
    """
    q = (query or "").strip() or None
    if q is not None and len(q) in (16, 32) and set(q.lower()) <= _HEX:
        q = q.lower()
    rows = wh.fetchall(_SEARCH_SQL, {"q": q, "service": service, "limit": int(limit)})
    return [
        TraceSummary(
            trace_id=r[0], root_name=r[1], services=tuple(r[2] or ()), started_at=_ns_dt(r[3]) or datetime.min,
            duration_ms=(r[4] - r[3]) / 1e6, spans=int(r[5]), errors=int(r[6]),
        )  # fmt: skip
        for r in rows
    ]


def trace_tree(wh: Warehouse, trace_id: str, *, limit: int = 5000) -> list[TraceSpan]:
    """Every span of ``trace_id`` (at most ``limit``) in depth-first tree order.

    Children follow their parent, siblings by start time; a span whose parent
    is not in the warehouse is shown as a root (``orphan=True``). Returns ``[]``
    for an unknown trace.
    """
    rows = wh.fetch_dicts(
        "SELECT span_id, parent_span_id, name, service, kind, status_code, status_message, start_ns, end_ns, "
        "attributes, events, resource FROM spans WHERE trace_id = ? ORDER BY start_ns, span_id LIMIT ?",
        [trace_id.strip().lower(), int(limit)],
    )
    if not rows:
        return []
    t0 = min(r["start_ns"] for r in rows)
    ids = {r["span_id"] for r in rows}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for r in rows:
        parent = r["parent_span_id"] if r["parent_span_id"] in ids else None
        children.setdefault(parent, []).append(r)
    out: list[TraceSpan] = []
    stack = [(r, 0) for r in reversed(children.get(None, []))]
    seen: set[str] = set()
    while stack:
        r, depth = stack.pop()
        if r["span_id"] in seen:  # a cycle in bad data: show each span once
            continue
        seen.add(r["span_id"])
        out.append(
            TraceSpan(
                span_id=r["span_id"], parent_span_id=r["parent_span_id"], name=r["name"], service=r["service"],
                kind=r["kind"], status_code=r["status_code"], status_message=r["status_message"],
                start_ns=r["start_ns"], end_ns=r["end_ns"], duration_ms=(r["end_ns"] - r["start_ns"]) / 1e6,
                offset_ms=(r["start_ns"] - t0) / 1e6, depth=depth,
                orphan=r["parent_span_id"] is not None and r["parent_span_id"] not in ids,
                attributes=_loads(r["attributes"], {}), events=tuple(_loads(r["events"], [])),
                resource=_loads(r["resource"], {}),
            )  # fmt: skip
        )
        stack.extend((c, depth + 1) for c in reversed(children.get(r["span_id"], [])))
    for r in rows:  # spans only reachable through a cycle
        if r["span_id"] not in seen:
            seen.add(r["span_id"])
            out.append(
                TraceSpan(
                    r["span_id"], r["parent_span_id"], r["name"], r["service"], r["kind"], r["status_code"],
                    r["status_message"], r["start_ns"], r["end_ns"], (r["end_ns"] - r["start_ns"]) / 1e6,
                    (r["start_ns"] - t0) / 1e6, 0, True, _loads(r["attributes"], {}),
                    tuple(_loads(r["events"], [])), _loads(r["resource"], {}),
                )  # fmt: skip
            )
    return out


def services(wh: Warehouse, *, limit: int = 200) -> list[str]:
    """Service names in the ``spans`` table, most spans first."""
    rows = wh.fetchall(
        "SELECT service FROM spans WHERE service IS NOT NULL GROUP BY service ORDER BY count(*) DESC, service LIMIT ?",
        [int(limit)],
    )
    return [str(r[0]) for r in rows]


def _loads(v: Any, default: Any) -> Any:
    if v is None:
        return default
    if isinstance(v, str):
        try:
            return orjson.loads(v)
        except orjson.JSONDecodeError:
            return default
    return v
