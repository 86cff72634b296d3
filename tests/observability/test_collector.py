"""The OTLP/HTTP receiver, exercised with real POSTs to 127.0.0.1."""

from __future__ import annotations

import gzip

import orjson
import pytest
import requests
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memory_engine.observability.collector import CollectorServer
from memory_engine.observability.otlp_files import request_to_otlp_json
from memory_engine.observability.synthetic import emit_retrieve, emit_write

pytestmark = pytest.mark.integration
T0 = 1_750_000_000 * 10**9
PB = {"Content-Type": "application/x-protobuf"}
JS = {"Content-Type": "application/json"}


@pytest.fixture
def server(wh):
    srv = CollectorServer(wh, port=0, max_body_bytes=64 * 1024).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def request_pb() -> trace_service_pb2.ExportTraceServiceRequest:
    mem = InMemorySpanExporter()
    tp = TracerProvider(resource=Resource.create({"service.name": "agent-x"}))
    tp.add_span_processor(SimpleSpanProcessor(mem))
    t = tp.get_tracer("t")
    emit_write(t, at_ns=T0, user_id="u1", memory_id="m1")
    emit_retrieve(t, at_ns=T0 + 10**9, user_id="u1", ids=["m1"])
    return encode_spans(mem.get_finished_spans())


def test_protobuf_post_stores_spans(server, wh, request_pb):
    r = requests.post(server.url + "/v1/traces", data=request_pb.SerializeToString(), headers=PB, timeout=10)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-protobuf")
    resp = trace_service_pb2.ExportTraceServiceResponse.FromString(r.content)
    assert resp.partial_success.rejected_spans == 0
    assert wh.count_spans() == 2
    assert wh.fetchone("SELECT service FROM retrievals")[0] == "agent-x"


def test_json_and_gzip_posts_and_idempotence(server, wh, request_pb):
    body = orjson.dumps(request_to_otlp_json(request_pb))
    r = requests.post(server.url + "/v1/traces", data=body, headers=JS, timeout=10)
    assert r.status_code == 200 and r.json() == {}
    gz = requests.post(server.url + "/v1/traces", data=gzip.compress(request_pb.SerializeToString()),
                       headers={**PB, "Content-Encoding": "gzip"}, timeout=10)  # fmt: skip
    assert gz.status_code == 200
    assert wh.count_spans() == 2  # the same spans twice: nothing added
    h = requests.get(server.url + "/health", timeout=10).json()
    assert h["since_start"]["received"] == 4 and h["since_start"]["stored"] == 2 and h["since_start"]["duplicate"] == 2
    assert h["warehouse"]["spans"] == 2


def test_partial_success_names_rejected_spans(server, wh, request_pb):
    doc = request_to_otlp_json(request_pb)
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "abcd"
    r = requests.post(server.url + "/v1/traces", data=orjson.dumps(doc), headers=JS, timeout=10)
    assert r.status_code == 200
    ps = r.json()["partialSuccess"]
    assert ps["rejectedSpans"] == "1" and "trace id" in ps["errorMessage"]
    assert wh.count_spans() == 1
    assert wh.ingestion_health().rejected == 1


def test_malformed_bodies_get_400_in_the_request_encoding(server):
    r = requests.post(server.url + "/v1/traces", data=b"\xff\x00garbage", headers=PB, timeout=10)
    assert r.status_code == 400
    assert "protobuf" in status_pb2.Status.FromString(r.content).message
    r = requests.post(server.url + "/v1/traces", data=b"{not json", headers=JS, timeout=10)
    assert r.status_code == 400 and "malformed JSON" in r.json()["message"]
    r = requests.post(server.url + "/v1/traces", data=b"[1, 2]", headers=JS, timeout=10)
    assert r.status_code == 400
    r = requests.post(server.url + "/v1/traces", data=b"x", headers={**PB, "Content-Encoding": "gzip"}, timeout=10)
    assert r.status_code == 400 and "gzip" in status_pb2.Status.FromString(r.content).message
    r = requests.post(server.url + "/v1/traces", data=b"{}", headers={"Content-Type": "text/plain"}, timeout=10)
    assert r.status_code == 415
    assert requests.get(server.url + "/v1/traces", timeout=10).status_code == 405


def test_oversized_bodies_get_413(server):
    big = b"x" * (65 * 1024)
    r = requests.post(server.url + "/v1/traces", data=big, headers=PB, timeout=10)
    assert r.status_code == 413
    bomb = gzip.compress(b"\x00" * (2 * 1024 * 1024))  # small on the wire, 2 MB inflated
    r = requests.post(server.url + "/v1/traces", data=bomb, headers={**PB, "Content-Encoding": "gzip"}, timeout=10)
    assert r.status_code == 413
    assert requests.get(server.url + "/health", timeout=10).status_code == 200  # still serving


def test_metrics_and_logs_are_answered_as_not_stored(server, wh):
    logs = logs_service_pb2.ExportLogsServiceRequest()
    sl = logs.resource_logs.add().scope_logs.add()
    sl.log_records.add().body.string_value = "hello"
    r = requests.post(server.url + "/v1/logs", data=logs.SerializeToString(), headers=PB, timeout=10)
    assert r.status_code == 200
    resp = logs_service_pb2.ExportLogsServiceResponse.FromString(r.content)
    assert resp.partial_success.rejected_log_records == 1 and "not stored" in resp.partial_success.error_message
    r = requests.post(server.url + "/v1/metrics", data=b'{"resourceMetrics": []}', headers=JS, timeout=10)
    assert r.status_code == 200 and "not stored" in r.json()["partialSuccess"]["errorMessage"]
    assert wh.count_spans() == 0


def test_the_standard_otlp_exporter_talks_to_the_receiver(server, wh):
    tp = TracerProvider(resource=Resource.create({"service.name": "sdk-client"}))
    tp.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=server.url + "/v1/traces")))
    emit_write(tp.get_tracer("c"), at_ns=T0, user_id="u7", memory_id="m7")
    tp.shutdown()
    assert wh.fetchone("SELECT memory_id, service FROM writes") == ("m7", "sdk-client")
