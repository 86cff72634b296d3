"""Warehouse file: migrations, read-only opens, concurrency, evaluation runs and sweeps, span record round trips."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from memory_engine.errors import WarehouseError
from memory_engine.observability.ingest import decode_otlp_json, decode_otlp_proto
from memory_engine.observability.otlp_files import request_to_otlp_json
from memory_engine.observability.records import SPAN_KINDS, decode_readable_span
from memory_engine.observability.schema import SCHEMA_VERSION
from memory_engine.observability.warehouse import Warehouse

pytestmark = pytest.mark.integration


def test_schema_created_once_and_reopened(tmp_path):
    p = tmp_path / "w.duckdb"
    Warehouse(p).close()
    w = Warehouse(p)
    assert w.schema_version() == SCHEMA_VERSION
    assert w.fetchone("SELECT count(*) FROM schema_version")[0] == SCHEMA_VERSION
    w.close()
    ro = Warehouse(p, read_only=True)
    with pytest.raises(WarehouseError, match="read-only"):
        ro.record_ingest(source="x", received=1, stored=1, duplicate=0, rejected=0, warnings=0)
    ro.close()
    with pytest.raises(WarehouseError, match="no warehouse"):
        Warehouse(tmp_path / "missing.duckdb", read_only=True)


def test_v1_warehouse_migrates_keeping_its_rows(tmp_path):
    """A warehouse written by schema v1 (derived tables with primary keys) opens as the current version
    with every row kept, and re-ingesting the same file still adds nothing."""
    from memory_engine.observability.ingest import ingest_file
    from memory_engine.observability.schema import MIGRATIONS

    otlp_json_file = Path(__file__).resolve().parents[2] / "traces" / "memwb_sample.jsonl"
    p = tmp_path / "v1.duckdb"
    con = duckdb.connect(str(p))
    con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP)")
    con.execute(MIGRATIONS[0])
    con.execute("INSERT INTO schema_version VALUES (1, now()::TIMESTAMP)")
    con.close()
    ref = Warehouse(tmp_path / "ref.duckdb")
    ingest_file(ref, otlp_json_file)
    before = {t: ref.fetchone(f"SELECT count(*) FROM {t}")[0] for t in ("spans", "retrievals", "writes", "answers")}
    ref.close()
    con = duckdb.connect(str(p))  # v1 rows, written the way v1 code did (every table keyed)
    con.execute(f"ATTACH '{tmp_path / 'ref.duckdb'}' AS ref (READ_ONLY)")
    for t in ("spans", "retrievals", "writes", "answers"):
        con.execute(f"INSERT INTO {t} SELECT * FROM ref.{t}")
    con.close()
    w = Warehouse(p)
    assert w.schema_version() == SCHEMA_VERSION >= 2
    after = {t: w.fetchone(f"SELECT count(*) FROM {t}")[0] for t in before}
    assert after == before and before["retrievals"] > 0
    keys = w.fetchall(
        "SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' "
        "AND table_name IN ('spans', 'retrievals', 'writes', 'answers')"
    )
    assert keys == [("spans",)]
    assert ingest_file(w, otlp_json_file).ingested == 0
    assert {t: w.fetchone(f"SELECT count(*) FROM {t}")[0] for t in before} == before
    w.close()


def test_newer_schema_is_refused(tmp_path):
    p = tmp_path / "w.duckdb"
    Warehouse(p).close()
    con = duckdb.connect(str(p))
    con.execute("INSERT INTO schema_version VALUES (?, now()::TIMESTAMP)", [SCHEMA_VERSION + 1])
    con.close()
    with pytest.raises(WarehouseError, match="newer"):
        Warehouse(p)


def test_open_is_shared_per_process(tmp_path):
    a = Warehouse.open(tmp_path)
    try:
        assert Warehouse.open(tmp_path, read_only=True) is a
    finally:
        a.close()


def test_other_process_reads_on_demand_between_writer_batches(tmp_path):
    p = tmp_path / "w.duckdb"
    writer = Warehouse(p, hold=False)
    writer.record_ingest(source="t", received=1, stored=1, duplicate=0, rejected=0, warnings=0)
    code = (
        "import sys; from memory_engine.observability.warehouse import Warehouse; "
        f"w = Warehouse({str(p)!r}, read_only=True, hold=False); "
        "print(w.fetchone('SELECT count(*) FROM ingest_batches')[0])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=".")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


def test_readers_see_whole_batches_while_a_writer_writes(wh, tracer):
    from memory_engine.observability.synthetic import emit_write

    seen: list[tuple[int, int]] = []
    stop = threading.Event()

    def reader():  # one statement = one snapshot: a span and its derived row commit together
        while not stop.is_set():
            seen.append(wh.fetchone("SELECT (SELECT count(*) FROM spans), (SELECT count(*) FROM writes)"))

    t = threading.Thread(target=reader)
    t.start()
    for i in range(30):
        emit_write(tracer, at_ns=10**18 + i, user_id="u", memory_id=f"m{i}")
    stop.set()
    t.join()
    assert wh.count_spans() == 30 and seen
    assert all(a == b for a, b in seen), [x for x in seen if x[0] != x[1]][:3]


def test_eval_runs_and_sweep_trials(wh):
    t = datetime(2025, 6, 1, tzinfo=UTC)
    wh.save_eval_run("run-1", suite="golden", config={"retrieval": {"top_k": 5}}, config_hash="abc", git_commit="deadbeef",
                     started_at=t, finished_at=t, metrics={"recall@5": 0.8},
                     queries=[{"case_id": "c1", "query_id": "q1", "metrics": {"recall@5": 1.0}}])  # fmt: skip
    wh.save_eval_run("run-1", suite="golden", metrics={"recall@5": 0.9}, queries=[])  # replace
    runs = wh.list_eval_runs(suite="golden")
    assert len(runs) == 1 and runs[0]["metrics"] == {"recall@5": 0.9} and wh.eval_queries("run-1") == []
    wh.save_sweep_trial("sw", 0, params={"retrieval.floor": 0.4}, metrics={"mrr": 0.5}, duration_s=1.5, created_at=t)
    wh.save_sweep_trial("sw", 1, params={"retrieval.floor": 0.5}, metrics={"mrr": 0.6}, duration_s=1.2, created_at=t)
    trials = wh.list_sweep_trials("sw")
    assert [x["params"]["retrieval.floor"] for x in trials] == [0.4, 0.5] and trials[1]["created_at"].tzinfo is UTC
    assert wh.list_sweeps()[0]["trials"] == 2


@pytest.mark.unit
@pytest.mark.parametrize("kind", [SpanKind.INTERNAL, SpanKind.SERVER, SpanKind.CLIENT, SpanKind.PRODUCER, SpanKind.CONSUMER])
@pytest.mark.parametrize("code", [StatusCode.UNSET, StatusCode.OK, StatusCode.ERROR])
def test_sdk_proto_and_json_decoders_agree_for_every_enum(kind, code):
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    mem = InMemorySpanExporter()
    tp = TracerProvider(resource=Resource.create({"service.name": "svc"}))
    tp.add_span_processor(SimpleSpanProcessor(mem))
    with tp.get_tracer("sc").start_as_current_span("parent"):
        with tp.get_tracer("sc").start_as_current_span("child", kind=kind, attributes={
            "s": "x", "i": 3, "d": 0.5, "b": True, "ss": ["a", "b"], "ds": [1.5, 2.5]}) as sp:  # fmt: skip
            sp.add_event("ev", {"k": "v"})
            if code is not StatusCode.UNSET:
                sp.set_status(Status(code, "boom" if code is StatusCode.ERROR else None))
    spans = mem.get_finished_spans()
    req = encode_spans(spans)
    from_sdk = sorted((decode_readable_span(s) for s in spans), key=lambda r: r.span_id)
    from_proto = sorted(decode_otlp_proto(req).records, key=lambda r: r.span_id)
    from_json = sorted(decode_otlp_json(request_to_otlp_json(req)).records, key=lambda r: r.span_id)
    assert from_proto == from_json
    for a, b in zip(from_sdk, from_proto, strict=True):
        assert a.trace_id == b.trace_id and a.parent_span_id == b.parent_span_id
        assert (a.kind, a.status_code, a.status_message) == (b.kind, b.status_code, b.status_message)
        assert dict(a.attributes) == dict(b.attributes) and a.events == b.events
    child = next(r for r in from_sdk if r.name == "child")
    assert child.kind == kind.name and child.kind in SPAN_KINDS and child.status_code == code.name


def test_attach_exporters_exports_engine_spans(tmp_path):
    from types import SimpleNamespace

    from memory_engine.config import TracingSection
    from memory_engine.observability.synthetic import emit_write
    from memory_engine.observability.tracing import Tracing
    from memory_engine.workspace import attach_exporters

    eng = SimpleNamespace(config=SimpleNamespace(workspace=str(tmp_path), tracing=TracingSection()),
                          tracing=Tracing("memwb"))
    wh = Warehouse.open(tmp_path)
    attach_exporters(eng, wh)
    try:
        emit_write(eng.tracing.tracer, at_ns=10**18, user_id="u", memory_id="m1")
        eng.tracing.force_flush()
        assert wh.fetchone("SELECT memory_id, service FROM writes") == ("m1", "memwb")
        assert wh.ingestion_health().stored == 1
    finally:
        eng.tracing.shutdown()
        wh.close()
