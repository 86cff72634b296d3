"""Consolidation on a real engine: merge, conflicts, profile fold, LLM extraction, trigger; nothing lost."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from memory_engine.lifecycle.consolidate import (
    ConsolidationTrigger,
    LLMExtractor,
    consolidate,
    consolidation_due,
)
from memory_engine.lifecycle.llm import OpenAICompatibleClient
from memory_engine.lifecycle.writer import WriteRequest, ingest_events
from memory_engine.models import MemoryStatus

pytestmark = pytest.mark.integration


def _events(eng, items, day):
    reqs = [WriteRequest(f"r{i}", text, "u", role=role, memory_type="semantic", at=day(d).timestamp(),
                         metadata=dict(meta))
            for i, (text, role, d, meta) in enumerate(items)]
    return [r.memory_id for r in ingest_events(eng, reqs)]


def _assert_reachable(eng, report):
    """Every archived source is still readable by id and points at a current record that lists it."""
    for a in report.actions:
        if a.kind == "extract":
            continue
        surv = eng.memory(a.survivor_id, user_id="u")
        assert surv is not None and surv.archived_at is None and surv.status == MemoryStatus.CURRENT
        for sid in a.source_ids:
            src = eng.memory(sid, user_id="u")
            assert src is not None, f"source {sid} lost"
            assert src.superseded_by == a.survivor_id and src.archived_at is not None
            assert src.status == MemoryStatus.DEPRECATED
            assert sid in surv.supersedes or sid in surv.metadata.get("_sources", [])


def test_merge_conflict_and_profile_keep_every_source_reachable(eng, day):
    ids = _events(eng, [
        ("I like jasmine tea", "user", 0, {}),
        ("I like jasmine tea.", "user", 1, {}),
        ("i like Jasmine tea!", "user", 2, {}),
        ("Order A123 arrived damaged", "user", 0, {}),
        ("Order A124 arrived damaged", "user", 0, {}),  # another identifier: never merged
        ("I like spicy food", "user", 0, {}),
        ("I don't like spicy food", "assistant", 5, {}),  # model-inferred loses to user-stated though newer
        ("I am vegetarian", "user", 3, {"topic": "diet"}),
        ("I am allergic to peanuts", "user", 4, {"topic": "diet"}),
        ("My favourite cuisine is Sichuan", "user", 6, {"topic": "diet"}),
        ("I live in Hangzhou", "user", 3, {"topic": "home"}),  # a single memory of a topic is not folded
    ], day)
    eng.store.set_payload([ids[1]], {"access_count": 5})
    plan = consolidate(eng, user_id="u", now=day(10), dry_run=True)
    assert plan.dry_run and {a.kind for a in plan.actions} == {"merge", "conflict", "profile"}
    assert eng.memory(ids[0], user_id="u").archived_at is None  # a dry run writes nothing

    rep = consolidate(eng, user_id="u", now=day(10))
    kinds = {a.kind: a for a in rep.actions}
    assert kinds["merge"].survivor_id == ids[1] and set(kinds["merge"].source_ids) == {ids[0], ids[2]}
    assert (kinds["conflict"].survivor_id, kinds["conflict"].source_ids) == (ids[5], (ids[6],))
    assert kinds["conflict"].reason == "conflict:source"
    prof = eng.memory(kinds["profile"].survivor_id, user_id="u")
    assert prof.content == "Profile (diet): I am vegetarian; I am allergic to peanuts; My favourite cuisine is Sichuan"
    assert prof.metadata["_sources"] == [ids[7], ids[8], ids[9]] and prof.metadata["_kind"] == "profile"
    assert len(rep.actions) == 3 and rep.created_ids == (prof.id,)
    _assert_reachable(eng, rep)
    survivor = eng.memory(ids[1], user_id="u")
    assert survivor.access_count == 5 and sorted(survivor.metadata["_sources"]) == sorted([ids[0], ids[2]])
    current = {r.id for r in eng.list_memories(user_id="u", include_archived=False)}
    assert current == {ids[1], ids[3], ids[4], ids[5], ids[10], prof.id}
    # total records: nothing deleted
    assert len(eng.list_memories(user_id="u")) == len(ids) + 1
    hits = eng.retrieve("what diet am I on, vegetarian?", user_id="u", now=day(11)).hits
    assert hits and hits[0].memory_id == prof.id
    # idempotent: a second run finds nothing to do
    assert consolidate(eng, user_id="u", now=day(12)).actions == ()


def test_conflict_between_two_user_statements_goes_to_the_newer(eng, day):
    ids = _events(eng, [("I like spicy food", "user", 0, {}), ("I don't like spicy food", "user", 5, {})], day)
    rep = consolidate(eng, user_id="u", now=day(6))
    assert [(a.kind, a.survivor_id, a.source_ids, a.reason) for a in rep.actions] == [
        ("conflict", ids[1], (ids[0],), "conflict:newer")]


def test_llm_extractor_validated_json_with_confidence_and_sources(eng, chat_server, day):
    ids = _events(eng, [("I moved to Shenzhen last month", "user", 0, {}),
                        ("Booked a flat near Shenzhen Bay", "user", 1, {})], day)
    chat_server.reply = lambda req: json.dumps({"facts": [
        {"content": "The user lives in Shenzhen", "confidence": 0.93, "source_ids": ids, "topic": "home"},
        {"content": "The user likes the sea", "confidence": 0.5, "source_ids": [ids[1]]},
        {"content": "The user owns a car", "confidence": 0.99, "source_ids": ["ffffffffffffffff"]},
    ]})
    ext = LLMExtractor(OpenAICompatibleClient(chat_server.base_url, "tiny"))
    rep = consolidate(eng, user_id="u", now=day(2), extractor=ext)
    assert [a.kind for a in rep.actions] == ["extract"]
    fact = eng.memory(rep.created_ids[0], user_id="u")
    assert fact.content == "The user lives in Shenzhen" and fact.source.value == "model_inferred"
    assert fact.confidence == pytest.approx(0.93) and fact.metadata["_sources"] == ids
    assert any("unknown source ids" in w for w in rep.warnings) and any("confidence" in w for w in rep.warnings)
    assert all(eng.memory(i, user_id="u").archived_at is None for i in ids)  # extraction keeps sources current
    assert chat_server.requests[-1]["response_format"] == {"type": "json_object"}
    chat_server.reply = lambda req: "not json"
    rep2 = consolidate(eng, user_id="u", now=day(3), extractor=ext)
    assert rep2.created_ids == () and "not valid JSON" in rep2.warnings[0]


@pytest.mark.unit
def test_consolidation_due_rule():
    h = 3600.0
    assert consolidation_due(50, 0.0, 1.0, 50, 24) == "events:50"
    assert consolidation_due(49, 0.0, 23.9 * h, 50, 24) is None
    assert consolidation_due(3, 0.0, 24 * h, 50, 24) == "hours:24.0"
    assert consolidation_due(0, 0.0, 100 * h, 50, 24) is None
    assert consolidation_due(1, None, 100 * h, 50, 24) is None


def test_trigger_runs_per_user_after_n_events_or_hours(eng, day):
    trig = ConsolidationTrigger(eng, after_events=3, after_hours=24)
    _events(eng, [("I like jasmine tea", "user", 0, {}), ("I like jasmine tea.", "user", 0, {})], day)
    assert trig.note_event("u", now=day(0)) is None
    assert trig.note_event("u", now=day(0) + timedelta(hours=1)) is None
    assert trig.note_event("other", now=day(0)) is None
    rep = trig.note_event("u", now=day(0) + timedelta(hours=2))
    assert rep is not None and [a.kind for a in rep.actions] == ["merge"]
    assert trig.note_event("u", now=day(0) + timedelta(hours=3)) is None
    assert trig.note_event("u", now=day(1) + timedelta(hours=2, minutes=1)) is not None  # 24 h since the last run
