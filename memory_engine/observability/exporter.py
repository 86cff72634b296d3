"""In-process span export: the engine's spans into the warehouse, OTLP optional.

:class:`DuckDBSpanExporter` is a real ``opentelemetry.sdk.trace.export.SpanExporter``;
the workspace (``memory_engine.workspace.attach_exporters``) wraps it in a ``BatchSpanProcessor`` (tests may use
``SimpleSpanProcessor``). :func:`span_processors` builds the processors the
tracing config asks for: the warehouse exporter, a standard OTLP/HTTP exporter
(any collector, Phoenix, Langfuse), or both.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from ..errors import WarehouseError
from .records import SpanRecord, SpanRejected, decode_readable_span
from .warehouse import Warehouse

log = logging.getLogger(__name__)


class DuckDBSpanExporter(SpanExporter):
    """Exports SDK spans into a :class:`Warehouse` (decode, then one Arrow batch).

    A span that cannot be decoded or stored (a time out of range, a value the
    columns cannot hold) is counted as rejected and logged, and the other
    spans of the batch - often other callers' - are stored; an out-of-range
    count such as ``memory.top_k = 2**31`` only empties that column (with a
    warning). A warehouse failure returns ``SpanExportResult.FAILURE`` (the SDK logs it and
    the engine keeps running). Each export appends an ``ingest_batches`` row
    with source ``"sdk"``.
    """

    def __init__(self, warehouse: Warehouse | Any, *, source: str = "sdk") -> None:
        # a Warehouse, or a spool.SpoolWriter when another process owns the workspace (same write methods)
        self.warehouse = warehouse
        self.source = source
        self._shutdown = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown:
            return SpanExportResult.FAILURE
        records: list[SpanRecord] = []
        rejected = 0
        for s in spans:
            try:
                records.append(decode_readable_span(s))
            except SpanRejected as e:
                rejected += 1
                log.warning("span %r rejected: %s", getattr(s, "name", "?"), e.reason)
        try:
            res = self.warehouse.insert_spans(records, source=self.source)
            for why in res.reasons:
                log.warning("span rejected: %s", why)
            self.warehouse.record_ingest(
                source=self.source,
                received=len(spans),
                stored=res.stored,
                duplicate=res.duplicate,
                rejected=rejected + res.rejected,
                warnings=res.warnings,
            )
        except WarehouseError:
            log.exception("exporting %d spans to the warehouse failed", len(spans))
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._shutdown = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def otlp_traces_url(endpoint: str) -> str:
    """``endpoint`` as an OTLP/HTTP traces URL: a base URL gets ``/v1/traces`` appended."""
    e = endpoint.rstrip("/")
    return e if e.endswith("/v1/traces") else e + "/v1/traces"


def span_processors(
    tracing: Any,
    warehouse: Warehouse | None,
    *,
    batch: bool = True,
) -> list[SpanProcessor]:
    """Span processors for a ``TracingSection`` (``config.tracing``).

    ``tracing.warehouse`` true and a ``warehouse`` given -> the DuckDB exporter;
    ``tracing.otlp_endpoint`` set -> an ``OTLPSpanExporter`` (protobuf over
    HTTP) to that URL, alongside or (with ``warehouse = false``) instead.
    ``batch`` false uses ``SimpleSpanProcessor`` (tests, short CLI runs).
    Returns an empty list when tracing is disabled.
    """
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    if not getattr(tracing, "enabled", True):
        return []
    wrap = BatchSpanProcessor if batch else SimpleSpanProcessor
    out: list[SpanProcessor] = []
    if getattr(tracing, "warehouse", True) and warehouse is not None:
        out.append(wrap(DuckDBSpanExporter(warehouse)))
    endpoint = getattr(tracing, "otlp_endpoint", None)
    if endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        out.append(wrap(OTLPSpanExporter(endpoint=otlp_traces_url(endpoint))))
    return out
