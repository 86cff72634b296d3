"""OpenTelemetry set-up for one engine: its own TracerProvider (never the
global one, so two engines in a process - or a test - keep their spans apart)
with pluggable span processors. Span names and attributes: TRACES.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

SPAN_RETRIEVE = "memory.retrieve"
SPAN_WRITE = "memory.write"
SPAN_FORGET = "memory.forget"
SPAN_CONSOLIDATE = "memory.consolidate"
SPAN_ANSWER = "memory.answer"


class Tracing:
    """Owns a TracerProvider with resource ``service.name``; ``tracer`` makes spans."""

    def __init__(self, service_name: str = "memwb", processors: Iterable[SpanProcessor] = (), enabled: bool = True,
                 max_attribute_chars: int | None = None) -> None:
        """``max_attribute_chars`` cuts every string attribute value (and each string of a list) to that many
        characters (OTel ``SpanLimits``; None = the SDK default, unlimited)."""
        self.enabled = enabled
        # disabled: no provider at all (Resource.create starts a thread pool: ~2 ms per engine in sweeps)
        limits = SpanLimits(max_attribute_length=max_attribute_chars) if max_attribute_chars else None
        self.provider = (TracerProvider(resource=Resource.create({"service.name": service_name}), span_limits=limits)
                         if enabled else None)  # fmt: skip
        for p in processors:
            self.add_processor(p)
        self.tracer = self.provider.get_tracer("memory_engine") if self.provider else trace.NoOpTracer()

    def add_processor(self, processor: SpanProcessor) -> None:
        if self.provider is not None:
            self.provider.add_span_processor(processor)

    def force_flush(self) -> None:
        if self.provider is not None:
            self.provider.force_flush()

    def shutdown(self) -> None:
        if self.provider is not None:
            self.provider.shutdown()


def parent_context(trace_id_hex: str | None, span_id_hex: str | None):
    """A context whose current span is the (already ended) span with these ids, so a
    later span (an answer) joins the same trace as its retrieval."""
    if not trace_id_hex or not span_id_hex:
        return None
    sc = SpanContext(int(trace_id_hex, 16), int(span_id_hex, 16), is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    return trace.set_span_in_context(NonRecordingSpan(sc))


def set_attrs(span: Any, attrs: dict[str, Any]) -> None:
    """Set attributes, skipping None (OTel rejects None) and turning tuples into lists."""
    for k, v in attrs.items():
        if v is None:
            continue
        if isinstance(v, tuple | list):
            v = list(v)
            if v and isinstance(v[0], float | int) and not isinstance(v[0], bool):
                v = [float(x) for x in v] if any(isinstance(x, float) for x in v) else v
        span.set_attribute(k, v)


def ids_hex(span: Any) -> tuple[str | None, str | None]:
    ctx = span.get_span_context()
    if not ctx or not ctx.is_valid:
        return None, None
    return f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"


__all__: Sequence[str] = [
    "SPAN_ANSWER", "SPAN_CONSOLIDATE", "SPAN_FORGET", "SPAN_RETRIEVE", "SPAN_WRITE", "Tracing", "ids_hex",
    "parent_context", "set_attrs",
]
