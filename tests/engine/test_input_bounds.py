"""Input bounds as configuration (issue 15: a 44,000-character query cost 47 s of CPU; a 1,400-character
memory held its user's write lock for 33 s; ``top_k=2**31`` overflowed the span columns)."""

from __future__ import annotations

import time

import pytest

from memory_engine.errors import ValidationError

pytestmark = pytest.mark.integration


def test_retrieve_bounds(make_engine):
    eng = make_engine()
    t = time.perf_counter()
    with pytest.raises(ValidationError, match="max_query_chars") as e:
        eng.retrieve("我想知道" * 11_000, user_id="u")
    assert e.value.field == "query" and time.perf_counter() - t < 1.0  # refused before any work
    for k in (0, -1, 2**31, 101, 2.5, True):
        with pytest.raises(ValidationError, match="top_k"):
            eng.retrieve("tea", user_id="u", top_k=k)
    with pytest.raises(ValidationError, match="max_id_chars"):
        eng.retrieve("tea", user_id="u", session_id="s" * 300)
    assert not eng.retrieve("tea", user_id="u", top_k=100).degraded
    small = make_engine({"limits.max_query_chars": 10, "limits.max_top_k": 3})
    with pytest.raises(ValidationError):
        small.retrieve("x" * 11, user_id="u")
    with pytest.raises(ValidationError):
        small.retrieve("tea", user_id="u", top_k=4)


def test_add_bounds(make_engine):
    eng = make_engine()
    with pytest.raises(ValidationError, match="max_text_chars"):
        eng.add("a" * 20_001, user_id="u")
    with pytest.raises(ValidationError, match="max_metadata_bytes"):
        eng.add("I like tea", user_id="u", metadata={"blob": "x" * 20_000})
    with pytest.raises(ValidationError, match="max_fact_bytes"):
        eng.add("my address", user_id="u", fact={"key": "address", "value": "y" * 5000})
    with pytest.raises(ValidationError, match="max_id_chars"):
        eng.add("I like tea", user_id="u" * 257)
    assert eng.list_memories(user_id="u") == []  # nothing stored by a refused call
    w = eng.writer()
    with pytest.raises(ValidationError, match="max_text_chars"):
        w.submit("a" * 20_001, user_id="u")
    w.close(timeout=5)


def test_the_embedder_sees_a_bounded_prefix(make_engine):
    eng = make_engine()
    emb = eng.embedder
    assert emb.max_input_chars == 1000
    long = "我上周在杭州西湖边的茶馆喝了龙井，" * 300  # 5,100 characters
    v_prefix = emb.embed_documents([long[:1000]])[0]
    misses = emb.misses
    v_long = emb.embed_documents([long])[0]
    assert emb.misses == misses and (v_long == v_prefix).all()  # the same 1,000 characters: a cache hit


def test_span_attributes_are_bounded(make_engine):
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    mem = InMemorySpanExporter()
    eng = make_engine(span_processors=[SimpleSpanProcessor(mem)])
    res = eng.retrieve("tea", user_id="u")
    eng.record_answer(res, "very long answer " * 5000)  # 85,000 characters
    ans = [s for s in mem.get_finished_spans() if s.name == "memory.answer"][0]
    assert len(ans.attributes["memory.answer_text"]) == 8192  # limits.max_attribute_chars
