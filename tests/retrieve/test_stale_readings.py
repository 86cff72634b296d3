"""The current value wins for a present question: bare numbers as readings of a series
(retrieval.stale_present_readings, stale_reading_ratio), a stored link's replacement taking the slot's place
(retrieval.stale_link_takes_rank) and the replaced value leaving the result (retrieval.stale_present_drop_links),
recency superlatives as present time words (write/intents.PRESENT_QUERY)."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import EngineConfig, MemoryEngine
from memory_engine.retrieve.stale import READING, value_change, value_kinds
from memory_engine.write.intents import query_tense

T0 = datetime(2026, 4, 1, 8, tzinfo=UTC)


@pytest.mark.parametrize("text,readings,kinds", [
    ("resting pulse 64 this morning", False, {}),  # a function word after a number is no unit
    ("resting pulse 64 this morning", True, {READING: {"64"}}),
    ("pulse was 71 after two weeks", True, {READING: {"71"}}),  # a preposition is no unit either
    ("my resting heart rate is 78 bpm", True, {"bpm": {"78"}}),
    ("收缩压今天132，舒张压85", True, {READING: {"132", "85"}}),
    ("早上测的118/76", True, {READING: {"118/76"}}),  # a ratio is one reading
    ("my tablet is the Elite 8", True, {}),  # a title-case name holds the number: a model
    ("order JD7730152488 shipped", True, {}),  # an identifier
    ("tracking 1Z999AA10123456784", True, {}),
])
def test_value_kinds(text, readings, kinds):
    assert {k: set(v) for k, v in value_kinds(text, readings).items()} == kinds


@pytest.mark.parametrize("old,new,ok", [
    ("my resting heart rate is 78 bpm", "watch says 66 at rest today", True),  # bare 66 continues 78 bpm
    ("收缩压今天132", "今天量了124", True),  # two bare readings
    ("I weigh 91 kg", "ran 5 laps this morning", False),  # 5 is nowhere near 91: a count, not a weight
    ("收缩压今天132", "收缩压今天132，挺稳", False),  # the same reading restated
])
def test_value_change_with_readings(old, new, ok):
    assert value_change(old, new, 1.5) is ok


def test_bare_numbers_are_no_values_without_readings():
    assert not value_change("收缩压今天132", "今天量了124")


@pytest.mark.parametrize("q", ["what's my latest A1C?", "what was my most recent cholesterol reading?",
                               "我最新的体重是多少？"])
def test_recency_superlatives_ask_for_the_present(q):
    assert query_tense(q) == "present"


@pytest.fixture(scope="module")
def engine():
    eng = MemoryEngine.in_memory(EngineConfig().with_overrides({
        "tracing.enabled": False, "retrieval.touch_on_hit": False}))
    yield eng
    eng.close()


def _ids(engine, q, user, top_k=None, when=T0 + timedelta(days=90)):
    kw = {"top_k": top_k} if top_k else {}
    return [h.memory_id for h in engine.retrieve(q, user_id=user, now=when, **kw).hits]


def test_the_newest_bare_reading_answers_a_present_question(engine):
    u = "pulse"
    first = engine.add("my resting heart rate is 78 bpm, the doctor wants it lower", user_id=u, session_id="s1", now=T0)
    engine.add("bought a new running watch, the strap is comfy", user_id=u, session_id="s1",
               now=T0 + timedelta(hours=1))
    engine.add("resting pulse was 71 after two weeks of jogging", user_id=u, session_id="s2",
               now=T0 + timedelta(days=30))
    last = engine.add("resting heart rate 66 on the watch this morning", user_id=u, session_id="s3",
                      now=T0 + timedelta(days=60))
    assert _ids(engine, "what's my resting heart rate now?", u, top_k=1) == [last.memory_id]
    # the series stays stored and a past question still finds its start
    assert first.memory_id in _ids(engine, "what was my resting heart rate at first?", u)


def test_a_newer_reading_below_the_floor_is_lifted(engine):
    u = "glucose"
    engine.add("空腹血糖7.2，医生说有点高", user_id=u, session_id="s1", now=T0)
    engine.add("医生让我每天散步半小时", user_id=u, session_id="s1", now=T0 + timedelta(hours=1))
    engine.add("今天早上测了6.5", user_id=u, session_id="s2", now=T0 + timedelta(days=30))
    last = engine.add("空腹6.1，控制得挺好", user_id=u, session_id="s3", now=T0 + timedelta(days=60))
    assert _ids(engine, "我最近空腹血糖多少？", u, top_k=1) == [last.memory_id]


def test_a_linked_replacement_takes_the_place_a_third_memory_would_take(engine):
    u = "city"
    engine.add("I live in Lyon, two minutes from the river", user_id=u, session_id="s1", now=T0)
    engine.add("my brother lives in Nice with his dog", user_id=u, session_id="s1", now=T0 + timedelta(hours=1))
    new = engine.add("finally settled in Geneva, the new flat has a balcony", user_id=u, session_id="s2",
                     now=T0 + timedelta(days=60))
    assert _ids(engine, "which city do I live in now?", u, top_k=1) == [new.memory_id]


def test_a_corrected_value_leaves_a_present_answer_and_stays_for_the_past(engine):
    u = "car"
    old = engine.add("I drive a Mazda", user_id=u, session_id="s1", now=T0)
    new = engine.add("Actually my car is a Subaru, not a Mazda", user_id=u, session_id="s2",
                     now=T0 + timedelta(days=3))
    assert new.memory_id in _ids(engine, "what car do I drive these days?", u)
    assert old.memory_id not in _ids(engine, "what car do I drive these days?", u)
    assert old.memory_id in _ids(engine, "what car did I drive before?", u)


def test_a_corrected_memory_with_more_details_stays(engine):
    u = "vet"
    old = engine.add("The vet visit is on Monday at 10am at the Oak Avenue clinic", user_id=u, session_id="s1", now=T0)
    new = engine.add("Actually the vet visit is at 11am, not 10am", user_id=u, session_id="s2",
                     now=T0 + timedelta(days=2))
    hits = _ids(engine, "where is the vet visit these days?", u, when=T0 + timedelta(days=3))
    assert new.memory_id in hits and old.memory_id in hits  # the clinic is only in the older one
