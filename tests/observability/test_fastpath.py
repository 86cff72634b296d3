"""The pyarrow fast path stores exactly what the Python reference decoder stores, on every sample file and on
a file of odd-but-legal and broken OTLP/JSON lines; the odd spans fall back span by span with file:line."""

from __future__ import annotations

import base64
from pathlib import Path

import orjson
import pytest
from _warehouse_rows import table_rows

from memory_engine.observability.fastpath import decode_table, needs_python, read_json_lines
from memory_engine.observability.ingest import ingest_file
from memory_engine.observability.warehouse import Warehouse

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
TID = "ab" * 16


def _kv(key: str, value: dict) -> dict:
    return {"key": key, "value": value}


def _s(v: str) -> dict:
    return {"stringValue": v}


def _arr(*vals: dict) -> dict:
    return {"arrayValue": {"values": list(vals)}}


def _span(n: int, name: str = "op", **extra) -> dict:
    sp = {"traceId": TID, "spanId": f"{n:016x}", "name": name, "kind": 1,
          "startTimeUnixNano": str(1_750_000_000_000_000_000 + n), "endTimeUnixNano": str(1_750_000_000_000_500_000 + n)}  # fmt: skip
    sp.update(extra)
    return sp


def _line(*spans: dict, resource: list | None = None, scope: dict | None = None) -> bytes:
    res = {"attributes": resource if resource is not None else [_kv("service.name", _s("svc"))]}
    ss: dict = {"spans": list(spans)}
    if scope is not None:
        ss["scope"] = scope
    return orjson.dumps({"resourceSpans": [{"resource": res, "scopeSpans": [ss]}]})


def _edge_lines() -> list[bytes]:
    """Spans the fast path must store as the reference does, and spans it must hand back."""
    retrieve = [
        _kv("memory.user_id", _s("u1")), _kv("memory.top_k", {"intValue": "5"}),
        _kv("memory.retrieved_ids", _arr(_s("m1"), _s("m2"))),
        _kv("memory.retrieved_scores", _arr({"doubleValue": 0.5}, {"intValue": "1"})),
        _kv("memory.degraded", {"boolValue": False}), _kv("memory.query", _s('say "hi"\n\tback\\slash é 中文')),
    ]  # fmt: skip
    clean = [
        _span(1, "memory.retrieve", attributes=retrieve, parentSpanId=""),
        _span(2, "memory.write", attributes=[_kv("memory.id", _s("m1")), _kv("memory.importance", {"intValue": "1"}),
                                              _kv("memory.superseded_ids", _arr())]),  # fmt: skip
        _span(3, "memory.answer", attributes=[_kv("memory.cited_ids", _arr(_s("m1"))),
                                               _kv("memory.retrieve_span_id", _s(f"{1:016X}"))]),  # fmt: skip
        _span(4, "plain", attributes=[_kv("d", {"doubleValue": 2.0}), _kv("big", {"doubleValue": 1e21}),
                                      _kv("neg", {"intValue": "-007"}), _kv("b", {"bytesValue": "AAE="}),
                                      _kv("empty", {}), _kv("e", _arr()), _kv("nums", _arr({"intValue": "1"}, {"doubleValue": 1.5}))],
              status={"code": 2, "message": "boom"}, kind=9,
              events=[{"name": "exception", "timeUnixNano": "17", "attributes": [_kv("exception.message", _s("x\ny"))]},
                      {"name": "no-time"}]),  # fmt: skip
        _span(5, "no-end", endTimeUnixNano="0", parentSpanId=f"{4:016x}"),
        _span(6, "upper", traceId="CD" * 16, spanId="EF" * 8),
    ]
    odd = [
        _span(10, "base64-ids", traceId=base64.b64encode(bytes.fromhex("12" * 16)).decode()),
        _span(11, "short-trace", traceId="ab" * 12),
        _span(12, "zero-parent", parentSpanId="0" * 16),
        _span(13, "mixed-array", attributes=[_kv("x", _arr(_s("a"), {"intValue": "1"}))]),
        _span(14, "dup-key", attributes=[_kv("k", _s("a")), _kv("k", _s("b"))]),
        _span(15, "memory.retrieve", attributes=[_kv("memory.top_k", _s("five"))]),
        _span(16, "memory.retrieve", attributes=[_kv("memory.retrieved_ids", _s("m1"))]),
        _span(17, "memory.answer", attributes=[_kv("memory.retrieve_span_id", _s("not-hex"))]),
        _span(18, "oi", attributes=[_kv("openinference.span.kind", _s("RETRIEVER")),
                                    _kv("retrieval.documents.0.document.id", _s("d0"))]),  # fmt: skip
        _span(19, "two-values", attributes=[_kv("x", {"stringValue": "a", "boolValue": True})]),
        _span(20, "bad-int", attributes=[_kv("x", {"intValue": "1_000"})]),
        _span(21, "memory.write", attributes=[_kv("memory.importance", _s("0.5"))]),
        _span(22, "event-bad-time", events=[{"name": "e", "timeUnixNano": "soon"}]),
    ]
    return [
        _line(*clean, scope={"name": "memwb"}),
        _line(*clean[:2], *odd, scope={"name": ""}),  # the same clean spans again: duplicates, first one wins
        _line(_span(30, "int-times", startTimeUnixNano=1, endTimeUnixNano=2)),  # numbers: pyarrow refuses the line
        _line(_span(31, "kvlist", attributes=[_kv("kv", {"kvlistValue": {"values": [_kv("a", _s("b"))]}})])),
        _line(_span(32, "null-value", attributes=[_kv("x", {"stringValue": None})])),
        _line(_span(33, "odd-resource"), resource=[_kv("service.name", {"intValue": "3"}), _kv("r", {"weird": 1})]),
        b'{"resourceSpans": [ truncated',
        b"",
        orjson.dumps({"resourceMetrics": []}),
        _line(_span(34, "kind-name", kind="SPAN_KIND_SERVER", status={"code": "STATUS_CODE_ERROR"})),
        _line(_span(35, "surrogate-pair")).replace(b"surrogate-pair", rb"\ud83d\ude00 pair"),
        _line(_span(36, "lone-surrogate")).replace(b"lone-surrogate", rb"lone \ud800"),
    ]


def _both(tmp_path: Path, f: Path, **kw) -> tuple[tuple, tuple, dict, dict]:
    a = Warehouse(tmp_path / "fast" / "w.duckdb")
    b = Warehouse(tmp_path / "ref" / "w.duckdb")
    sa = ingest_file(a, f, fast=True, **kw)
    sb = ingest_file(b, f, fast=False)
    ra, rb = table_rows(a), table_rows(b)
    a.close()
    b.close()
    key = lambda s: (s.received, s.ingested, s.duplicate, s.rejected, s.malformed, s.warnings,  # noqa: E731
                     [str(p) for p in s.problems])  # fmt: skip
    return key(sa), key(sb), ra, rb


def _sample_files() -> list[Path]:
    files = sorted((REPO / "traces").glob("*"))
    otel = REPO.parent / "shared" / "data" / "otel"
    if otel.is_dir():
        files += sorted(otel.iterdir())
    return files


@pytest.mark.parametrize("path", _sample_files(), ids=lambda p: p.name)
def test_fast_path_equals_reference_on_sample_files(tmp_path, path):
    sa, sb, ra, rb = _both(tmp_path, path)
    assert sa == sb
    assert ra == rb
    assert sa[1] > 0


def test_fast_path_equals_reference_on_odd_lines(tmp_path):
    f = tmp_path / "edge.jsonl"
    f.write_bytes(b"\n".join(_edge_lines()) + b"\n")
    sa, sb, ra, rb = _both(tmp_path, f)
    assert sa == sb
    assert ra == rb
    received, ingested, duplicate, rejected, malformed, warnings, problems = sa
    assert (received, ingested, duplicate, rejected, malformed) == (27, 24, 2, 1, 3) and warnings >= 5
    assert [p.split(":")[1] for p in problems] == ["2", "7", "9", "12"]  # file order, 1-based lines
    assert problems[0].startswith("edge.jsonl:2: span 'short-trace' rejected") and "surrogate" in problems[3]
    names = {r["name"] for r in ra["spans"]}
    assert {"base64-ids", "int-times", "kvlist", "null-value", "kind-name", "\U0001f600 pair", "upper"} <= names


@pytest.mark.parametrize("commit_spans", [1, 10_000])
def test_small_chunks_split_refused_lines_and_keep_order(tmp_path, commit_spans):
    """Chunks of a few lines: refused lines are isolated by halving; results do not depend on the chunking
    nor on how many chunks share a transaction."""
    f = tmp_path / "edge.jsonl"
    f.write_bytes(b"\n".join(_edge_lines() * 3) + b"\n")
    sa, sb, ra, rb = _both(tmp_path, f, chunk_bytes=2000, commit_spans=commit_spans)
    assert sa == sb
    assert ra == rb


def test_clean_spans_stay_on_the_fast_path():
    lines = _edge_lines()
    assert not needs_python(lines[0]) and needs_python(lines[4])
    tbl = read_json_lines([lines[0], lines[1]])
    assert tbl is not None and read_json_lines([lines[2]]) is None  # integer times: refused, Python decodes
    fc = decode_table(tbl, source="t")
    assert fc.spans.num_rows == 6 + 2  # every clean span of both lines, duplicates removed later
    assert fc.python_lines == [] and sorted(fc.python_spans) == [1]
    assert [p[2] for p in fc.python_spans[1]] == list(range(2, 2 + 13))  # each odd span by position
    assert fc.derived["retrievals"].column("top_k").to_pylist() == [5, 5]


def test_ingest_puts_duckdb_threads_back(tmp_path):
    """The inserter runs DuckDB on one thread while its transaction is open (the decode workers use the
    other core); the database's own setting is restored afterwards, also when the ingest stores nothing new."""
    f = tmp_path / "edge.jsonl"
    f.write_bytes(b"\n".join(_edge_lines()) + b"\n")
    wh = Warehouse(tmp_path / "w" / "w.duckdb")
    with wh.connection() as con:
        con.execute("SET threads = 3")
    for _ in range(2):
        s = ingest_file(wh, f)
        with wh.connection() as con:
            assert con.execute("SELECT current_setting('threads')").fetchone()[0] == 3
    assert s.ingested == 0 and s.duplicate > 0
    wh.close()
