"""Write spans as OTLP files, in the OpenTelemetry Collector file exporter's formats.

:class:`OTLPFileSpanExporter` is an SDK ``SpanExporter`` that appends each
export batch to a file as either one OTLP/JSON line (``encoding="json"``,
hex ids and integer enums per the OTLP/JSON spec) or one length-prefixed
protobuf ``ExportTraceServiceRequest`` (``encoding="proto"``: 4-byte
big-endian size, then the message, as the collector's ``format: proto``).
The sample files in ``traces/`` are written with it, and
:func:`~memory_engine.observability.ingest.ingest_file` reads both back.
"""

from __future__ import annotations

import base64
import os
import struct
import threading
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ..errors import ValidationError


class FileEncoding(StrEnum):
    """OTLP file encodings: JSON lines or length-prefixed protobuf."""

    JSON = "json"
    PROTO = "proto"


def _b64_to_hex(v: Any) -> Any:
    if isinstance(v, str) and v:
        try:
            return base64.b64decode(v).hex()
        except ValueError:
            return v
    return v


def request_to_otlp_json(request: Any) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest`` as an OTLP/JSON object (hex ids, integer enums).

    Protobuf's generic JSON mapping writes bytes as base64; the OTLP/JSON spec
    wants trace and span ids as hex, so the ids are rewritten.
    """
    doc = MessageToDict(request, use_integers_for_enums=True)
    for rs in doc.get("resourceSpans", ()):
        for ss in rs.get("scopeSpans", ()):
            for sp in ss.get("spans", ()):
                for k in ("traceId", "spanId", "parentSpanId"):
                    if k in sp:
                        sp[k] = _b64_to_hex(sp[k])
                for link in sp.get("links", ()):
                    for k in ("traceId", "spanId"):
                        if k in link:
                            link[k] = _b64_to_hex(link[k])
    return doc


class OTLPFileSpanExporter(SpanExporter):
    """Appends each export batch to ``path`` as OTLP JSON lines or length-prefixed protobuf."""

    def __init__(self, path: str | os.PathLike[str], encoding: FileEncoding | str = FileEncoding.JSON) -> None:
        try:
            self.encoding = FileEncoding(encoding)
        except ValueError as e:
            raise ValidationError(f"unknown encoding {encoding!r}; valid: {', '.join(x.value for x in FileEncoding)}") from e
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        req = encode_spans(spans)
        if self.encoding is FileEncoding.JSON:
            blob = orjson.dumps(request_to_otlp_json(req)) + b"\n"
        else:
            body = req.SerializeToString()
            blob = struct.pack(">I", len(body)) + body
        with self._lock, self.path.open("ab") as f:
            f.write(blob)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
