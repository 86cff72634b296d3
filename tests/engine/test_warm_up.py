"""MemoryEngine.warm_up: a short-lived process (one ``memwb retrieve``) pays the retrieval stages'
one-time costs before the traced call, so the warehouse's p95 / p99 time retrieval, not start-up;
the warm-up reads as an owner no caller can be, makes no span and changes nothing."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memory_engine import MemoryEngine
from memory_engine.errors import ValidationError


def test_warm_up_makes_no_span_and_touches_no_memory(make_engine, t0):
    exporter = InMemorySpanExporter()
    eng = make_engine(span_processors=[SimpleSpanProcessor(exporter)])
    # a memory that would answer the warm-up's own English question, were the owner filter not applied
    w = eng.add("My sister said the hotel last Friday was fully booked", user_id="u1", now=t0)
    before = {p.id: dict(p.payload) for p in eng.store.retrieve([w.memory_id])}
    exporter.clear()
    took = eng.warm_up(now=t0)
    assert took >= 0.0
    assert [s.name for s in exporter.get_finished_spans()] == []
    after = {p.id: dict(p.payload) for p in eng.store.retrieve([w.memory_id])}
    assert after == before  # access count and last access unchanged
    res = eng.retrieve("what did my sister say about the hotel?", user_id="u1", now=t0)
    assert w.memory_id in [h.memory_id for h in res.hits]  # the warm-up left the engine working
    assert [s.name for s in exporter.get_finished_spans()] == ["memory.retrieve"]


@pytest.mark.parametrize("field", ["user_id", "tenant_id"])
def test_the_warm_up_owner_is_refused_to_callers(make_engine, t0, field):
    eng = make_engine()
    user, tenant = MemoryEngine.WARM_UP_OWNER
    kw = {"user_id": user, "tenant_id": "default"} if field == "user_id" else {"user_id": "u1", "tenant_id": tenant}
    with pytest.raises(ValidationError) as e:
        eng.retrieve("anything", now=t0, **kw)
    assert e.value.field == field
    with pytest.raises(ValidationError):
        eng.add("I live in Berlin", now=t0, **kw)
