"""Vectorised OTLP/JSON-lines ingestion inside DuckDB (the fast path).

Decoding JSON in Python costs tens of microseconds per span; DuckDB's JSON
functions do the same work in C++ on every core. This module decodes a chunk
of JSON lines *in SQL* and stores only the spans of **clean** lines: lines
where every span passes the checks below, so the result is exactly what the
reference decoder (:func:`~memory_engine.observability.records.decode_json_span`
plus :func:`~memory_engine.observability.records.derive_row`) would store with
no warning. Every other line (invalid JSON, base64 ids, odd attribute types,
OpenInference spans, links, kvlists...) is handed back to the caller, which
decodes it with the Python reference decoder and reports problems with
``file:line``. A test checks both paths give identical rows.

A line is clean when: it is valid JSON with a ``resourceSpans`` array; the
number of spans decoded equals the number of ``"spanId"`` keys in the text
(so nothing was silently skipped); each span has a string name, hex trace
and span ids of the right size (not all zero), an empty or hex parent id,
integer times, integer kind/status code, and attributes (span, event and
resource) that are each one well-typed OTLP ``AnyValue`` (string, int,
double, bool, or a homogeneous array of those), with unique keys; known
``memory.*`` attributes have the TRACES.md types.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb
import pyarrow as pa

from .records import SPAN_ANSWER, SPAN_KINDS, SPAN_RETRIEVE, SPAN_WRITE, STATUS_CODES

_SCALAR_T = '{"stringValue": "JSON", "intValue": "JSON", "doubleValue": "JSON", "boolValue": "JSON"}'
_VALUE_T = (
    '{"stringValue": "JSON", "intValue": "JSON", "doubleValue": "JSON", "boolValue": "JSON", '
    '"arrayValue": {"values": [' + _SCALAR_T + ']}, "kvlistValue": "JSON", "bytesValue": "JSON"}'
)
_KV_T = '[{"key": "JSON", "value": ' + _VALUE_T + "}]"

# Values are typed structs whose leaves stay JSON text, so a check is a NULL
# test or a string test on a few bytes, not a re-parse of the document.
_MACROS = f"""
CREATE OR REPLACE TEMP MACRO _nn4(x) AS (
  (x.stringValue IS NOT NULL)::INT + (x.intValue IS NOT NULL)::INT
  + (x.doubleValue IS NOT NULL)::INT + (x.boolValue IS NOT NULL)::INT
);
CREATE OR REPLACE TEMP MACRO _sk(x) AS (
  CASE WHEN _nn4(x) <> 1 THEN NULL
       WHEN x.stringValue IS NOT NULL THEN CASE WHEN starts_with(x.stringValue, '"') THEN 's' END
       WHEN x.intValue IS NOT NULL THEN CASE WHEN TRY_CAST(trim(x.intValue, '"') AS BIGINT) IS NOT NULL THEN 'i' END
       WHEN x.doubleValue IS NOT NULL THEN
            CASE WHEN NOT starts_with(x.doubleValue, '"') AND TRY_CAST(x.doubleValue AS DOUBLE) IS NOT NULL THEN 'd' END
       WHEN x.boolValue IN ('true', 'false') THEN 'b'
  END
);
CREATE OR REPLACE TEMP MACRO _sv(x, k) AS (
  CASE k WHEN 's' THEN x.stringValue::JSON
         WHEN 'i' THEN TRY_CAST(trim(x.intValue, '"') AS BIGINT)::JSON
         WHEN 'd' THEN x.doubleValue::JSON
         WHEN 'b' THEN x.boolValue::JSON END
);
CREATE OR REPLACE TEMP MACRO _vk(v) AS (
  CASE WHEN _nn4(v) + (v.arrayValue IS NOT NULL)::INT + (v.kvlistValue IS NOT NULL)::INT
            + (v.bytesValue IS NOT NULL)::INT <> 1 THEN NULL
       WHEN v.arrayValue IS NOT NULL THEN
            CASE WHEN coalesce(list_bool_and(list_transform(coalesce(v.arrayValue.values, []), lambda xa: _sk(xa) IS NOT NULL)), true)
                  AND len(list_distinct(list_transform(coalesce(v.arrayValue.values, []), lambda xb: _sk(xb)))) <= 1
                 THEN 'a' END
       WHEN v.kvlistValue IS NOT NULL OR v.bytesValue IS NOT NULL THEN NULL
       ELSE _sk(v)
  END
);
CREATE OR REPLACE TEMP MACRO _vk2(v) AS (
  CASE WHEN v.arrayValue IS NULL THEN _vk(v)
       WHEN _vk(v) = 'a' THEN 'a' || coalesce(_sk(v.arrayValue.values[1]), '') END
);
CREATE OR REPLACE TEMP MACRO _vplain(v, k) AS (
  CASE WHEN k = 'a' THEN list_transform(coalesce(v.arrayValue.values, []), lambda xc: _sv(xc, _sk(xc)))::JSON
       ELSE _sv(v, k) END
);
CREATE OR REPLACE TEMP MACRO _kinded(lst) AS (
  list_transform(lst, lambda xk: {{'key': xk.key, 'kind': _vk2(xk.value), 'value': xk.value}})
);
CREATE OR REPLACE TEMP MACRO _kv_list(j) AS (
  CASE WHEN j IS NULL THEN []
       WHEN json_type(j) = 'ARRAY' THEN _kinded(from_json(j, '{_KV_T}'))
  END
);
CREATE OR REPLACE TEMP MACRO _kv_ok(kl) AS (
  kl IS NOT NULL
  AND coalesce(list_bool_and(list_transform(kl, lambda xd: coalesce(starts_with(xd.key, '"') AND xd.kind IS NOT NULL, false))), true)
  AND len(list_distinct(list_transform(kl, lambda xe: xe.key))) = len(kl)
);
CREATE OR REPLACE TEMP MACRO _kv_json(kl) AS (
  CASE WHEN len(kl) = 0 THEN '{{}}'::JSON
       ELSE map_from_entries(list_transform(kl, lambda xf: {{'k': json_extract_string(xf.key, '$'),
                                                          'v': _vplain(xf.value, left(xf.kind, 1))}}))::JSON END
);
CREATE OR REPLACE TEMP MACRO _hex_id(j, n) AS (
  CASE WHEN json_type(j) = 'VARCHAR' AND regexp_full_match(json_extract_string(j, '$'), '[0-9a-fA-F]{{' || n || '}}')
        AND NOT regexp_full_match(json_extract_string(j, '$'), '0+') THEN lower(json_extract_string(j, '$')) END
);
CREATE OR REPLACE TEMP MACRO _ns(j) AS (
  CASE WHEN json_type(j) IN ('BIGINT', 'UBIGINT', 'VARCHAR') THEN TRY_CAST(json_extract_string(j, '$') AS BIGINT) END
);
"""

_SPAN_STRUCT = (
    '{"traceId": "JSON", "spanId": "JSON", "parentSpanId": "JSON", "name": "JSON", "kind": "JSON", '
    '"startTimeUnixNano": "JSON", "endTimeUnixNano": "JSON", "attributes": "JSON", "events": "JSON", '
    '"status": "JSON", "links": "JSON"}'
)

# expected JSON kinds of the TRACES.md attributes, per derived span name (see records.derive_row)
_STR, _INT, _DBL, _BOOL, _STRS, _DBLS = "str", "int", "dbl", "bool", "strs", "dbls"
_COMMON = {"memory.tenant_id": _STR, "memory.user_id": _STR, "memory.session_id": _STR}
_EXPECTED: dict[str, dict[str, str]] = {
    SPAN_RETRIEVE: _COMMON | {
        "memory.query": _STR, "memory.rewritten_query": _STR, "memory.top_k": _INT, "memory.retrieved_count": _INT,
        "memory.degraded": _BOOL, "memory.config_hash": _STR, "memory.embedding_version": _STR,
        "memory.fusion": _STR, "memory.retrieved_ids": _STRS, "memory.retrieved_scores": _DBLS,
        "memory.retrieved_sources": _STRS, "memory.retrieved_contents": _STRS,
    },
    SPAN_WRITE: _COMMON | {
        "memory.id": _STR, "memory.type": _STR, "memory.write_outcome": _STR, "memory.reject_reason": _STR,
        "memory.importance": _DBL, "memory.superseded_ids": _STRS, "memory.config_hash": _STR,
        "memory.embedding_version": _STR, "memory.content": _STR,
    },
    SPAN_ANSWER: _COMMON | {"memory.cited_ids": _STRS, "memory.retrieve_span_id": _STR, "memory.answer_text": _STR},
}  # fmt: skip

_COLUMN_OF = {
    SPAN_RETRIEVE: {
        "tenant_id": "memory.tenant_id", "user_id": "memory.user_id", "session_id": "memory.session_id",
        "query": "memory.query", "rewritten_query": "memory.rewritten_query", "top_k": "memory.top_k",
        "retrieved_count": "memory.retrieved_count", "degraded": "memory.degraded",
        "config_hash": "memory.config_hash", "embedding_version": "memory.embedding_version",
        "fusion": "memory.fusion", "retrieved_ids": "memory.retrieved_ids",
        "retrieved_scores": "memory.retrieved_scores", "retrieved_sources": "memory.retrieved_sources",
        "retrieved_contents": "memory.retrieved_contents",
    },
    SPAN_WRITE: {
        "tenant_id": "memory.tenant_id", "user_id": "memory.user_id", "session_id": "memory.session_id",
        "memory_id": "memory.id", "memory_type": "memory.type", "outcome": "memory.write_outcome",
        "reject_reason": "memory.reject_reason", "importance": "memory.importance",
        "superseded_ids": "memory.superseded_ids", "config_hash": "memory.config_hash",
        "embedding_version": "memory.embedding_version", "content": "memory.content",
    },
    SPAN_ANSWER: {
        "tenant_id": "memory.tenant_id", "user_id": "memory.user_id", "session_id": "memory.session_id",
        "retrieve_span_id": "memory.retrieve_span_id", "cited_ids": "memory.cited_ids",
        "answer_text": "memory.answer_text",
    },
}  # fmt: skip
_TABLE_OF = {SPAN_RETRIEVE: "retrievals", SPAN_WRITE: "writes", SPAN_ANSWER: "answers"}


_KIND_CODES = {_STR: ("s",), _INT: ("i",), _DBL: ("d", "i"), _BOOL: ("b",), _STRS: ("as", "a"), _DBLS: ("ad", "ai", "a")}
_DUCK_TYPE = {_STR: "VARCHAR", _INT: "INTEGER", _DBL: "DOUBLE", _BOOL: "BOOLEAN", _STRS: "VARCHAR[]", _DBLS: "DOUBLE[]"}


def _derived_ok_sql() -> str:
    """SQL: every known attribute of a memory.* span has its TRACES.md kind (checked on the typed list)."""
    parts = []
    for name, exp in _EXPECTED.items():
        pairs = ", ".join(f"'{k}': [{', '.join(repr(c) for c in _KIND_CODES[kind])}]" for k, kind in exp.items())
        check = (
            f"coalesce(list_bool_and(list_transform(alist, lambda q: coalesce(list_contains(MAP {{{pairs}}}"
            "[json_extract_string(q.key, '$')], q.kind), true))), true)"
        )
        if name == SPAN_ANSWER:
            check += (
                " AND coalesce(list_bool_and(list_transform(alist, lambda q2: json_extract_string(q2.key, '$') <> "
                "'memory.retrieve_span_id' OR regexp_full_match(json_extract_string(q2.value.stringValue, '$'), "
                "'[0-9a-fA-F]{16}'))), true)"
            )
        parts.append(f"WHEN '{name}' THEN {check}")
    return "CASE name " + " ".join(parts) + " ELSE true END"


def _kind_case(col: str, names: Sequence[str], default: str) -> str:
    whens = " ".join(f"WHEN {i} THEN '{n}'" for i, n in enumerate(names))
    return (
        f"CASE WHEN {col} IS NULL THEN '{default}' "
        f"ELSE CASE TRY_CAST(json_extract_string({col}, '$') AS INTEGER) {whens} END END"
    )


_SQL_DOCS = """
CREATE OR REPLACE TEMP TABLE _fd AS
SELECT line, (length(text) - length(replace(text, '"spanId"', ''))) // 8 AS expected,
       from_json(text, '{"resourceSpans": "JSON"}').resourceSpans AS rsj
FROM _lines WHERE json_valid(text)
"""

_SQL_SPANS = f"""
CREATE OR REPLACE TEMP TABLE _fs AS
WITH rs AS (
    SELECT line, unnest(from_json(rsj, '[{{"resource": "JSON", "scopeSpans": "JSON"}}]')) AS rs
    FROM _fd WHERE json_type(rsj) = 'ARRAY'
), rs2 AS (
    SELECT line, rs.scopeSpans AS ssj, _kv_list(json_extract(rs.resource, 'attributes')) AS res,
           (rs.resource IS NULL OR json_type(rs.resource) = 'OBJECT') AS res_obj
    FROM rs
), rs3 AS (
    SELECT line, ssj, res_obj AND coalesce(_kv_ok(res), false) AS res_ok,
           CASE WHEN res_obj AND coalesce(_kv_ok(res), false) THEN _kv_json(res) END AS resource
    FROM rs2
), ss AS (
    SELECT line, res_ok, resource, unnest(from_json(ssj, '[{{"scope": "JSON", "spans": "JSON"}}]')) AS ss
    FROM rs3 WHERE json_type(ssj) = 'ARRAY'
), sp AS (
    SELECT line, res_ok, resource, ss.scope AS scope, unnest(from_json(ss.spans, '[{_SPAN_STRUCT}]')) AS s
    FROM ss WHERE json_type(ss.spans) = 'ARRAY'
), a AS (
    SELECT line, s, scope, resource, res_ok,
           _hex_id(s.traceId, 32) AS trace_id, _hex_id(s.spanId, 16) AS span_id,
           json_extract_string(s.name, '$') AS name, _kv_list(s.attributes) AS alist,
           CASE WHEN s.events IS NULL THEN [] WHEN json_type(s.events) = 'ARRAY'
                THEN CAST(s.events AS JSON[]) END AS elist,
           _ns(s.startTimeUnixNano) AS start_ns
    FROM sp
), b AS (
    SELECT a.*,
       coalesce(json_type(s.name) = 'VARCHAR' AND trace_id IS NOT NULL AND span_id IS NOT NULL AND start_ns IS NOT NULL
       AND (s.parentSpanId IS NULL OR json_extract_string(s.parentSpanId, '$') = '' OR _hex_id(s.parentSpanId, 16) IS NOT NULL)
       AND (s.endTimeUnixNano IS NULL OR _ns(s.endTimeUnixNano) IS NOT NULL)
       AND (s.kind IS NULL OR (json_type(s.kind) IN ('BIGINT', 'UBIGINT')
            AND TRY_CAST(json_extract_string(s.kind, '$') AS INTEGER) BETWEEN 0 AND 5))
       AND (s.status IS NULL OR (json_type(s.status) = 'OBJECT'
            AND (json_extract(s.status, 'code') IS NULL OR (json_type(s.status, '$.code') IN ('BIGINT', 'UBIGINT')
                 AND TRY_CAST(json_extract_string(s.status, 'code') AS INTEGER) BETWEEN 0 AND 2))
            AND (json_extract(s.status, 'message') IS NULL OR json_type(s.status, '$.message') = 'VARCHAR')))
       AND (s.links IS NULL OR (json_type(s.links) = 'ARRAY' AND json_array_length(s.links) = 0))
       AND (scope IS NULL OR (json_type(scope) = 'OBJECT'
            AND (json_extract(scope, 'name') IS NULL OR json_type(scope, '$.name') = 'VARCHAR')))
       AND res_ok AND _kv_ok(alist) AND elist IS NOT NULL
       AND coalesce(list_bool_and(list_transform(elist, lambda ev0: coalesce(
            json_type(ev0) = 'OBJECT' AND (json_extract(ev0, 'name') IS NULL OR json_type(ev0, '$.name') = 'VARCHAR')
            AND (json_extract(ev0, 'timeUnixNano') IS NULL OR _ns(json_extract(ev0, 'timeUnixNano')) IS NOT NULL)
            AND _kv_ok(_kv_list(json_extract(ev0, 'attributes'))), false))), true)
       AND NOT coalesce(list_bool_or(list_transform(alist, lambda k0:
                starts_with(json_extract_string(k0.key, '$'), 'retrieval.documents')
                OR json_extract_string(k0.key, '$') = 'openinference.span.kind')), false), false) AS ok
    FROM a
)
SELECT line, trace_id, span_id,
       CASE WHEN s.parentSpanId IS NULL OR json_extract_string(s.parentSpanId, '$') = '' THEN NULL
            ELSE lower(json_extract_string(s.parentSpanId, '$')) END AS parent_span_id,
       name,
       {_kind_case("s.kind", SPAN_KINDS, "UNSPECIFIED")} AS kind,
       CASE WHEN json_type(json_extract(resource, 'service.name')) = 'VARCHAR'
            THEN json_extract_string(resource, 'service.name') END AS service,
       NULLIF(json_extract_string(scope, 'name'), '') AS scope,
       start_ns,
       CASE WHEN s.endTimeUnixNano IS NULL OR _ns(s.endTimeUnixNano) = 0 THEN start_ns
            ELSE _ns(s.endTimeUnixNano) END AS end_ns,
       {_kind_case("json_extract(s.status, 'code')", STATUS_CODES, "UNSET")} AS status_code,
       NULLIF(json_extract_string(s.status, 'message'), '') AS status_message,
       CASE WHEN ok THEN _kv_json(alist) END AS attributes,
       resource,
       CASE WHEN NOT ok THEN NULL WHEN len(elist) = 0 THEN '[]'::JSON ELSE list_transform(elist, lambda ev: {{
            'name': json_extract_string(ev, 'name'), 'time_ns': coalesce(_ns(json_extract(ev, 'timeUnixNano')), 0),
            'attributes': _kv_json(_kv_list(json_extract(ev, 'attributes')))}})::JSON END AS events,
       ok AND coalesce(({_derived_ok_sql()}), false) AS clean
FROM b
"""

_SQL_FAST = """
CREATE OR REPLACE TEMP TABLE _fast AS
WITH per_line AS (
    SELECT line, count(*) FILTER (WHERE clean) AS n_clean, count(*) AS n FROM _fs GROUP BY line
)
SELECT _fs.* EXCLUDE (clean) FROM _fs JOIN per_line USING (line) JOIN _fd USING (line)
WHERE per_line.n_clean = per_line.n AND per_line.n = _fd.expected
"""


def _derived_insert(name: str) -> str:
    table = _TABLE_OF[name]
    cols = _COLUMN_OF[name]
    exp = _EXPECTED[name]
    struct = "{" + ", ".join(f'"{k}": "{_DUCK_TYPE[kind]}"' for k, kind in exp.items()) + "}"
    sel = []
    for col, key in cols.items():
        expr = f't."{key}"'
        if col == "retrieve_span_id":
            expr = f"lower({expr})"
        sel.append(f"{expr} AS {col}")
    extra = ", 'memwb' AS origin" if name == SPAN_RETRIEVE else ""
    extra_col = ", origin" if name == SPAN_RETRIEVE else ""
    return (
        f"INSERT OR IGNORE INTO {table} (trace_id, span_id, start_ns, end_ns, latency_ms, service, status_code, "
        f"{', '.join(cols)}{extra_col}) "
        f"SELECT trace_id, span_id, start_ns, end_ns, (end_ns - start_ns) / 1e6, service, status_code, "
        f"{', '.join(sel)}{extra} FROM (SELECT *, from_json(attributes, '{struct}') AS t FROM _fast "
        f"WHERE name = '{name}')"
    )


_DERIVED_SQL = [_derived_insert(n) for n in _TABLE_OF]


@dataclass(frozen=True)
class FastResult:
    """Outcome of one fast-path chunk: spans ``stored`` and ``duplicate`` from
    clean lines, and the 0-based indexes of the lines left for the Python decoder."""

    stored: int
    duplicate: int
    leftover: tuple[int, ...]


def ingest_json_lines(con: duckdb.DuckDBPyConnection, lines: pa.Table, *, source: str) -> FastResult:
    """Decode and insert the clean lines of ``lines`` (columns ``line`` int64, ``text`` string).

    Runs in one transaction on ``con`` (the caller holds the writer lock).
    Raises ``duckdb.Error`` on failure (nothing is stored then); the caller
    falls back to the Python decoder.
    """
    con.execute(_MACROS)
    con.register("_lines", lines)
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(_SQL_DOCS)
            con.execute(_SQL_SPANS)
            con.execute(_SQL_FAST)
            clean_lines = {r[0] for r in con.execute("SELECT DISTINCT line FROM _fast").fetchall()}
            row = con.execute(
                "INSERT OR IGNORE INTO spans (trace_id, span_id, parent_span_id, name, kind, service, scope, start_ns, "
                "end_ns, duration_ms, status_code, status_message, attributes, resource, events, warnings, source, "
                "ingested_at) SELECT trace_id, span_id, parent_span_id, name, kind, service, scope, start_ns, end_ns, "
                "(end_ns - start_ns) / 1e6, status_code, status_message, attributes, resource, events, NULL, ?, ? "
                "FROM _fast",
                [source, datetime.now(UTC).replace(tzinfo=None)],
            ).fetchone()
            stored = int(row[0]) if row else 0
            total_row = con.execute("SELECT count(*) FROM _fast").fetchone()
            total = int(total_row[0]) if total_row else 0
            for sql in _DERIVED_SQL:
                con.execute(sql)
            con.execute("DROP TABLE _fast; DROP TABLE _fs; DROP TABLE _fd")
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
    finally:
        con.unregister("_lines")
    line_col = lines.column("line").to_pylist()
    leftover = tuple(i for i, ln in enumerate(line_col) if ln not in clean_lines)
    return FastResult(stored=stored, duplicate=total - stored, leftover=leftover)
