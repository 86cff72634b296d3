"""OTLP file ingest: JSON vs protobuf, idempotence, broken lines, bad ids, public files, fast vs reference path."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest
from _warehouse_rows import table_rows
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from memory_engine.observability.ingest import ingest_file
from memory_engine.observability.otlp_files import OTLPFileSpanExporter
from memory_engine.observability.synthetic import emit_workload
from memory_engine.observability.warehouse import Warehouse

pytestmark = pytest.mark.integration
T0 = 1_750_000_000 * 10**9


@pytest.fixture(scope="module")
def otlp_files(tmp_path_factory) -> dict[str, Path]:
    """The same engine-shaped spans written once as OTLP JSON lines and once as length-prefixed protobuf."""
    d = tmp_path_factory.mktemp("otlp")
    files = {"json": d / "spans.jsonl", "proto": d / "spans.pb"}
    tp = TracerProvider(resource=Resource.create({"service.name": "memwb"}))
    tp.add_span_processor(SimpleSpanProcessor(OTLPFileSpanExporter(files["json"], "json")))
    tp.add_span_processor(SimpleSpanProcessor(OTLPFileSpanExporter(files["proto"], "proto")))
    emit_workload(tp.get_tracer("memwb"), start_ns=T0, days=2, users=2, seed=3)
    tp.shutdown()
    return files


def _fresh(tmp_path: Path, name: str) -> Warehouse:
    return Warehouse(tmp_path / name / "warehouse.duckdb")


def test_json_and_protobuf_files_give_the_same_rows(tmp_path, otlp_files):
    a, b = _fresh(tmp_path, "a"), _fresh(tmp_path, "b")
    sa = ingest_file(a, otlp_files["json"])
    sb = ingest_file(b, otlp_files["proto"])
    assert sa.ingested == sb.ingested > 30
    assert sa.ok and sb.ok
    ra, rb = table_rows(a), table_rows(b)
    assert {t: len(v) for t, v in ra.items()} == {t: len(v) for t, v in rb.items()}
    assert ra == rb


def test_fast_path_and_reference_decoder_agree(tmp_path, otlp_files):
    a, b = _fresh(tmp_path, "fast"), _fresh(tmp_path, "ref")
    ingest_file(a, otlp_files["json"], fast=True)
    ingest_file(b, otlp_files["json"], fast=False)
    assert table_rows(a) == table_rows(b)


def test_reingest_adds_nothing(wh, otlp_files):
    first = ingest_file(wh, otlp_files["json"])
    n = wh.count_spans()
    again = ingest_file(wh, otlp_files["json"])
    other = ingest_file(wh, otlp_files["proto"])
    assert wh.count_spans() == n == first.ingested
    assert again.ingested == 0 and again.duplicate == first.received
    assert other.ingested == 0 and other.duplicate == first.received
    derived = _derived_counts(wh)
    assert sum(derived.values()) > 10 and derived == _derived_counts(wh, distinct=True)


def _derived_counts(wh: Warehouse, *, distinct: bool = False) -> dict[str, int]:
    what = "count(DISTINCT (trace_id, span_id))" if distinct else "count(*)"
    return {t: wh.fetchone(f"SELECT {what} FROM {t}")[0] for t in ("retrievals", "writes", "answers")}


@pytest.mark.parametrize("fast", [True, False])
def test_overlapping_files_store_each_derived_row_once(tmp_path, otlp_files, fast):
    """Derived rows have no key of their own (schema v2): they follow their span's fate. A file that
    repeats half of another (and repeats spans within itself) adds only the new spans' derived rows."""
    lines = otlp_files["json"].read_bytes().splitlines()
    half = len(lines) // 2
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(b"\n".join(lines[:half]) + b"\n")
    second.write_bytes(b"\n".join(lines[half // 2 :] + lines[half : half + 3]) + b"\n")  # overlap + repeats
    whole = _fresh(tmp_path, "whole")
    ingest_file(whole, otlp_files["json"], fast=fast)
    parts = _fresh(tmp_path, "parts")
    a = ingest_file(parts, first, fast=fast)
    b = ingest_file(parts, second, chunk_bytes=4096, fast=fast)  # several chunks: repeats cross transactions
    assert a.ingested > 0 and b.ingested > 0 and b.duplicate > 0
    assert a.ingested + b.ingested == whole.count_spans()
    assert _derived_counts(parts) == _derived_counts(parts, distinct=True) == _derived_counts(whole)
    assert table_rows(parts) == table_rows(whole)


def _span(trace: str, span: str, name: str = "s", **extra) -> dict:
    return {"traceId": trace, "spanId": span, "name": name, "startTimeUnixNano": "1000", "endTimeUnixNano": "2000",
            **extra}  # fmt: skip


def _doc(*spans: dict) -> dict:
    return {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "x"}}]},
                               "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]}  # fmt: skip


@pytest.mark.parametrize("fast", [True, False])
def test_broken_lines_keep_the_good_ones(wh, tmp_path, fast):
    good1 = _doc(_span("0" * 31 + "1", "0" * 15 + "1"))
    good2 = _doc(_span("0" * 31 + "2", "0" * 15 + "2"), _span("0" * 31 + "2", "0" * 15 + "3", parentSpanId="0" * 15 + "2"))
    lines = [orjson.dumps(good1), b'{"resourceSpans": [ truncated', b"", orjson.dumps(good2), b"not json at all",
             orjson.dumps({"resourceMetrics": []})]  # fmt: skip
    f = tmp_path / "broken.jsonl"
    f.write_bytes(b"\n".join(lines) + b"\n")
    s = ingest_file(wh, f, fast=fast)
    assert (s.ingested, s.duplicate, s.rejected, s.malformed) == (3, 0, 0, 3)
    assert [p.line for p in s.problems] == [2, 5, 6]
    assert all(p.source == "broken.jsonl" and p.kind == "malformed" for p in s.problems)
    assert "invalid JSON" in s.problems[0].reason and "metrics/logs" in s.problems[2].reason
    assert str(s.problems[0]).startswith("broken.jsonl:2:")
    assert wh.count_spans() == 3


def test_bad_ids_are_rejected_with_reason_and_the_rest_ingests(wh, tmp_path):
    doc = _doc(
        _span("ab" * 12, "0" * 15 + "1", name="short-trace"),       # 12 bytes
        _span("ab" * 16, "cd" * 4, name="short-span"),               # 4 bytes
        _span("0" * 32, "cd" * 8, name="zero-trace"),                # all zero: invalid
        _span("q83vEjRWeJCrze8SNFZ4kA==", "3q2+7wEjRWc=", name="base64-ok"),  # protojson base64 ids
        _span("AB" * 16, "CD" * 8, name="upper-hex-ok"),
    )
    f = tmp_path / "ids.json"
    f.write_bytes(orjson.dumps(doc))
    s = ingest_file(wh, f)
    assert (s.received, s.ingested, s.rejected) == (5, 2, 3)
    reasons = {p.span_name: p.reason for p in s.problems}
    assert "not 16 bytes" in reasons["short-trace"] and "12 bytes" in reasons["short-trace"]
    assert "not 8 bytes" in reasons["short-span"]
    assert "all zero" in reasons["zero-trace"]
    ids = dict(wh.fetchall("SELECT name, trace_id FROM spans"))
    assert ids["base64-ok"] == "abcdef1234567890abcdef1234567890"
    assert ids["upper-hex-ok"] == "ab" * 16


def test_odd_attributes_are_kept_raw_with_warnings(wh, tmp_path):
    attrs = [
        {"key": "ok", "value": {"intValue": "7"}},
        {"key": "weird", "value": {"mysteryValue": 1}},
        {"key": "stringy-number", "value": {"stringValue": 5}},
        {"key": "memory.top_k", "value": {"stringValue": "five"}},
        {"key": "memory.retrieved_ids", "value": {"arrayValue": {"values": [{"stringValue": "m1"}]}}},
    ]
    doc = _doc(_span("ab" * 16, "cd" * 8, name="memory.retrieve", attributes=attrs))
    f = tmp_path / "odd.jsonl"
    f.write_bytes(orjson.dumps(doc) + b"\n")
    s = ingest_file(wh, f)
    assert s.ingested == 1 and s.rejected == 0
    assert s.warnings == 3
    a = orjson.loads(wh.fetchone("SELECT attributes FROM spans")[0])
    assert a["ok"] == 7 and a["weird"] == {"mysteryValue": 1} and a["stringy-number"] == {"stringValue": 5}
    r = wh.fetch_dicts("SELECT top_k, retrieved_ids FROM retrievals")[0]
    assert r == {"top_k": None, "retrieved_ids": ["m1"]}
    assert len(wh.fetchone("SELECT warnings FROM spans")[0]) == 3


def test_openinference_retriever_span_maps_onto_retrieval_columns(wh, tmp_path):
    attrs = [{"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
             {"key": "input.value", "value": {"stringValue": "where do I live?"}},
             {"key": "user.id", "value": {"stringValue": "u9"}}]  # fmt: skip
    for i, (did, score) in enumerate([("doc-a", 0.9), ("doc-b", 0.4)]):
        attrs += [{"key": f"retrieval.documents.{i}.document.id", "value": {"stringValue": did}},
                  {"key": f"retrieval.documents.{i}.document.score", "value": {"doubleValue": score}},
                  {"key": f"retrieval.documents.{i}.document.content", "value": {"stringValue": f"text {did}"}}]  # fmt: skip
    f = tmp_path / "oi.json"
    f.write_bytes(orjson.dumps(_doc(_span("ab" * 16, "cd" * 8, name="retrieve", attributes=attrs))))
    assert ingest_file(wh, f).ingested == 1
    r = wh.fetch_dicts("SELECT * FROM retrievals")[0]
    assert r["origin"] == "openinference" and r["user_id"] == "u9" and r["query"] == "where do I live?"
    assert r["retrieved_ids"] == ["doc-a", "doc-b"] and r["retrieved_scores"] == [0.9, 0.4]
    assert r["retrieved_contents"] == ["text doc-a", "text doc-b"] and r["retrieved_count"] == 2


def test_gzip_and_single_document_files(wh, tmp_path, otlp_files):
    gz = tmp_path / "spans.jsonl.gz"
    gz.write_bytes(gzip.compress(otlp_files["json"].read_bytes()))
    assert ingest_file(wh, gz).ingested > 30
    pretty = tmp_path / "pretty.json"
    pretty.write_text(orjson.dumps(_doc(_span("ef" * 16, "12" * 8)), option=orjson.OPT_INDENT_2).decode())
    assert ingest_file(wh, pretty).ingested == 1


def test_public_trace_files_ingest_without_error(wh, otel_data):
    seen = {}
    for f in sorted(otel_data.iterdir()):
        s = ingest_file(wh, f)
        assert s.rejected == 0 and s.malformed == 0, s.problems
        seen[f.name] = s
    assert seen["otelproto_examples_trace.json"].ingested == 1
    assert seen["jaeger_otlp2jaeger-in.json"].received == 2
    assert seen["jaeger_otlp2jaeger-in.json"].ingested == 1  # two identical spans: one is a duplicate
    assert seen["open-agent-traces_collector_fileexporter.jsonl"].ingested == 2
    svc = dict(wh.fetchall("SELECT name, service FROM spans"))
    assert svc["I'm a server span"] == "my.service" and svc["test_span"] == "Agento-Module-1"
    h = wh.ingestion_health()
    assert h.spans == 4 and h.orphaned_parents == 2  # both single-span fixtures point at absent parents


def test_progress_callback_sees_every_byte(wh, otlp_files):
    seen = []
    ingest_file(wh, otlp_files["json"], progress=seen.append)
    assert sum(seen) == otlp_files["json"].stat().st_size
