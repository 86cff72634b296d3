"""record_answer takes now= (the answer's time) and flags cited ids its retrieval never returned."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memory_engine.engine import UnknownCitationWarning
from memory_engine.errors import ValidationError


def test_record_answer_time_and_unknown_citations(make_engine, t0):
    mem = InMemorySpanExporter()
    eng = make_engine(span_processors=[SimpleSpanProcessor(mem)])
    w = eng.add("I always book aisle seats on long flights.", user_id="u1", now=t0)
    res = eng.retrieve("which seat do I like?", user_id="u1", now=t0)
    assert [h.memory_id for h in res.hits] == [w.memory_id]
    when = datetime(2026, 3, 3, 10, 0, tzinfo=UTC)
    made_up = "0123456789abcdef"
    with pytest.warns(UnknownCitationWarning, match=made_up):
        cited = eng.record_answer(res, f"Aisle [mem-{w.memory_id}], also [mem-{made_up}].", now=when)
    assert list(cited) == [w.memory_id, made_up] and cited.unknown == (made_up,)
    (span,) = [s for s in mem.get_finished_spans() if s.name == "memory.answer"]
    assert span.start_time == int(when.timestamp() * 1e9)  # before: the wall clock, whatever now said
    assert 0 <= span.end_time - span.start_time < 10**9
    assert list(span.attributes["memory.unknown_cited_ids"]) == [made_up]
    # a grounded answer: no warning, no attribute
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ok = eng.record_answer(res, f"Aisle [mem-{w.memory_id}].")
    assert ok.unknown == ()
    last = [s for s in mem.get_finished_spans() if s.name == "memory.answer"][-1]
    assert "memory.unknown_cited_ids" not in last.attributes
    with pytest.raises(ValidationError):
        eng.record_answer(res, "x", now=datetime(2026, 3, 3, 10, 0))
