"""Vectorised OTLP/JSON-lines decoding with pyarrow (the fast path).

Decoding JSON into Python objects costs tens of microseconds per span (about
sixty dicts and strings each); this module never builds them. A chunk of
JSON lines is parsed by pyarrow's C++ JSON reader against the strict OTLP
schema :data:`OTLP_JSON_SCHEMA` (any unexpected field or JSON type makes the
read fail), and the warehouse columns are computed with pyarrow compute and
numpy over whole columns: one pass for all spans, all attributes, all events.

The result is exactly what the reference decoder
(:func:`~memory_engine.observability.records.decode_json_span` plus
:func:`~memory_engine.observability.records.derive_row`) stores for every
span that decodes **cleanly** (no warning, no rejection, no coercion). Every
other span is handed back by position (line, resource, scope, span) so the
caller decodes it with the reference decoder, which reports problems with
``file:line``; lines the reader cannot take at all (invalid JSON, other
documents, literal ``null`` values, lone surrogate escapes, old
``instrumentationLibrarySpans``...) are handed back whole. A test checks that
both paths give identical rows on every sample file.

A span is clean when: its trace and span ids are hex of the right size and
not all zero; its parent id is empty or such a hex id; its times are decimal
strings of int64 nanoseconds; every attribute (span, event, resource) is one
well-typed OTLP ``AnyValue`` (string, bytes, int as a decimal string, double,
bool, or an array of those with one element type) under a unique key; it is
not an OpenInference or OTel GenAI span (``openinference.span.kind``, ``gen_ai.*``); and the TRACES.md ``memory.*``
attributes of retrieve/write/answer spans have their documented types.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from .records import (
    SPAN_ANSWER,
    SPAN_KINDS,
    SPAN_RETRIEVE,
    SPAN_WRITE,
    STATUS_CODES,
    AnswerRow,
    RetrievalRow,
    WriteRow,
)
from .warehouse import arrow_type

# --- the OTLP/JSON schema (opentelemetry-proto trace/v1, JSON encoding) -------------------------
_S = pa.string()
_I64 = pa.int64()
_SCALAR_FIELDS = [
    ("stringValue", _S), ("intValue", _S), ("doubleValue", pa.float64()), ("boolValue", pa.bool_()),
    ("bytesValue", _S),
]  # fmt: skip
_ANY = pa.struct([*_SCALAR_FIELDS, ("arrayValue", pa.struct([("values", pa.list_(pa.struct(_SCALAR_FIELDS)))]))])
_KVS = pa.list_(pa.struct([("key", _S), ("value", _ANY)]))
_SPAN = pa.struct([
    ("traceId", _S), ("spanId", _S), ("traceState", _S), ("parentSpanId", _S), ("flags", _I64), ("name", _S),
    ("kind", _I64), ("startTimeUnixNano", _S), ("endTimeUnixNano", _S), ("attributes", _KVS),
    ("droppedAttributesCount", _I64),
    ("events", pa.list_(pa.struct([("timeUnixNano", _S), ("name", _S), ("attributes", _KVS),
                                   ("droppedAttributesCount", _I64)]))),
    ("droppedEventsCount", _I64),
    ("links", pa.list_(pa.struct([("traceId", _S), ("spanId", _S), ("traceState", _S), ("flags", _I64),
                                  ("attributes", _KVS), ("droppedAttributesCount", _I64)]))),
    ("droppedLinksCount", _I64),
    ("status", pa.struct([("code", _I64), ("message", _S)])),
])  # fmt: skip
_SCOPE = pa.struct([("name", _S), ("version", _S), ("attributes", _KVS), ("droppedAttributesCount", _I64)])
_RESOURCE = pa.struct([("attributes", _KVS), ("droppedAttributesCount", _I64)])
OTLP_JSON_SCHEMA = pa.schema([
    ("resourceSpans", pa.list_(pa.struct([
        ("resource", _RESOURCE),
        ("scopeSpans", pa.list_(pa.struct([("scope", _SCOPE), ("spans", pa.list_(_SPAN)), ("schemaUrl", _S)]))),
        ("schemaUrl", _S),
    ]))),
])  # fmt: skip
"""One JSON line = one ``TracesData`` / ``ExportTraceServiceRequest`` object; strict (no other fields or types)."""

# --- output schemas -------------------------------------------------------------------------------
_STRS = pa.list_(_S)
SPANS_SCHEMA = pa.schema([
    ("trace_id", _S), ("span_id", _S), ("parent_span_id", _S), ("name", _S), ("kind", _S), ("service", _S),
    ("scope", _S), ("start_ns", _I64), ("end_ns", _I64), ("duration_ms", pa.float64()), ("status_code", _S),
    ("status_message", _S), ("attributes", _S), ("resource", _S), ("events", _S), ("warnings", _STRS),
    ("source", _S), ("ingested_at", pa.timestamp("us")),
])  # fmt: skip
"""Columns of the ``spans`` table, in insert order."""

_COMMON_DERIVED = [
    ("trace_id", _S), ("span_id", _S), ("start_ns", _I64), ("end_ns", _I64), ("latency_ms", pa.float64()),
    ("service", _S), ("status_code", _S),
]  # fmt: skip


DERIVED_TABLES: dict[str, tuple[str, pa.Schema]] = {
    name: (table, pa.schema(_COMMON_DERIVED + [(f.name, arrow_type(str(f.type))) for f in fields(cls)]))
    for name, table, cls in (
        (SPAN_RETRIEVE, "retrievals", RetrievalRow), (SPAN_WRITE, "writes", WriteRow), (SPAN_ANSWER, "answers", AnswerRow)
    )
}  # fmt: skip
"""Span name -> (derived table, its Arrow schema), from the record dataclasses (same as the warehouse's)."""

# expected value kinds of the TRACES.md attributes (records.derive_row coerces anything else, with a warning)
_STR, _INT, _DBL, _BOOL, _STRL, _DBLL, _SPANID = "str", "int", "dbl", "bool", "strs", "dbls", "spanid"
_COMMON = {"tenant_id": ("memory.tenant_id", _STR), "user_id": ("memory.user_id", _STR),
           "session_id": ("memory.session_id", _STR)}  # fmt: skip
_DERIVED_COLUMNS: dict[str, dict[str, tuple[str, str]]] = {
    SPAN_RETRIEVE: _COMMON | {
        "query": ("memory.query", _STR), "rewritten_query": ("memory.rewritten_query", _STR),
        "top_k": ("memory.top_k", _INT), "retrieved_count": ("memory.retrieved_count", _INT),
        "degraded": ("memory.degraded", _BOOL), "config_hash": ("memory.config_hash", _STR),
        "embedding_version": ("memory.embedding_version", _STR), "fusion": ("memory.fusion", _STR),
        "retrieved_ids": ("memory.retrieved_ids", _STRL), "retrieved_scores": ("memory.retrieved_scores", _DBLL),
        "retrieved_sources": ("memory.retrieved_sources", _STRL),
        "retrieved_contents": ("memory.retrieved_contents", _STRL),
    },
    SPAN_WRITE: _COMMON | {
        "memory_id": ("memory.id", _STR), "memory_type": ("memory.type", _STR),
        "outcome": ("memory.write_outcome", _STR), "reject_reason": ("memory.reject_reason", _STR),
        "importance": ("memory.importance", _DBL), "superseded_ids": ("memory.superseded_ids", _STRL),
        "config_hash": ("memory.config_hash", _STR), "embedding_version": ("memory.embedding_version", _STR),
        "content": ("memory.content", _STR),
    },
    SPAN_ANSWER: _COMMON | {
        "retrieve_span_id": ("memory.retrieve_span_id", _SPANID), "cited_ids": ("memory.cited_ids", _STRL),
        "answer_text": ("memory.answer_text", _STR),
    },
}  # fmt: skip

# value kinds (per attribute value or array element)
_K_NONE, _K_STR, _K_INT, _K_DBL, _K_BOOL, _K_ARR = 0, 1, 2, 3, 4, 5
_ALLOWED_KINDS = {_STR: (_K_NONE, _K_STR), _SPANID: (_K_NONE, _K_STR), _INT: (_K_NONE, _K_INT),
                  _DBL: (_K_NONE, _K_INT, _K_DBL), _BOOL: (_K_NONE, _K_BOOL), _STRL: (_K_NONE, _K_ARR),
                  _DBLL: (_K_NONE, _K_ARR)}  # fmt: skip

_NEEDS_PYTHON = re.compile(rb"null|\\u[dD][89abAB]")
"""Text the strict reader would read differently from orjson: explicit ``null`` (Arrow cannot tell it from a
missing field, the reference decoder can) and lone UTF-16 surrogate escapes (orjson rejects them)."""


def needs_python(line: bytes) -> bool:
    """True when a line must go to the reference decoder whatever the reader says (see :data:`_NEEDS_PYTHON`)."""
    return (b"null" in line or b"\\u" in line) and _NEEDS_PYTHON.search(line) is not None


def read_json_lines(
    texts: Sequence[bytes], *, use_threads: bool = True, joined: bytes | None = None, blocks: int = 4
) -> pa.Table | None:
    """Parse JSON lines with the strict :data:`OTLP_JSON_SCHEMA`; one row per line, or ``None``
    when pyarrow refuses any of them (the caller splits the chunk and retries). ``joined`` is
    ``b"\\n".join(texts)`` when the caller has it already. The text is cut into about ``blocks``
    blocks of at least 1 MiB that pyarrow parses in parallel; one block gives a one-chunk table
    that needs no copy to combine (better when other threads keep the cores busy)."""
    if not texts:
        return None
    buf = joined if joined is not None else b"\n".join(texts)
    longest = max(len(t) for t in texts)
    block = max(1 << 20, min(len(buf) // max(1, blocks) + 1, 64 << 20), longest + 16)
    try:
        tbl = pj.read_json(
            io.BytesIO(buf),
            read_options=pj.ReadOptions(use_threads=use_threads, block_size=block),
            parse_options=pj.ParseOptions(explicit_schema=OTLP_JSON_SCHEMA, unexpected_field_behavior="error"),
        )
    except (pa.ArrowException, ValueError, UnicodeDecodeError):
        return None
    return tbl if tbl.num_rows == len(texts) else None


# --- helpers over whole columns ---------------------------------------------------------------------
def _f(a: Any, name: str) -> Any:
    """A struct child with the parent's nulls applied (``StructArray.field`` ignores them)."""
    return pc.struct_field(a, name)


def _np_valid(a: pa.Array) -> np.ndarray:
    return np.asarray(a.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _np_bool(a: pa.Array) -> np.ndarray:
    return np.asarray(a.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def _parents(lst: pa.ListArray) -> tuple[pa.Array, np.ndarray]:
    """Flattened values of a list array and, per value, the index of its list."""
    values = lst.flatten()
    parent = pc.list_parent_indices(lst).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    if len(parent) != len(values):  # pragma: no cover - pyarrow invariant
        raise ValueError("list flatten/parent mismatch")
    return values, parent


def _offsets(parent: np.ndarray, n: int) -> pa.Array:
    counts = np.bincount(parent, minlength=n) if len(parent) else np.zeros(n, dtype=np.int64)
    off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    return pa.array(off, pa.int64())


def _any_per_parent(parent: np.ndarray, flags: np.ndarray, n: int) -> np.ndarray:
    if not len(parent) or not flags.any():
        return np.zeros(n, dtype=bool)
    return np.bincount(parent[flags], minlength=n) > 0


# JSON text is assembled, never concatenated pairwise: every output string is a run of "pieces" taken from a
# pool (constants, key prefixes, value texts) and joined by one ``binary_join`` over a list array.
_CONSTS = ("", ",", "{", "}", "[", "]", '"', "null", "true", "false", "{}", "[]", '{"name":', ',"time_ns":',
           ',"attributes":', ',"', '"]', '"}', '",', '","')  # fmt: skip
_C = {c: i for i, c in enumerate(_CONSTS)}


class _Pool:
    """Pieces for :func:`_assemble`: the constants, then added string arrays (``add`` returns their base index)."""

    def __init__(self) -> None:
        self.parts: list[pa.Array] = [pa.array(_CONSTS, _S)]
        self.size = len(_CONSTS)

    def add(self, arr: pa.Array) -> int:
        base = self.size
        self.parts.append(arr.cast(_S) if arr.type != _S else arr)
        self.size += len(arr)
        return base

    def array(self) -> pa.Array:
        return pa.concat_arrays(self.parts)


def _assemble(
    pool: pa.Array, n: int, owner: np.ndarray, pieces: Sequence[np.ndarray | int], head: int,
    tail: int | np.ndarray, empty: int,
) -> pa.Array:  # fmt: skip
    """Per owner ``0..n-1``: ``head + pieces of each of its items, in order + tail`` (``empty`` when it has none;
    ``tail`` is one index or one per owner).

    ``owner`` (sorted) gives each item's owner; ``pieces`` are k columns of pool indexes (arrays over the
    items, or one index for all of them).
    """
    m, k = len(owner), len(pieces)
    counts = np.bincount(owner, minlength=n) if m else np.zeros(n, dtype=np.int64)
    first_item = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=first_item[1:])
    has = counts > 0
    seg = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.where(has, 2 + k * counts, 1), out=seg[1:])
    idx = np.empty(int(seg[-1]), dtype=np.int64)
    starts = seg[:-1]
    idx[starts[~has]] = empty
    idx[starts[has]] = head
    idx[seg[1:][has] - 1] = tail if isinstance(tail, int) else tail[has]
    if m:
        base = starts[owner] + 1 + k * (np.arange(m, dtype=np.int64) - first_item[owner])
        for t, col in enumerate(pieces):
            idx[base + t] = col
    taken = pool.take(pa.array(idx))
    if taken.null_count or taken.type != _S:  # pragma: no cover - pools hold no nulls; the general join
        return pc.binary_join(pa.LargeListArray.from_arrays(pa.array(seg, pa.int64()), taken), "")
    # ``take`` writes the pieces back to back in order, so each owner's text is already one run of the taken
    # data buffer: only the offsets change (this saves copying every byte a second time in ``binary_join``).
    _, off_buf, data_buf = taken.buffers()
    off = np.frombuffer(off_buf, dtype=np.int32)[taken.offset : taken.offset + len(taken) + 1]
    return pa.StringArray.from_buffers(n, pa.py_buffer(np.ascontiguousarray(off[seg])), data_buf)


def _first_items(owner: np.ndarray) -> np.ndarray:
    """True for the first item of each owner (``owner`` sorted)."""
    first = np.zeros(len(owner), dtype=bool)
    if len(owner):
        first[0] = True
        first[1:] = owner[1:] != owner[:-1]
    return first


def _quoted_runs(owner: np.ndarray, is_s: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For items of sorted ``owner`` whose value is a quoted string when ``is_s``: (first item of its owner,
    previous item of the same owner is a string, last item of each of the ``n`` owners is a string).

    The closing quote of a string travels with the next piece (separator or tail) instead of being a piece
    of its own: a third fewer pieces to gather.
    """
    first = _first_items(owner)
    prev_s = np.zeros(len(owner), dtype=bool)
    prev_s[1:] = is_s[:-1]
    prev_s &= ~first
    last_s = np.zeros(n, dtype=bool)
    if len(owner):
        last = np.ones(len(owner), dtype=bool)
        last[:-1] = owner[1:] != owner[:-1]
        last_s[owner[last]] = is_s[last]
    return first, prev_s, last_s


def _separators(owner: np.ndarray) -> np.ndarray:
    """Pool index of ``""`` for the first item of each owner and ``","`` for the others."""
    return np.where(_first_items(owner), _C[""], _C[","]).astype(np.int64)


_ESCAPE = r"[\x00-\x1f\"\\]"


def _escaped(s: pa.Array, may_escape: bool) -> pa.Array:
    """String contents ready to sit between quotes in JSON (orjson escapes the few that need it).

    ``may_escape`` False promises no string needs escaping: a JSON text without a backslash cannot hold
    a quote, a backslash or a control character inside a string.
    """
    if not may_escape or not len(s):
        return s
    need = _np_bool(pc.match_substring_regex(s, _ESCAPE))
    if not need.any():
        return s
    idx = np.nonzero(need)[0]
    esc = [orjson.dumps(x).decode()[1:-1] for x in s.take(pa.array(idx)).to_pylist()]
    return pc.replace_with_mask(s, pa.array(need), pa.array(esc, _S))


def _double_text(d: pa.Array) -> pa.Array:
    """Shortest round-trip text of doubles, with ``.0`` on integral values as orjson writes them."""
    t = pc.cast(d, _S)
    integral = pc.match_substring_regex(t, r"^-?[0-9]+$")
    return pc.if_else(integral, pc.binary_join_element_wise(t, pa.scalar(".0"), ""), t)


_INT_RE = r"^-?[0-9]{1,18}$"


@dataclass
class _Values:
    """Decoded OTLP ``AnyValue`` structs (attribute values or array elements), one entry each."""

    kind: np.ndarray  # int8 _K_*
    bad: np.ndarray  # bool: not one well-typed value (the reference decoder would warn)
    s: pa.Array  # string (stringValue or bytesValue), unescaped
    i: pa.Array  # int64
    d: pa.Array  # float64
    b: pa.Array  # bool


def _scalars(st: pa.Array, extra_valid: np.ndarray | None = None) -> _Values:
    sv, iv, dv, bv, by = (_f(st, k) for k, _ in _SCALAR_FIELDS)
    v_s, v_i, v_d, v_b, v_by = (_np_valid(x) for x in (sv, iv, dv, bv, by))
    count = v_s.astype(np.int8) + v_i + v_d + v_b + v_by
    if extra_valid is not None:
        count = count + extra_valid
    bad = count > 1
    s = pc.coalesce(sv, by) if v_by.any() else sv
    if v_i.any():
        ok_i = pc.match_substring_regex(iv, _INT_RE)
        bad |= v_i & ~_np_bool(ok_i)
        i = pc.cast(pc.if_else(ok_i, iv, pa.scalar(None, _S)), _I64)
    else:
        i = pa.nulls(len(st), _I64)
    kind = np.zeros(len(st), dtype=np.int8)
    kind[v_b] = _K_BOOL
    kind[v_d] = _K_DBL
    kind[v_i] = _K_INT
    kind[v_s | v_by] = _K_STR
    return _Values(kind, bad, s, i, dv, bv)


def _value_pieces(pool: _Pool, v: _Values, may_escape: bool, arr_json: pa.Array | None = None) -> np.ndarray:
    """Pool index of each entry's value text (string contents without their quotes)."""
    m = len(v.kind)
    is_s = v.kind == _K_STR
    val = np.full(m, _C["null"], dtype=np.int64)
    if is_s.any():
        val[is_s] = pool.add(_escaped(v.s, may_escape)) + np.nonzero(is_s)[0]
    for kind, text in ((_K_INT, lambda sel: pc.cast(v.i.filter(sel), _S)),
                       (_K_DBL, lambda sel: _double_text(v.d.filter(sel)))):  # fmt: skip
        mask = v.kind == kind
        if mask.any():
            val[mask] = pool.add(text(pa.array(mask))) + np.arange(int(mask.sum()))
    is_b = v.kind == _K_BOOL
    if is_b.any():
        val[is_b] = np.where(_np_bool(v.b.filter(pa.array(is_b))), _C["true"], _C["false"])
    is_a = v.kind == _K_ARR
    if arr_json is not None and is_a.any():
        val[is_a] = pool.add(arr_json) + np.arange(int(is_a.sum()))
    return val


@dataclass
class _Attrs:
    """Decoded attribute lists of ``n`` owners (spans, events or resources)."""

    n: int
    parent: np.ndarray  # owner per key/value
    keys: list[str | None]  # distinct keys
    key_code: np.ndarray  # index into keys per key/value (-1 for a null key)
    vals: _Values
    arr_off: pa.Array  # array element offsets per key/value
    el: _Values | None  # array elements
    el_group: np.ndarray  # per key/value: bitwise or of element groups 1 strings, 2 numbers, 4 bools
    el_null: np.ndarray  # per key/value: some element is an empty value
    json: pa.Array  # per owner: the JSON object text
    bad: np.ndarray  # per owner: decoding it would give a warning


def _attrs(lst: pa.Array, n: int, may_escape: bool) -> _Attrs:
    kvs, parent = _parents(lst)
    m = len(kvs)
    key = _f(kvs, "key")
    value = _f(kvs, "value")
    arr = _f(value, "arrayValue")
    v_arr = _np_valid(arr)
    vals = _scalars(value, v_arr)
    bad = vals.bad | ~_np_valid(key)
    el_group = np.zeros(m, dtype=np.int8)
    el_null = np.zeros(m, dtype=bool)
    el = None
    arr_off = pa.array(np.zeros(m + 1, np.int64))
    arr_json = None
    if v_arr.any():
        vals.kind[v_arr] = _K_ARR
        elems, el_parent = _parents(_f(arr, "values"))
        el = _scalars(elems)
        arr_off = _offsets(el_parent, m)
        bad |= _any_per_parent(el_parent, el.bad, m)
        el_null = _any_per_parent(el_parent, el.kind == _K_NONE, m)
        for group, kinds in ((1, (_K_STR,)), (2, (_K_INT, _K_DBL)), (4, (_K_BOOL,))):
            el_group |= np.where(_any_per_parent(el_parent, np.isin(el.kind, kinds), m), group, 0).astype(np.int8)
        bad |= ~np.isin(el_group, (0, 1, 2, 4))  # mixed element types: the reference decoder warns
        # "[...]" per array value: owners are the array values only
        rank = np.cumsum(v_arr) - 1
        el_owner = rank[el_parent]
        epool = _Pool()
        is_s = el.kind == _K_STR
        n_arr = int(v_arr.sum())
        first, prev_s, last_s = _quoted_runs(el_owner, is_s, n_arr)
        # opening piece: the previous string's closing quote, separator and this string's opening quote together
        sep = np.where(prev_s, np.where(is_s, _C['","'], _C['",']), np.where(is_s, _C[',"'], _C[","]))
        opening = np.where(first, np.where(is_s, _C['"'], _C[""]), sep)
        epieces = [opening, _value_pieces(epool, el, may_escape)]
        tail = np.where(last_s, _C['"]'], _C["]"]).astype(np.int64)
        arr_json = _assemble(epool.array(), n_arr, el_owner, epieces, _C["["], tail, _C["[]"])
    enc = pc.dictionary_encode(key)
    keys = enc.dictionary.to_pylist()
    key_code = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    # a repeated key: the reference keeps the last value at the first position; rare, leave it to Python
    k = max(len(keys), 1)
    valid_key = key_code >= 0
    combo = (parent * k + key_code)[valid_key]
    if n * k <= 50_000_000:
        dup = (np.bincount(combo, minlength=n * k) > 1).reshape(n, k).any(axis=1)
    else:
        uniq, counts = np.unique(combo, return_counts=True)
        dup = np.zeros(n, dtype=bool)
        dup[uniq[counts > 1] // k] = True
    pool = _Pool()
    # per key: '"key":' after '{', ',' or '",' (the previous string's closing quote), with or without the
    # opening quote of a string value
    prefixes = []
    for kk in keys:
        p = orjson.dumps(kk).decode() + ":" if kk is not None else ":"
        prefixes += [p, p + '"', "," + p, "," + p + '"', '",' + p, '",' + p + '"']
    pbase = pool.add(pa.array(prefixes, _S)) if prefixes else 0
    is_s = vals.kind == _K_STR
    first, prev_s, last_s = _quoted_runs(parent, is_s, n)
    variant = is_s + np.where(first, 0, np.where(prev_s, 4, 2))
    prefix = np.where(valid_key, pbase + 6 * key_code + variant, _C[""])
    pieces = [prefix, _value_pieces(pool, vals, may_escape, arr_json)]
    tail = np.where(last_s, _C['"}'], _C["}"]).astype(np.int64)
    json = _assemble(pool.array(), n, parent, pieces, _C["{"], tail, _C["{}"])
    owner_bad = _any_per_parent(parent, bad, n) | dup
    return _Attrs(n, parent, keys, key_code, vals, arr_off, el, el_group, el_null, json, owner_bad)


def _scatter(values: pa.Array, pos: np.ndarray, owners: np.ndarray, n: int) -> pa.Array:
    """An array of ``n`` entries holding ``values[pos[j]]`` at ``owners[j]`` and null elsewhere."""
    idx = np.full(n, -1, dtype=np.int64)
    idx[owners] = pos
    return values.take(pa.array(idx, mask=idx < 0))


def _hex_id(a: pa.Array, ndigits: int) -> tuple[pa.Array, np.ndarray]:
    """Lowercase hex ids and a per-entry ok flag (right size, hex, not all zero)."""
    ok = _np_bool(pc.match_substring_regex(a, f"^[0-9a-fA-F]{{{ndigits}}}$"))
    ok &= ~_np_bool(pc.match_substring_regex(a, "^0+$"))
    return pc.utf8_lower(a), ok


_NS_MAX = "9223372036854775807"


def _ns(a: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """int64 nanoseconds from decimal strings and a per-entry ok flag (nulls are not ok)."""
    ok = pc.match_substring_regex(a, r"^[0-9]{1,19}$")
    ok = pc.and_(ok, pc.or_(pc.less(pc.utf8_length(a), 19), pc.less_equal(a, pa.scalar(_NS_MAX))))
    okn = _np_bool(ok)
    return pc.cast(pc.if_else(pa.array(okn), a, pa.scalar(None, _S)), _I64), okn


@dataclass
class FastChunk:
    """The clean spans of a chunk of JSON lines as Arrow tables, and what is left for the reference decoder.

    ``spans`` has :data:`SPANS_SCHEMA` columns plus ``_ord`` (line index in the chunk << 32 | span number in
    the line, for first-wins duplicate handling); ``derived`` maps a derived table name to its rows (plus
    ``_ord``); ``python_lines`` are 0-based chunk line indexes to decode whole; ``python_spans`` maps a line
    index to ``(resource_index, scope_index, span_index, span_number)`` of single spans to decode.
    """

    spans: pa.Table
    derived: dict[str, pa.Table]
    python_lines: list[int]
    python_spans: dict[int, list[tuple[int, int, int, int]]]


def decode_table(
    tbl: pa.Table, *, source: str, may_escape: bool = True, ingested_at: datetime | None = None
) -> FastChunk:
    """Compute warehouse rows from a table read by :func:`read_json_lines` (pure apart from the default
    ``ingested_at`` stamp, which is the current UTC time). ``may_escape`` False promises that the text
    held no backslash (so no string needs JSON escaping, which saves a scan of every string)."""
    now = ingested_at or datetime.now(UTC).replace(tzinfo=None)
    nrows = tbl.num_rows
    col = tbl.column("resourceSpans")
    rs_list = col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()  # combining copies every byte
    python_lines = np.nonzero(~_np_valid(rs_list))[0].tolist()  # no resourceSpans: the reference reports it
    rs, rs_row = _parents(rs_list)
    n_rs = len(rs)
    ss_list = _f(rs, "scopeSpans")
    ss, ss_rs = _parents(ss_list)
    sp_list = _f(ss, "spans")
    sp, sp_ss = _parents(sp_list)
    n = len(sp)
    sp_rs = ss_rs[sp_ss] if n else np.zeros(0, np.int64)
    row = rs_row[sp_rs] if n else np.zeros(0, np.int64)
    empty = FastChunk(SPANS_SCHEMA.empty_table().append_column("_ord", pa.array([], _I64)), {}, python_lines, {})
    if n == 0:
        return empty

    # resources: JSON text, service name, clean flag
    res = _attrs(_f(_f(rs, "resource"), "attributes"), n_rs, may_escape)
    service_rs = pa.nulls(n_rs, _S)
    if "service.name" in res.keys:
        code = res.keys.index("service.name")
        pos = np.nonzero((res.key_code == code) & (res.vals.kind == _K_STR))[0]
        service_rs = _scatter(res.vals.s, pos, res.parent[pos], n_rs)
    scope_name = _f(_f(ss, "scope"), "name")
    scope_ss = pc.if_else(pc.equal(scope_name, pa.scalar("")), pa.scalar(None, _S), scope_name)

    trace_id, ok = _hex_id(_f(sp, "traceId"), 32)
    span_id, ok_s = _hex_id(_f(sp, "spanId"), 16)
    ok &= ok_s
    parent_raw = _f(sp, "parentSpanId")
    no_parent = ~_np_valid(parent_raw) | _np_bool(pc.equal(parent_raw, pa.scalar("")))
    parent_id, ok_p = _hex_id(parent_raw, 16)
    ok &= no_parent | ok_p
    parent_id = pc.if_else(pa.array(no_parent), pa.scalar(None, _S), parent_id)
    name = _f(sp, "name")
    ok &= _np_valid(name)
    start_ns, ok_t = _ns(_f(sp, "startTimeUnixNano"))
    ok &= ok_t
    end_raw = _f(sp, "endTimeUnixNano")
    end_default = ~_np_valid(end_raw) | _np_bool(pc.is_in(end_raw, pa.array(["", "0"])))
    end_ns, ok_e = _ns(end_raw)
    ok &= end_default | ok_e
    end_ns = pc.if_else(pa.array(end_default), start_ns, end_ns)
    kind_i = _f(sp, "kind").fill_null(0).to_numpy(zero_copy_only=False)
    kind = pa.array(SPAN_KINDS).take(pa.array(np.where((kind_i >= 0) & (kind_i < len(SPAN_KINDS)), kind_i, 0)))
    status = _f(sp, "status")
    code_i = _f(status, "code").fill_null(0).to_numpy(zero_copy_only=False)
    status_code = pa.array(STATUS_CODES).take(
        pa.array(np.where((code_i >= 0) & (code_i < len(STATUS_CODES)), code_i, 0))
    )
    msg = _f(status, "message")
    status_message = pc.if_else(pc.equal(msg, pa.scalar("")), pa.scalar(None, _S), msg)

    attrs = _attrs(_f(sp, "attributes"), n, may_escape)
    ok &= ~attrs.bad
    ok &= ~res.bad[sp_rs]
    # OpenInference and OTel GenAI spans map onto retrieval/answer columns in Python (records.derive_row)
    oi = [c for c, k in enumerate(attrs.keys) if k is not None and (k.startswith(("retrieval.documents", "gen_ai."))
                                                                      or k == "openinference.span.kind")]  # fmt: skip
    if oi:
        ok &= ~_any_per_parent(attrs.parent, np.isin(attrs.key_code, oi), n)

    # events: [{"name", "time_ns", "attributes"}]
    ev_list = _f(sp, "events")
    evs, ev_parent = _parents(ev_list)
    if len(evs):
        n_ev = len(evs)
        ev_attrs = _attrs(_f(evs, "attributes"), n_ev, may_escape)
        t_raw = _f(evs, "timeUnixNano")
        t_ns, ok_et = _ns(t_raw)
        t_missing = ~_np_valid(t_raw)
        ev_ok = (ok_et | t_missing) & ~ev_attrs.bad
        ok &= ~_any_per_parent(ev_parent, ~ev_ok, n)
        t_txt = pc.cast(pc.if_else(pa.array(t_missing), pa.scalar(0, _I64), t_ns), _S)
        ev_name = _f(evs, "name")
        has_name = _np_valid(ev_name)
        pool = _Pool()
        name_base = pool.add(_escaped(ev_name, may_escape))
        t_base = pool.add(t_txt)
        a_base = pool.add(ev_attrs.json)
        seq = np.arange(n_ev, dtype=np.int64)
        quote = np.where(has_name, _C['"'], _C[""])
        pieces: list[np.ndarray | int] = [
            _separators(ev_parent), _C['{"name":'], quote, np.where(has_name, name_base + seq, _C["null"]), quote,
            _C[',"time_ns":'], t_base + seq, _C[',"attributes":'], a_base + seq, _C["}"],
        ]  # fmt: skip
        events = _assemble(pool.array(), n, ev_parent, pieces, _C["["], _C["]"], _C["[]"])
    else:
        events = pa.repeat(pa.scalar("[]"), n)

    # derived rows: per span name, each TRACES.md column from its attribute
    derived_cols: dict[str, tuple[np.ndarray, dict[str, pa.Array]]] = {}
    for span_name, wanted in _DERIVED_COLUMNS.items():
        is_name = _np_bool(pc.equal(name, pa.scalar(span_name)))
        if not is_name.any():
            continue
        out: dict[str, pa.Array] = {}
        schema = DERIVED_TABLES[span_name][1]
        for col, (key, want) in wanted.items():
            typ = schema.field(col).type
            if key not in attrs.keys:
                out[col] = pa.nulls(n, typ)
                continue
            code = attrs.keys.index(key)
            pos = np.nonzero((attrs.key_code == code) & is_name[attrs.parent])[0]
            owners = attrs.parent[pos]
            kinds = attrs.vals.kind[pos]
            wrong = ~np.isin(kinds, _ALLOWED_KINDS[want])
            if want in (_STRL, _DBLL):
                assert attrs.el_group is not None and attrs.el_null is not None
                grp = attrs.el_group[pos]
                wrong |= (kinds == _K_ARR) & (attrs.el_null[pos] | ~np.isin(grp, (0, 1) if want == _STRL else (0, 2)))
            if want == _SPANID:
                _, ok_id = _hex_id(attrs.vals.s.take(pa.array(pos)), 16)
                wrong |= (kinds == _K_STR) & ~ok_id
            ok[owners[wrong]] = False
            if want in (_STR, _SPANID):
                vals = attrs.vals.s if want == _STR else pc.utf8_lower(attrs.vals.s)
            elif want == _INT:
                vals = attrs.vals.i
                in32 = _np_bool(pc.and_(pc.greater_equal(vals, -(2**31)), pc.less(vals, 2**31)))
                ok[owners[(kinds == _K_INT) & ~in32[pos]]] = False  # int32 column: let the reference decoder decide
                vals = pc.cast(pc.if_else(pa.array(in32), vals, pa.scalar(None, _I64)), pa.int32())
            elif want == _DBL:
                vals = pc.coalesce(attrs.vals.d, pc.cast(attrs.vals.i, pa.float64()))
            elif want == _BOOL:
                vals = attrs.vals.b
            else:
                assert attrs.el is not None or not (kinds == _K_ARR).any()
                el = attrs.el
                if el is None:
                    vals = pa.nulls(len(attrs.vals.kind), typ)
                else:
                    inner = el.s if want == _STRL else pc.coalesce(el.d, pc.cast(el.i, pa.float64()))
                    vals = pa.LargeListArray.from_arrays(attrs.arr_off, inner, mask=pa.array(attrs.vals.kind != _K_ARR))
            out[col] = _scatter(vals, pos, owners, n).cast(typ)
        derived_cols[span_name] = (is_name, out)

    # assemble the clean spans
    ords = (row.astype(np.int64) << 32) | (np.arange(n, dtype=np.int64) - _first_index(row, nrows)[row])
    duration = pc.divide(pc.cast(pc.subtract(end_ns, start_ns), pa.float64()), pa.scalar(1e6))
    service = service_rs.take(pa.array(sp_rs))
    keep = np.nonzero(ok)[0]
    keep_a = pa.array(keep)
    cols: dict[str, pa.Array] = {
        "trace_id": trace_id, "span_id": span_id, "parent_span_id": parent_id, "name": name, "kind": kind,
        "service": service, "scope": scope_ss.take(pa.array(sp_ss)), "start_ns": start_ns, "end_ns": end_ns,
        "duration_ms": duration, "status_code": status_code, "status_message": status_message,
        "attributes": attrs.json, "resource": res.json.take(pa.array(sp_rs)), "events": events,
    }  # fmt: skip
    k = len(keep)
    everything = k == n
    arrays = [(cols[f.name] if everything else cols[f.name].take(keep_a)).cast(f.type)
              for f in SPANS_SCHEMA if f.name in cols]  # fmt: skip
    arrays += [pa.nulls(k, _STRS), pa.repeat(pa.scalar(source), k),
               pa.array(np.full(k, np.datetime64(now, "us")), pa.timestamp("us"))]  # fmt: skip
    spans = pa.Table.from_arrays(arrays, schema=SPANS_SCHEMA).append_column("_ord", pa.array(ords[keep], _I64))
    derived: dict[str, pa.Table] = {}
    for span_name, (is_name, out) in derived_cols.items():
        table, schema = DERIVED_TABLES[span_name]
        sel = pa.array(np.nonzero(is_name & ok)[0])
        if not len(sel):
            continue
        common = {"trace_id": trace_id, "span_id": span_id, "start_ns": start_ns, "end_ns": end_ns,
                  "latency_ms": duration, "service": service, "status_code": status_code}  # fmt: skip
        arrs = []
        for f in schema:
            if f.name in common:
                arrs.append(common[f.name].take(sel).cast(f.type))
            elif f.name == "origin":
                arrs.append(pa.repeat(pa.scalar("memwb"), len(sel)))
            else:
                arrs.append(out[f.name].take(sel))
        derived[table] = pa.Table.from_arrays(arrs, schema=schema).append_column(
            "_ord", pa.array(ords[np.asarray(sel)], _I64)
        )

    # the rest goes to the reference decoder, span by span
    python_spans: dict[int, list[tuple[int, int, int, int]]] = {}
    bad = np.nonzero(~ok)[0]
    if len(bad):
        rs_first = _first_index(rs_row, nrows)
        ss_first = _first_index(ss_rs, n_rs)
        sp_first = _first_index(sp_ss, len(ss))
        for j in bad.tolist():
            r = int(row[j])
            s_i = int(sp_ss[j])
            rs_i = int(sp_rs[j])
            python_spans.setdefault(r, []).append(
                (rs_i - int(rs_first[r]), s_i - int(ss_first[rs_i]), j - int(sp_first[s_i]), int(ords[j] & 0xFFFFFFFF))
            )
    return FastChunk(spans, derived, python_lines, python_spans)


def _first_index(parent: np.ndarray, n: int) -> np.ndarray:
    """For sorted ``parent`` ids: the index of each parent's first child."""
    counts = np.bincount(parent, minlength=n) if len(parent) else np.zeros(n, dtype=np.int64)
    return np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)


def to_schema(tbl: pa.Table, schema: pa.Schema) -> pa.Table:
    """``tbl`` with exactly the columns of ``schema`` (missing ones null), cast to its types."""
    arrays = [
        tbl.column(f.name).cast(f.type) if f.name in tbl.column_names else pa.nulls(tbl.num_rows, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


