"""The write pipeline on a real in-memory store and the real model, without the
facade: every outcome, and per-call output only (the pipeline keeps no request data)."""

from __future__ import annotations

import pytest

from memory_engine.models import MemoryStatus
from memory_engine.write.pipeline import AddRequest, WritePipeline

pytestmark = pytest.mark.integration


def _req(text, t0, user="u1", **kw):
    return AddRequest(text=text, user_id=user, tenant_id="default", ts=t0.timestamp(), now=t0, **kw)


@pytest.fixture
def pipe(engine):
    return WritePipeline(engine.store, engine.embedder, engine.config)


def test_stored_then_merged_then_superseded(pipe, engine, t0):
    first = pipe.run(_req("I prefer green tea in the morning", t0))
    assert first.result.outcome == "stored" and first.content == "I prefer green tea in the morning"
    again = pipe.run(_req("I prefer green tea in the morning.", t0))
    assert again.result.outcome == "merged" and again.result.memory_id == first.result.memory_id
    fix = pipe.run(_req("Actually I no longer drink green tea in the morning, coffee instead", t0))
    assert fix.result.outcome == "stored" and first.result.memory_id in fix.result.superseded_ids
    old = engine.memory(first.result.memory_id, user_id="u1")
    assert old.status == MemoryStatus.DEPRECATED and old.superseded_by == fix.result.memory_id


def test_rejections_report_the_cleaned_content(pipe, t0):
    chat = pipe.run(_req("thanks!", t0))
    assert chat.result.outcome == "rejected" and chat.result.reason == "chit_chat" and chat.content == "thanks!"
    pii = pipe.run(_req("my phone is 13812345678 and I prefer calls after 6pm", t0))
    assert pii.result.outcome == "stored" and "13812345678" not in (pii.content or "")
    assert pii.result.redactions == ("PHONE",)


def test_fact_overwrite_and_repeat(pipe, engine, t0):
    a = pipe.run(_req("my city is Paris", t0, fact={"key": "Profile.City", "value": "Paris"}))
    same = pipe.run(_req("my city is Paris", t0, fact={"key": "profile.city", "value": "Paris"}))
    assert same.result.outcome == "merged" and same.result.memory_id == a.result.memory_id
    b = pipe.run(_req("I moved to Lyon", t0, fact={"key": "profile.city", "value": "Lyon"}))
    assert b.result.superseded_ids == (a.result.memory_id,)
    assert engine.get_fact("profile.city", user_id="u1") == "Lyon"


def test_candidate_pool_promotes_after_two_sessions(pipe, engine, t0):
    c1 = pipe.run(_req("maybe I will learn Rust next year?", t0, session_id="s1"))
    assert c1.result.outcome == "candidate" and c1.result.reason == "uncertain"
    c2 = pipe.run(_req("maybe I will learn Rust next year?", t0, session_id="s2"))
    assert c2.result.outcome == "stored" and c2.result.reason == "promoted_candidate"
    assert engine.memory(c1.result.memory_id, user_id="u1").status == MemoryStatus.CURRENT


def test_disabled_memory_stores_nothing(make_engine, t0):
    eng = make_engine({"memory.enabled": False})
    run = WritePipeline(eng.store, eng.embedder, eng.config).run(_req("I prefer green tea", t0))
    assert run.result.reason == "memory_disabled" and run.content is None
    assert eng.list_memories(user_id="u1") == []


def test_pipeline_holds_no_request_data(pipe, t0):
    before = set(vars(pipe))
    pipe.run(_req("I prefer aisle seats on long flights", t0))
    assert set(vars(pipe)) == before
