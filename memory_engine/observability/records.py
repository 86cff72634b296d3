"""Frozen span records and the pure decoders that produce them.

Every way a span reaches the warehouse ends in the same :class:`SpanRecord`:

* :func:`decode_readable_span` - an OpenTelemetry SDK ``ReadableSpan`` (the
  in-process exporter);
* :func:`decode_proto_span` - an ``opentelemetry.proto.trace.v1.Span`` (OTLP
  protobuf files and OTLP/HTTP protobuf bodies);
* :func:`decode_json_span` - one span object of the OTLP/JSON encoding (hex ids
  per the OTLP spec, base64 ids as written by generic protobuf-JSON mappers).

Decoding is pure and separate from inserting (Arize Phoenix keeps
``decode_otlp_span`` apart from ``insert_span`` the same way). Ids are stored as
lowercase hex (32 digits for a trace id, 16 for a span id). A span whose trace
id is not 16 bytes or span id not 8 bytes raises :class:`SpanRejected`; an
unknown or oddly typed attribute value never rejects a span: it is kept raw
and a warning is added to ``SpanRecord.warnings``.

:func:`derive_row` maps a record onto the TRACES.md columns of the derived
tables (``retrievals``, ``writes``, ``answers``), including OpenInference
retriever spans (``retrieval.documents.N.document.id/score/content``).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import SpanRejected

# --- names ------------------------------------------------------------------
SPAN_RETRIEVE = "memory.retrieve"
SPAN_WRITE = "memory.write"
SPAN_FORGET = "memory.forget"
SPAN_CONSOLIDATE = "memory.consolidate"
SPAN_ANSWER = "memory.answer"

SPAN_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS_CODES = ("UNSET", "OK", "ERROR")


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One span as stored in the ``spans`` table.

    ``trace_id`` 32 lowercase hex digits, ``span_id``/``parent_span_id`` 16
    (parent ``None`` for a root span); ``start_ns``/``end_ns`` Unix epoch
    nanoseconds; ``kind`` one of :data:`SPAN_KINDS`; ``status_code`` one of
    :data:`STATUS_CODES`; ``attributes``/``resource`` JSON-ready mappings
    (arrays as lists, kvlists as dicts, bytes as base64 text); ``events`` a
    tuple of ``{"name", "time_ns", "attributes"}`` mappings; ``warnings``
    the attribute problems found while decoding (the raw value is kept).
    The mappings must not be mutated.
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int
    end_ns: int
    kind: str = "INTERNAL"
    status_code: str = "UNSET"
    status_message: str | None = None
    service: str | None = None
    scope: str | None = None
    attributes: Mapping[str, Any] | None = None
    resource: Mapping[str, Any] | None = None
    events: tuple[Mapping[str, Any], ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def duration_ms(self) -> float:
        """Span duration in milliseconds."""
        return (self.end_ns - self.start_ns) / 1e6


# --- ids ----------------------------------------------------------------------
_HEX = frozenset("0123456789abcdefABCDEF")


def normalize_id(value: Any, nbytes: int, what: str) -> str:
    """Lowercase hex of an id given as hex text, base64 text or raw bytes.

    Raises :class:`SpanRejected` when it does not decode to exactly ``nbytes``
    bytes or is all zero (invalid per the OTel trace spec).
    """
    raw: bytes | None = None
    if isinstance(value, bytes | bytearray):
        raw = bytes(value)
    elif isinstance(value, str):
        if len(value) == 2 * nbytes:
            try:
                raw = bytes.fromhex(value)
            except ValueError:
                raw = None
        if raw is None:
            try:
                raw = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raw = None
    if raw is None or len(raw) != nbytes:
        if isinstance(value, str) and value and len(value) % 2 == 0 and all(c in _HEX for c in value):
            got = f"{len(value) // 2} bytes as hex"
        else:
            got = "unreadable" if raw is None else f"{len(raw)} bytes"
        raise SpanRejected(f"{what} {value!r} is not {nbytes} bytes ({got}; expected hex or base64)")
    if not any(raw):
        raise SpanRejected(f"{what} is all zero (invalid)")
    return raw.hex()


def _parent_id(value: Any, warnings: list[str]) -> str | None:
    if value in (None, "", b""):
        return None
    try:
        return normalize_id(value, 8, "parent span id")
    except SpanRejected as e:
        warnings.append(f"{e.reason}; stored as root span")
        return None


# --- attribute values -----------------------------------------------------------
def _json_any(v: Any, key: str, warnings: list[str]) -> Any:
    """Decode one OTLP/JSON ``AnyValue`` object; odd shapes are kept raw with a warning."""
    if type(v) is dict:
        if len(v) == 1:
            if "stringValue" in v:
                s = v["stringValue"]
                if type(s) is str:
                    return s
            elif "intValue" in v:
                x = v["intValue"]
                if type(x) is str:
                    try:
                        x = int(x)
                    except ValueError:
                        pass
                if type(x) is int and -(2**63) <= x < 2**63:
                    return x
            elif "doubleValue" in v:
                x = v["doubleValue"]
                if type(x) in (float, int):
                    return float(x)
                if x in ("NaN", "Infinity", "-Infinity"):
                    return float(x.replace("Infinity", "inf"))
            elif "boolValue" in v:
                x = v["boolValue"]
                if type(x) is bool:
                    return x
            elif "arrayValue" in v:
                arr = v["arrayValue"]
                vals = arr.get("values", []) if type(arr) is dict else None
                if type(vals) is list:
                    out = [_json_any(x, key, warnings) for x in vals]
                    _check_homogeneous(out, key, warnings)
                    return out
            elif "kvlistValue" in v:
                kv = v["kvlistValue"]
                vals = kv.get("values", []) if type(kv) is dict else None
                if type(vals) is list:
                    return _json_kv(vals, warnings, prefix=f"{key}.")
            elif "bytesValue" in v:
                x = v["bytesValue"]
                if type(x) is str:
                    return x
        elif not v:
            return None
    warnings.append(f"attribute {key!r}: unrecognised value {_short(v)}; kept raw")
    return v


def _json_kv(items: Any, warnings: list[str], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if type(items) is not list:
        warnings.append(f"attributes {prefix or ''}: not a list ({_short(items)}); kept raw")
        return {f"{prefix}__raw__": items}
    for i, kv in enumerate(items):
        if type(kv) is dict and type(kv.get("key")) is str:
            k = kv["key"]
            out[k] = _json_any(kv.get("value", {}), prefix + k, warnings)
        else:
            warnings.append(f"attribute #{i} of {prefix or 'span'}: no string key ({_short(kv)}); kept raw")
            out[f"{prefix}__raw_{i}__"] = kv
    return out


def _check_homogeneous(values: list[Any], key: str, warnings: list[str]) -> None:
    kinds = {type(x) for x in values if x is not None}
    if int in kinds and float in kinds:
        kinds.discard(int)
    if len(kinds) > 1:
        warnings.append(f"attribute {key!r}: mixed array element types {sorted(t.__name__ for t in kinds)}")


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


def _proto_any(v: Any, key: str, warnings: list[str]) -> Any:
    which = v.WhichOneof("value")
    if which == "string_value":
        return v.string_value
    if which == "int_value":
        return v.int_value
    if which == "double_value":
        return v.double_value
    if which == "bool_value":
        return v.bool_value
    if which == "array_value":
        out = [_proto_any(x, key, warnings) for x in v.array_value.values]
        _check_homogeneous(out, key, warnings)
        return out
    if which == "kvlist_value":
        return {kv.key: _proto_any(kv.value, f"{key}.{kv.key}", warnings) for kv in v.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(v.bytes_value).decode("ascii")
    return None


def proto_attributes(items: Any, warnings: list[str]) -> dict[str, Any]:
    """Decode repeated protobuf ``KeyValue`` attributes into a JSON-ready mapping."""
    return {kv.key: _proto_any(kv.value, kv.key, warnings) for kv in items}


def _sdk_value(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return [_sdk_value(x) for x in v]
    if isinstance(v, bytes):
        return base64.b64encode(v).decode("ascii")
    return v


# --- decoders -------------------------------------------------------------------
def decode_readable_span(span: Any) -> SpanRecord:
    """Decode an OpenTelemetry SDK ``ReadableSpan`` (pure; raises SpanRejected)."""
    ctx = span.context
    if ctx is None:
        raise SpanRejected("span has no context", span.name)
    trace_id = normalize_id(ctx.trace_id.to_bytes(16, "big"), 16, "trace id")
    span_id = normalize_id(ctx.span_id.to_bytes(8, "big"), 8, "span id")
    parent = span.parent
    parent_id = format(parent.span_id, "016x") if parent is not None and parent.span_id else None
    attrs = {k: _sdk_value(v) for k, v in (span.attributes or {}).items()}
    res_attrs = {k: _sdk_value(v) for k, v in (span.resource.attributes if span.resource else {}).items()}
    events = tuple(
        {
            "name": ev.name,
            "time_ns": _event_time(int(ev.timestamp or 0), ev.name, []),
            "attributes": {k: _sdk_value(v) for k, v in (ev.attributes or {}).items()},
        }
        for ev in span.events
    )
    scope = span.instrumentation_scope.name if span.instrumentation_scope is not None else None
    status = span.status
    start = _check_ns(int(span.start_time or 0), "start time")
    end = _check_ns(int(span.end_time or start), "end time")
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_id,
        name=span.name,
        start_ns=start,
        end_ns=end,
        kind=span.kind.name if span.kind is not None else "INTERNAL",
        status_code=status.status_code.name if status is not None else "UNSET",
        status_message=(status.description or None) if status is not None else None,
        service=res_attrs.get("service.name"),
        scope=scope,
        attributes=attrs,
        resource=res_attrs,
        events=events,
    )


def decode_proto_span(span: Any, resource: Mapping[str, Any], scope: str | None) -> SpanRecord:
    """Decode a protobuf ``opentelemetry.proto.trace.v1.Span`` (pure; raises SpanRejected).

    ``resource`` is the already decoded resource attribute mapping of the
    enclosing ``ResourceSpans``; ``scope`` its instrumentation scope name.
    """
    warnings: list[str] = []
    trace_id = normalize_id(span.trace_id, 16, "trace id")
    span_id = normalize_id(span.span_id, 8, "span id")
    parent = _parent_id(span.parent_span_id, warnings)
    attrs = proto_attributes(span.attributes, warnings)
    events = tuple(
        {
            "name": ev.name,
            "time_ns": _event_time(int(ev.time_unix_nano), ev.name, warnings),
            "attributes": proto_attributes(ev.attributes, warnings),
        }
        for ev in span.events
    )
    kind = SPAN_KINDS[span.kind] if 0 <= span.kind < len(SPAN_KINDS) else "UNSPECIFIED"
    code = STATUS_CODES[span.status.code] if 0 <= span.status.code < len(STATUS_CODES) else "UNSET"
    start = _check_ns(int(span.start_time_unix_nano), "start_time_unix_nano")
    end = _check_ns(int(span.end_time_unix_nano), "end_time_unix_nano") or start
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=span.name,
        start_ns=start,
        end_ns=end,
        kind=kind,
        status_code=code,
        status_message=span.status.message or None,
        service=_service(resource),
        scope=scope,
        attributes=attrs,
        resource=resource,
        events=events,
        warnings=tuple(warnings),
    )


def _service(resource: Mapping[str, Any]) -> str | None:
    s = resource.get("service.name")
    return s if isinstance(s, str) else None


def decode_json_resource(obj: Any, warnings: list[str]) -> dict[str, Any]:
    """Decode an OTLP/JSON ``resource`` object into an attribute mapping."""
    if not obj:
        return {}
    if type(obj) is not dict:
        warnings.append(f"resource: not an object ({_short(obj)}); ignored")
        return {}
    return _json_kv(obj.get("attributes", []), warnings, prefix="resource.")


NS_MAX = 2**63 - 1
"""Largest span time the warehouse stores: ``BIGINT`` nanoseconds since the epoch (year 2262)."""


def _check_ns(t: int, what: str) -> int:
    """``t`` when it is a time the warehouse can store (``0 <= t <= NS_MAX``), else :class:`SpanRejected`."""
    if 0 <= t <= NS_MAX:
        return t
    raise SpanRejected(f"{what} {_short(t)} is out of range (0 .. 2^63-1 nanoseconds since 1970)")


def _json_int(v: Any, what: str) -> int:
    if type(v) is int:
        return _check_ns(v, what)
    if type(v) is str and len(v) <= 40:  # int() of a huge digit string is quadratic; no valid time is that long
        try:
            return _check_ns(int(v), what)
        except ValueError:
            pass
    raise SpanRejected(f"{what} {_short(v)} is not an integer of nanoseconds")


def _event_time(v: Any, name: Any, warnings: list[str]) -> int:
    """An event time in nanoseconds; a bad or out-of-range one is set to 0 with a warning (the span is kept)."""
    try:
        return _json_int(v, "event time")
    except SpanRejected as e:
        warnings.append(f"event {_short(name)}: {e.reason}; set to 0")
        return 0


def _json_enum(v: Any, names: tuple[str, ...], prefix: str, default: str) -> str:
    if type(v) is int and 0 <= v < len(names):
        return names[v]
    if type(v) is str:
        name = v.removeprefix(prefix)
        if name in names:
            return name
    return default


def decode_json_span(
    span: Any, resource: Mapping[str, Any], scope: str | None, resource_warnings: Sequence[str] = ()
) -> SpanRecord:
    """Decode one span object of the OTLP/JSON encoding (pure; raises SpanRejected).

    Accepts hex ids (OTLP/JSON spec) and base64 ids (generic protobuf JSON);
    enum fields as integers or names (``SPAN_KIND_SERVER``, ``STATUS_CODE_ERROR``);
    int64 fields as strings or numbers.
    """
    if type(span) is not dict:
        raise SpanRejected(f"span is not an object: {_short(span)}")
    name = span.get("name")
    if type(name) is not str:
        raise SpanRejected(f"span name missing or not a string: {_short(name)}")
    trace_id = normalize_id(span.get("traceId"), 16, "trace id")
    span_id = normalize_id(span.get("spanId"), 8, "span id")
    warnings: list[str] = list(resource_warnings)
    parent = _parent_id(span.get("parentSpanId"), warnings)
    start = _json_int(span.get("startTimeUnixNano"), "startTimeUnixNano")
    end_raw = span.get("endTimeUnixNano")
    end = _json_int(end_raw, "endTimeUnixNano") if end_raw not in (None, "", 0, "0") else start
    attrs = _json_kv(span.get("attributes", []), warnings)
    events: list[dict[str, Any]] = []
    raw_events = span.get("events") or []
    if type(raw_events) is not list:
        warnings.append(f"events {_short(raw_events)} is not a list; skipped")
        raw_events = []
    for ev in raw_events:
        if type(ev) is dict:
            t = _event_time(ev.get("timeUnixNano", 0), ev.get("name"), warnings)
            events.append(
                {"name": ev.get("name"), "time_ns": t, "attributes": _json_kv(ev.get("attributes", []), warnings)}
            )
        else:
            warnings.append(f"event {_short(ev)} is not an object; skipped")
    status = span.get("status") or {}
    if type(status) is not dict:
        warnings.append(f"status {_short(status)} is not an object; treated as UNSET")
        status = {}
    msg = status.get("message")
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        start_ns=start,
        end_ns=end,
        kind=_json_enum(span.get("kind", 0), SPAN_KINDS, "SPAN_KIND_", "UNSPECIFIED"),
        status_code=_json_enum(status.get("code", 0), STATUS_CODES, "STATUS_CODE_", "UNSET"),
        status_message=msg if isinstance(msg, str) and msg else None,
        service=_service(resource),
        scope=scope,
        attributes=attrs,
        resource=resource,
        events=tuple(events),
        warnings=tuple(warnings),
    )


# --- derived rows -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RetrievalRow:
    """A row of the ``retrievals`` table (TRACES.md retrieve columns; ``origin``
    is ``memwb`` or ``openinference``). Lists are in rank order."""

    tenant_id: str | None
    user_id: str | None
    session_id: str | None
    query: str | None
    rewritten_query: str | None
    top_k: int | None
    retrieved_count: int | None
    degraded: bool | None
    config_hash: str | None
    embedding_version: str | None
    fusion: str | None
    retrieved_ids: list[str] | None
    retrieved_scores: list[float | None] | None
    retrieved_sources: list[str] | None
    retrieved_contents: list[str | None] | None
    origin: str


@dataclass(frozen=True, slots=True)
class WriteRow:
    """A row of the ``writes`` table (TRACES.md write columns plus ``content``)."""

    tenant_id: str | None
    user_id: str | None
    session_id: str | None
    memory_id: str | None
    memory_type: str | None
    outcome: str | None
    reject_reason: str | None
    importance: float | None
    superseded_ids: list[str] | None
    config_hash: str | None
    embedding_version: str | None
    content: str | None


@dataclass(frozen=True, slots=True)
class AnswerRow:
    """A row of the ``answers`` table (cited ids, linked retrieval span id, text)."""

    tenant_id: str | None
    user_id: str | None
    session_id: str | None
    retrieve_span_id: str | None
    cited_ids: list[str] | None
    answer_text: str | None


DerivedRow = RetrievalRow | WriteRow | AnswerRow


def _as_str(a: Mapping[str, Any], key: str, warn: list[str]) -> str | None:
    v = a.get(key)
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool | int | float):
        warn.append(f"attribute {key!r}: expected string, got {type(v).__name__}; converted")
        return str(v)
    warn.append(f"attribute {key!r}: expected string, got {_short(v)}; column left empty")
    return None


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
"""Range of the derived tables' ``INTEGER`` columns (``top_k``, ``retrieved_count``)."""


def _as_int(a: Mapping[str, Any], key: str, warn: list[str]) -> int | None:
    """An ``INTEGER`` column value: ints, integral floats and decimal strings inside int32; anything else
    (including an out-of-range count such as ``top_k = 2**31``) leaves the column empty with a warning,
    the span itself is kept."""
    v = a.get(key)
    if v is None:
        return None
    out: int | None = None
    if type(v) is int:
        out = v
    elif isinstance(v, float) and math.isfinite(v) and v.is_integer():
        out = int(v)
    elif isinstance(v, str) and len(v) <= 20:
        try:
            out = int(v)
        except ValueError:
            out = None
    if out is not None and INT32_MIN <= out <= INT32_MAX:
        return out
    what = "out of the int32 range" if out is not None else f"expected int, got {_short(v)}"
    warn.append(f"attribute {key!r}: {what}; column left empty")
    return None


def _as_float(a: Mapping[str, Any], key: str, warn: list[str]) -> float | None:
    v = a.get(key)
    if v is None:
        return None
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    warn.append(f"attribute {key!r}: expected double, got {_short(v)}; column left empty")
    return None


def _as_bool(a: Mapping[str, Any], key: str, warn: list[str]) -> bool | None:
    v = a.get(key)
    if v is None or isinstance(v, bool):
        return v
    if v in ("true", "false"):
        return v == "true"
    warn.append(f"attribute {key!r}: expected bool, got {_short(v)}; column left empty")
    return None


def _as_str_list(a: Mapping[str, Any], key: str, warn: list[str]) -> list[str] | None:
    v = a.get(key)
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return v
    if isinstance(v, list):
        warn.append(f"attribute {key!r}: non-string array elements; converted to text")
        return [x if isinstance(x, str) else str(x) for x in v]
    warn.append(f"attribute {key!r}: expected string[], got {_short(v)}; column left empty")
    return None


def _as_float_list(a: Mapping[str, Any], key: str, warn: list[str]) -> list[float | None] | None:
    v = a.get(key)
    if v is None:
        return None
    if isinstance(v, list):
        out: list[float | None] = []
        bad = False
        for x in v:
            if isinstance(x, int | float) and not isinstance(x, bool):
                out.append(float(x) if not (isinstance(x, float) and math.isnan(x)) else None)
            else:
                bad = True
                out.append(None)
        if bad:
            warn.append(f"attribute {key!r}: non-numeric array elements set to null")
        return out
    warn.append(f"attribute {key!r}: expected double[], got {_short(v)}; column left empty")
    return None


def _span_hex(v: str | None) -> str | None:
    """Normalise a linked span id to lowercase hex when it is one."""
    if v is None:
        return None
    try:
        return normalize_id(v, 8, "span id")
    except SpanRejected:
        return v


_OI_DOC = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(id|score|content|metadata)$")
_OI_OUT_MSG = re.compile(r"^llm\.output_messages\.(\d+)\.message\.content$")
_GENAI_COMPLETION = re.compile(r"^gen_ai\.completion\.(\d+)\.content$")

# Document id keys looked up in a retrieved document's metadata when the span carries no
# ``document.id`` (LangChain's Qdrant store keeps the point id in ``metadata._id``).
DOC_ID_METADATA_KEYS = ("id", "_id", "doc_id", "document_id", "chunk_id")

GENAI_ANSWER_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
"""``gen_ai.operation.name`` values whose span output is an answer (OTel GenAI semantic conventions)."""


def _openinference_docs(a: Mapping[str, Any]) -> dict[int, dict[str, Any]] | None:
    docs: dict[int, dict[str, Any]] = {}
    nested = a.get("retrieval.documents")
    if isinstance(nested, list):  # some SDKs send a kvlist array instead of flattened keys
        for i, d in enumerate(nested):
            if isinstance(d, dict):
                docs[i] = {k.removeprefix("document."): v for k, v in d.items()}
    for k, v in a.items():
        if k.startswith("retrieval.documents."):
            m = _OI_DOC.match(k)
            if m:
                docs.setdefault(int(m.group(1)), {})[m.group(2)] = v
    return docs or None


def _json_loads(v: Any) -> Any:
    if isinstance(v, str) and v[:1] in ("{", "["):
        try:
            return orjson.loads(v)
        except orjson.JSONDecodeError:
            return None
    return v


def _doc_id(d: Mapping[str, Any]) -> str:
    """A document's id: ``document.id``, else the first of :data:`DOC_ID_METADATA_KEYS` in its metadata."""
    did = d.get("id")
    if did is None:
        meta = _json_loads(d.get("metadata"))
        if isinstance(meta, dict):
            did = next((meta[k] for k in DOC_ID_METADATA_KEYS if meta.get(k) not in (None, "")), None)
    return did if isinstance(did, str) else ("" if did is None else str(did))


def _genai_docs(a: Mapping[str, Any]) -> dict[int, dict[str, Any]] | None:
    """``gen_ai.retrieval.documents``: a JSON string or an array of ``{id, score, ...}`` objects."""
    raw = _json_loads(a.get("gen_ai.retrieval.documents"))
    if not isinstance(raw, list):
        return None
    return {i: d for i, d in enumerate(raw) if isinstance(d, dict)} or None


def is_foreign_retrieval(a: Mapping[str, Any]) -> bool:
    """True for an OpenInference RETRIEVER span or an OTel GenAI retrieval span."""
    return (
        a.get("openinference.span.kind") == "RETRIEVER"
        or a.get("gen_ai.operation.name") == "retrieval"
        or "gen_ai.retrieval.documents" in a
        or any(k.startswith("retrieval.documents") for k in a)
    )


def is_foreign_answer(a: Mapping[str, Any]) -> bool:
    """True for an OpenInference LLM span or an OTel GenAI inference span (chat, completion)."""
    return a.get("openinference.span.kind") == "LLM" or a.get("gen_ai.operation.name") in GENAI_ANSWER_OPERATIONS


def _texts_of(v: Any) -> list[str]:
    """Text found in a model output value: a string, an LLMResult, a message list or GenAI parts."""
    v = _json_loads(v)
    if isinstance(v, str):
        return [v]
    out: list[str] = []
    if isinstance(v, list):
        for x in v:
            out.extend(_texts_of(x))
    elif isinstance(v, dict):
        for key in ("text", "content"):
            if isinstance(v.get(key), str):
                return [v[key]]
        for key in ("generations", "parts", "content", "message", "messages", "choices"):
            if key in v:
                out.extend(_texts_of(v[key]))
    return out


def _answer_text(rec: SpanRecord) -> str | None:
    """The answer an LLM span produced, by convention, first found wins:
    OpenInference ``llm.output_messages.N.message.content``; GenAI ``gen_ai.output.messages``,
    ``gen_ai.completion.N.content``, ``gen_ai.completion``; a ``gen_ai.choice`` event;
    OpenInference ``output.value`` (plain text or a JSON LLM result)."""
    a = rec.attributes or {}
    msgs = sorted((int(m.group(1)), v) for k, v in a.items() if (m := _OI_OUT_MSG.match(k)) and isinstance(v, str))
    if msgs:
        return "\n".join(v for _, v in msgs)
    for key in ("gen_ai.output.messages", "gen_ai.completion"):
        if key in a:
            texts = _texts_of(a[key])
            if texts:
                return "\n".join(texts)
    comps = sorted((int(m.group(1)), v) for k, v in a.items() if (m := _GENAI_COMPLETION.match(k)) and isinstance(v, str))
    if comps:
        return "\n".join(v for _, v in comps)
    for ev in rec.events:
        if ev.get("name") == "gen_ai.choice":
            attrs = ev.get("attributes") or {}
            texts = _texts_of(attrs.get("message", attrs.get("body")))
            if texts:
                return "\n".join(texts)
    if "output.value" in a:
        texts = _texts_of(a["output.value"])
        if texts:
            return "\n".join(texts)
    return None


def _first_str(a: Mapping[str, Any], keys: Sequence[str], w: list[str]) -> str | None:
    for k in keys:
        if k in a:
            return _as_str(a, k, w)
    return None


def derive_row(rec: SpanRecord) -> tuple[DerivedRow | None, tuple[str, ...]]:
    """Map a span onto its derived table row, with the coercion warnings.

    ``memory.retrieve`` -> :class:`RetrievalRow`; OpenInference retriever spans
    (``openinference.span.kind == "RETRIEVER"`` or any
    ``retrieval.documents.N.document.*`` attribute) -> :class:`RetrievalRow`
    with ``origin="openinference"``; ``memory.write`` -> :class:`WriteRow`;
    ``memory.answer`` -> :class:`AnswerRow`; anything else -> ``None``.
    Oddly typed attributes give an empty column and a warning, never an error.
    """
    a = rec.attributes or {}
    w: list[str] = []
    name = rec.name
    if name == SPAN_RETRIEVE:
        row: DerivedRow = RetrievalRow(
            tenant_id=_as_str(a, "memory.tenant_id", w),
            user_id=_as_str(a, "memory.user_id", w),
            session_id=_as_str(a, "memory.session_id", w),
            query=_as_str(a, "memory.query", w),
            rewritten_query=_as_str(a, "memory.rewritten_query", w),
            top_k=_as_int(a, "memory.top_k", w),
            retrieved_count=_as_int(a, "memory.retrieved_count", w),
            degraded=_as_bool(a, "memory.degraded", w),
            config_hash=_as_str(a, "memory.config_hash", w),
            embedding_version=_as_str(a, "memory.embedding_version", w),
            fusion=_as_str(a, "memory.fusion", w),
            retrieved_ids=_as_str_list(a, "memory.retrieved_ids", w),
            retrieved_scores=_as_float_list(a, "memory.retrieved_scores", w),
            retrieved_sources=_as_str_list(a, "memory.retrieved_sources", w),
            retrieved_contents=_as_str_list(a, "memory.retrieved_contents", w),  # type: ignore[arg-type]
            origin="memwb",
        )
        return row, tuple(w)
    if name == SPAN_WRITE:
        return (
            WriteRow(
                tenant_id=_as_str(a, "memory.tenant_id", w),
                user_id=_as_str(a, "memory.user_id", w),
                session_id=_as_str(a, "memory.session_id", w),
                memory_id=_as_str(a, "memory.id", w),
                memory_type=_as_str(a, "memory.type", w),
                outcome=_as_str(a, "memory.write_outcome", w),
                reject_reason=_as_str(a, "memory.reject_reason", w),
                importance=_as_float(a, "memory.importance", w),
                superseded_ids=_as_str_list(a, "memory.superseded_ids", w),
                config_hash=_as_str(a, "memory.config_hash", w),
                embedding_version=_as_str(a, "memory.embedding_version", w),
                content=_as_str(a, "memory.content", w),
            ),
            tuple(w),
        )
    if name == SPAN_ANSWER:
        return (
            AnswerRow(
                tenant_id=_as_str(a, "memory.tenant_id", w),
                user_id=_as_str(a, "memory.user_id", w),
                session_id=_as_str(a, "memory.session_id", w),
                retrieve_span_id=_span_hex(_as_str(a, "memory.retrieve_span_id", w)),
                cited_ids=_as_str_list(a, "memory.cited_ids", w),
                answer_text=_as_str(a, "memory.answer_text", w),
            ),
            tuple(w),
        )
    if is_foreign_retrieval(a):
        genai = "gen_ai.retrieval.documents" in a or a.get("gen_ai.operation.name") == "retrieval"
        docs = (_genai_docs(a) if genai else None) or _openinference_docs(a) or {}
        ids: list[str] = []
        scores: list[float | None] = []
        contents: list[str | None] = []
        for i in sorted(docs):
            d = docs[i]
            ids.append(_doc_id(d))
            sc = d.get("score")
            scores.append(float(sc) if isinstance(sc, int | float) and not isinstance(sc, bool) else None)
            ct = d.get("content")
            contents.append(ct if isinstance(ct, str) else None)
        return (
            RetrievalRow(
                tenant_id=_first_str(a, ("tenant.id", "memory.tenant_id"), w),
                user_id=_first_str(a, ("user.id", "enduser.id"), w),
                session_id=_first_str(a, ("session.id", "gen_ai.conversation.id"), w),
                query=_first_str(a, ("input.value", "gen_ai.retrieval.query.text", "gen_ai.prompt"), w),
                rewritten_query=None,
                top_k=_as_int(a, "gen_ai.retrieval.top_k", w) if "gen_ai.retrieval.top_k" in a else None,
                retrieved_count=len(ids),
                degraded=None,
                config_hash=None,
                embedding_version=None,
                fusion=None,
                retrieved_ids=ids,
                retrieved_scores=scores,
                retrieved_sources=None,
                retrieved_contents=contents,
                origin="genai" if genai and not a.get("openinference.span.kind") else "openinference",
            ),
            tuple(w),
        )
    if is_foreign_answer(a):
        # cited_ids and retrieve_span_id stay empty here: they are set when the answer is linked to a
        # retrieval of its trace (citations.link_foreign_answers), which may arrive in another batch
        return (
            AnswerRow(
                tenant_id=_first_str(a, ("tenant.id", "memory.tenant_id"), w),
                user_id=_first_str(a, ("user.id", "enduser.id"), w),
                session_id=_first_str(a, ("session.id", "gen_ai.conversation.id"), w),
                retrieve_span_id=None,
                cited_ids=None,
                answer_text=_answer_text(rec),
            ),
            tuple(w),
        )
    return None, ()
