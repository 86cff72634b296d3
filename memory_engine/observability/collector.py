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

**Exposure.** With ``api_keys`` every ``/v1`` request needs ``Authorization:
Bearer <key>`` or ``X-API-Key: <key>`` (401 otherwise; keys are held as
SHA-256 digests and compared in constant time, :class:`~memory_engine.service.ApiKeys`);
:class:`CollectorServer` refuses to bind beyond loopback without keys. A
connection must deliver its request head within ``header_timeout_s`` and its
body within ``body_timeout_s`` (408 then); idle keep-alive connections close
after ``idle_timeout_s``; at most ``max_connections`` are served at once (503
beyond); request heads are limited to ``max_header_bytes``.

The receiver is the warehouse's writer process (see :mod:`.warehouse`);
requests run in Starlette's thread pool, each thread on its own connection.
"""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
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
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..errors import ConfigError, StartupError, WarehouseError
from .ingest import _Decoded, decode_otlp_json, decode_otlp_proto
from .warehouse import Warehouse

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest accepted body in bytes, before and after gzip decompression."""
HEADER_TIMEOUT_S = 10.0
"""Seconds a connection has to deliver a complete request head (slow-header clients are cut)."""
BODY_TIMEOUT_S = 30.0
"""Seconds a request has to deliver its whole body (408 beyond)."""
IDLE_TIMEOUT_S = 5.0
"""Seconds an idle keep-alive connection stays open between requests."""
MAX_CONNECTIONS = 256
"""Connections and requests served at once; more get 503 (idle ones are closed by the timeouts above)."""
MAX_HEADER_BYTES = 16 * 1024
"""Largest request head (request line + headers) in bytes."""
KEYS_ENV = "MEMWB_COLLECTOR_KEYS"
"""Environment variable with collector keys, ``name:key`` pairs separated by commas or newlines."""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _DeadlineH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for each request head: a connection that opens (or
    finishes a response) and does not deliver a complete request within ``header_timeout`` seconds is
    closed (uvicorn's keep-alive timer restarts on every byte, so a client trickling a header never hit it)."""

    header_timeout = HEADER_TIMEOUT_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def _arm(self) -> None:
        self._seen_cycle = self.cycle
        self._deadline = self.loop.call_later(self.header_timeout, self._expire)

    def _expire(self) -> None:
        if self.cycle is self._seen_cycle and not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not self._seen_cycle:  # a new request head arrived in time
            self._deadline.cancel()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._deadline.cancel()
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadline.cancel()
        super().connection_lost(exc)


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
    unauthorized: int = 0
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


async def _read_body(request: Request, max_bytes: int, timeout_s: float = BODY_TIMEOUT_S) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise _BodyError(413, f"body of {declared} bytes exceeds the {max_bytes}-byte limit")
    chunks = []
    size = 0

    async def read() -> None:
        nonlocal size
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_bytes:
                raise _BodyError(413, f"body exceeds the {max_bytes}-byte limit")
            chunks.append(chunk)

    try:
        await asyncio.wait_for(read(), timeout_s)
    except TimeoutError as e:
        raise _BodyError(408, f"body not received within {timeout_s:g} s") from e
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


_RPC_CODES = {400: 3, 401: 16, 408: 4, 413: 8, 415: 3}  # google.rpc.Code: INVALID_ARGUMENT, UNAUTHENTICATED...


def _status_response(status: int, message: str, encoding: str | None) -> Response:
    st = status_pb2.Status(code=_RPC_CODES.get(status, 2), message=message)
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
    api_keys: Any = None,
    body_timeout_s: float = BODY_TIMEOUT_S,
) -> Starlette:
    """The Starlette application of the receiver (used by :class:`CollectorServer`). ``api_keys`` (an
    :class:`~memory_engine.service.ApiKeys`) makes every ``/v1`` route require a key."""
    c = counters or CollectorCounters()

    def _denied(request: Request) -> Response | None:
        if api_keys is None:
            return None
        auth = request.headers.get("authorization", "")
        key = auth[7:].strip() if auth[:7].lower() == "bearer " else request.headers.get("x-api-key")
        if api_keys.tenant_of(key) is not None:
            return None
        with c.lock:
            c.unauthorized += 1
        resp = _status_response(401, "missing or unknown API key (Authorization: Bearer <key> or X-API-Key)",
                                _encoding(request) or JSON)  # fmt: skip
        resp.headers["WWW-Authenticate"] = "Bearer"
        return resp

    async def traces(request: Request) -> Response:
        if (denied := _denied(request)) is not None:
            return denied
        encoding = _encoding(request)
        with c.lock:
            c.requests += 1
        if encoding is None:
            with c.lock:
                c.bad_requests += 1
            return _status_response(415, f"Content-Type must be {PROTOBUF} or {JSON}", JSON)
        try:
            body = await _read_body(request, max_body_bytes, body_timeout_s)
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
            if (denied := _denied(request)) is not None:
                return denied
            encoding = _encoding(request)
            with c.lock:
                c.requests += 1
                c.other_signals += 1
            if encoding is None:
                return _status_response(415, f"Content-Type must be {PROTOBUF} or {JSON}", JSON)
            try:
                body = await _read_body(request, max_body_bytes, body_timeout_s)
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
        api_keys: Any = None,
        header_timeout_s: float = HEADER_TIMEOUT_S,
        body_timeout_s: float = BODY_TIMEOUT_S,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
        max_header_bytes: int = MAX_HEADER_BYTES,
    ) -> None:
        self.check_exposure(host, api_keys)
        self.counters = CollectorCounters()
        self.app = create_app(warehouse, max_body_bytes=max_body_bytes, counters=self.counters, api_keys=api_keys,
                              body_timeout_s=body_timeout_s)  # fmt: skip
        self.host = host
        self._requested_port = port
        self.port = port
        protocol = type("_CollectorH11", (_DeadlineH11,), {"header_timeout": header_timeout_s})
        self._server = uvicorn.Server(
            uvicorn.Config(
                self.app, host=host, port=port, log_level=log_level, lifespan="off", access_log=False,
                http=protocol, timeout_keep_alive=max(1, round(idle_timeout_s)), limit_concurrency=max_connections,
                h11_max_incomplete_event_size=max_header_bytes,
            )
        )  # fmt: skip
        self._thread: threading.Thread | None = None

    @staticmethod
    def check_exposure(host: str, api_keys: Any) -> None:
        """Raise ConfigError when ``host`` is beyond loopback and there are no API keys."""
        if api_keys is None and not is_loopback(host):
            raise ConfigError(
                f"refusing to listen on {host} without API keys: anyone who can reach it could write spans "
                f"(give --keys-file or set {KEYS_ENV}, or bind 127.0.0.1)", key="collector.api_keys",
            )  # fmt: skip

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
                raise StartupError(f"collector did not start on {self.host}:{self._requested_port}")
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
