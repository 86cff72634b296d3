"""OTLP/HTTP receiver: ``POST /v1/traces`` into the warehouse.

Implements the OTLP/HTTP server side (opentelemetry-proto spec, "OTLP/HTTP"):

* ``POST /v1/traces`` with ``Content-Type: application/x-protobuf`` or
  ``application/json``, optionally ``Content-Encoding: gzip``; the response
  uses the request's encoding: an ``ExportTraceServiceResponse`` whose
  ``partial_success`` names the rejected spans and why (HTTP 200);
* ``POST /v1/metrics`` and ``/v1/logs`` are accepted and answered with a
  partial success saying nothing was stored (memwb keeps traces only), so an
  exporter sending all signals does not fail;
* a malformed body gets 400, an unknown content type 415, a body over
  ``max_body_bytes`` (compressed or after decompression) 413, each with a
  ``google.rpc.Status`` message in the request's encoding - never a crash;
* ``GET /health`` returns the ingestion counters (received, stored,
  duplicate, rejected, orphaned parents...) as JSON.

The receiver is the warehouse's writer process (see :mod:`.warehouse`);
requests run in Starlette's thread pool, each thread on its own connection.
"""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import orjson
import uvicorn
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import WarehouseError
from .ingest import _Decoded, decode_otlp_json, decode_otlp_proto
from .warehouse import Warehouse

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest accepted body in bytes, before and after gzip decompression."""


class _BodyError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class CollectorCounters:
    """In-memory counters since the receiver started (the warehouse keeps the persistent ones)."""

    requests: int = 0
    received: int = 0
    stored: int = 0
    duplicate: int = 0
    rejected: int = 0
    bad_requests: int = 0
    other_signals: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "lock"}


def _encoding(request: Request) -> str | None:
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == PROTOBUF:
        return PROTOBUF
    if ctype == JSON:
        return JSON
    return None


async def _read_body(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise _BodyError(413, f"body of {declared} bytes exceeds the {max_bytes}-byte limit")
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise _BodyError(413, f"body exceeds the {max_bytes}-byte limit")
        chunks.append(chunk)
    body = b"".join(chunks)
    enc = request.headers.get("content-encoding", "").strip().lower()
    if enc in ("", "identity"):
        return body
    if enc != "gzip":
        raise _BodyError(415, f"unsupported Content-Encoding {enc!r} (gzip or identity)")
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(body, max_bytes + 1)
    except zlib.error as e:
        raise _BodyError(400, f"invalid gzip body: {e}") from e
    if len(out) > max_bytes or d.unconsumed_tail:
        raise _BodyError(413, f"decompressed body exceeds the {max_bytes}-byte limit")
    if not d.eof:
        raise _BodyError(400, "invalid gzip body: truncated stream")
    return out


def _status_response(status: int, message: str, encoding: str | None) -> Response:
    st = status_pb2.Status(code=3 if status == 400 else 0, message=message)
    if encoding == PROTOBUF:
        return Response(st.SerializeToString(), status_code=status, media_type=PROTOBUF)
    return Response(orjson.dumps({"code": st.code, "message": message}), status_code=status, media_type=JSON)


def _message_response(msg: Any, encoding: str) -> Response:
    if encoding == PROTOBUF:
        return Response(msg.SerializeToString(), status_code=200, media_type=PROTOBUF)
    return Response(
        orjson.dumps(json_format.MessageToDict(msg)), status_code=200, media_type=JSON
    )


def create_app(
    warehouse: Warehouse,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    counters: CollectorCounters | None = None,
) -> Starlette:
    """The Starlette application of the receiver (used by :class:`CollectorServer`)."""
    c = counters or CollectorCounters()

    async def traces(request: Request) -> Response:
        encoding = _encoding(request)
        with c.lock:
            c.requests += 1
        if encoding is None:
            with c.lock:
                c.bad_requests += 1
            return _status_response(415, f"Content-Type must be {PROTOBUF} or {JSON}", JSON)
        try:
            body = await _read_body(request, max_body_bytes)
            dec = _decode_body(body, encoding)
        except _BodyError as e:
            with c.lock:
                c.bad_requests += 1
            return _status_response(e.status, e.message, encoding)
        from starlette.concurrency import run_in_threadpool

        try:
            res = await run_in_threadpool(_store, warehouse, dec)
        except WarehouseError as e:
            return _status_response(503, f"warehouse unavailable: {e}", encoding)
        rejected = dec.rejected + res.rejected
        with c.lock:
            c.received += len(dec.records) + dec.rejected
            c.stored += res.stored
            c.duplicate += res.duplicate
            c.rejected += rejected
        resp = trace_service_pb2.ExportTraceServiceResponse()
        if rejected or dec.malformed:
            # OTLP partial success: the valid spans are stored, the rest named (a 4xx/5xx would make the
            # client drop or resend the whole batch)
            reasons = "; ".join([str(p.reason) for p in dec.problems[:5]] + list(res.reasons[:5]))
            resp.partial_success.rejected_spans = rejected
            what = f"{rejected} span(s) rejected"
            if dec.malformed:
                what += f", {dec.malformed} malformed part(s) skipped"
            resp.partial_success.error_message = f"{what}: {reasons}"
        return _message_response(resp, encoding)

    def other_signal(kind: str) -> Any:
        signals: dict[str, tuple[Any, Any]] = {
            "metrics": (metrics_service_pb2.ExportMetricsServiceRequest, metrics_service_pb2.ExportMetricsServiceResponse),
            "logs": (logs_service_pb2.ExportLogsServiceRequest, logs_service_pb2.ExportLogsServiceResponse),
        }
        req_cls, resp_cls = signals[kind]

        async def handler(request: Request) -> Response:
            encoding = _encoding(request)
            with c.lock:
                c.requests += 1
                c.other_signals += 1
            if encoding is None:
                return _status_response(415, f"Content-Type must be {PROTOBUF} or {JSON}", JSON)
            try:
                body = await _read_body(request, max_body_bytes)
                msg = req_cls()
                if encoding == PROTOBUF:
                    msg.ParseFromString(body)
                else:
                    json_format.Parse(body.decode("utf-8"), msg, ignore_unknown_fields=True)
            except _BodyError as e:
                return _status_response(e.status, e.message, encoding)
            except (DecodeError, json_format.ParseError, UnicodeDecodeError, ValueError) as e:
                return _status_response(400, f"malformed {kind} request: {e}", encoding)
            resp = resp_cls()
            n = _count_items(msg, kind)
            if kind == "metrics":
                resp.partial_success.rejected_data_points = n
            else:
                resp.partial_success.rejected_log_records = n
            resp.partial_success.error_message = f"not stored: memwb keeps traces only ({kind} ignored)"
            return _message_response(resp, encoding)

        return handler

    async def health(request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        wh_health = await run_in_threadpool(warehouse.ingestion_health)
        return JSONResponse({"since_start": c.snapshot(), "warehouse": asdict(wh_health)})

    app = Starlette(
        routes=[
            Route("/v1/traces", traces, methods=["POST"]),
            Route("/v1/metrics", other_signal("metrics"), methods=["POST"]),
            Route("/v1/logs", other_signal("logs"), methods=["POST"]),
            Route("/health", health, methods=["GET"]),
        ]
    )
    app.state.counters = c
    return app


def _count_items(msg: Any, kind: str) -> int:
    n = 0
    if kind == "logs":
        for rl in msg.resource_logs:
            for sl in rl.scope_logs:
                n += len(sl.log_records)
        return n
    for rm in msg.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                which = m.WhichOneof("data")
                if which:
                    n += len(getattr(m, which).data_points)
    return n


def _decode_body(body: bytes, encoding: str) -> _Decoded:
    if encoding == PROTOBUF:
        req = trace_service_pb2.ExportTraceServiceRequest()
        try:
            req.ParseFromString(body)
        except DecodeError as e:
            raise _BodyError(400, f"malformed protobuf ExportTraceServiceRequest: {e}") from e
        return decode_otlp_proto(req, source="http")
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise _BodyError(400, f"malformed JSON: {e}") from e
    if not isinstance(doc, dict) or ("resourceSpans" not in doc and doc):
        raise _BodyError(400, "JSON body is not an ExportTraceServiceRequest (no 'resourceSpans')")
    if not doc:
        return _Decoded()
    dec = decode_otlp_json(doc, source="http")
    if dec.malformed and not dec.records and not dec.rejected:
        raise _BodyError(400, "; ".join(p.reason for p in dec.problems[:3]))
    return dec


def _store(warehouse: Warehouse, dec: _Decoded) -> Any:
    res = warehouse.insert_spans(dec.records, source="http")
    warehouse.record_ingest(
        source="http", received=len(dec.records) + dec.rejected, stored=res.stored,
        duplicate=res.duplicate, rejected=dec.rejected + res.rejected, warnings=res.warnings,
    )  # fmt: skip
    return res


class CollectorServer:
    """Runs the receiver with uvicorn, in a background thread or in the foreground.

    ``port=0`` picks a free port (read :attr:`port` after :meth:`start`).
    """

    def __init__(
        self,
        warehouse: Warehouse,
        *,
        host: str = "127.0.0.1",
        port: int = 4318,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        log_level: str = "warning",
    ) -> None:
        self.counters = CollectorCounters()
        self.app = create_app(warehouse, max_body_bytes=max_body_bytes, counters=self.counters)
        self.host = host
        self._requested_port = port
        self.port = port
        self._server = uvicorn.Server(
            uvicorn.Config(self.app, host=host, port=port, log_level=log_level, lifespan="off", access_log=False)
        )
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout_s: float = 10.0) -> CollectorServer:
        """Start in a daemon thread and wait until it accepts connections."""
        self._thread = threading.Thread(target=self._server.run, name="memwb-collector", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"collector did not start on {self.host}:{self._requested_port}")
            time.sleep(0.02)
        servers = getattr(self._server, "servers", [])
        for srv in servers:
            for sock in srv.sockets:
                self.port = sock.getsockname()[1]
                break
        return self

    def serve(self) -> None:
        """Run in the foreground until interrupted."""
        self._server.run()

    def stop(self, timeout_s: float = 5.0) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout_s)


def gzip_bytes(data: bytes) -> bytes:
    """gzip ``data`` (helper for clients and tests)."""
    return gzip.compress(data)
