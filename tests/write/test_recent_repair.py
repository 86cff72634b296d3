"""A repair of a value said a few turns earlier supersedes that value, and only it (issue 16,
failure classes 6 and 9). On 1a67098 "wait I said Tuesday but I meant Thursday", "sorry, 8pm not 6"
and "不对，我是说8岁" retired nothing (they share no subject word with the turn they repair), so the
stale value answered "when is my dentist appointment?". Recognised by structure (a slot value of
the same kind replacing one said shortly before in the session), never by one phrase."""

from datetime import timedelta

import pytest

from memory_engine.config import WriteSection
from memory_engine.write.repair import repair_of, slot_values

CFG = WriteSection()


@pytest.mark.unit
def test_slot_values_by_kind():
    kinds = [(s.kind, s.value) for s in slot_values("周二下午3点, on Tuesday at 6pm, the 15th, 7岁, 88 kg")]
    assert kinds == [("weekday", "1"), ("clock", "3"), ("weekday", "1"), ("clock", "6"), ("day_of_month", "15"),
                     ("quantity:岁", "7"), ("quantity:kg", "88")]


@pytest.mark.unit
@pytest.mark.parametrize("new,old,repaired,route", [
    ("wait I said Tuesday but I meant Thursday", "dentist appointment is on Tuesday at 3pm",
     "dentist appointment is on Thursday at 3pm", "restated"),
    ("刚才说错了，是周四不是周二", "下周二下午要去医院复查", "下周四下午要去医院复查", "restated"),
    ("sorry, 8pm not 6", "my flight lands at 6pm on Friday", "my flight lands at 8pm on Friday", "restated"),
    ("actually I meant the 15th, not the 5th", "rent is due on the 5th", "rent is due on the 15th", "restated"),
    ("oops, Thursday", "dentist on Tuesday", "dentist on Thursday", "bare"),
    ("不对，我是说8岁，他是去年上的学", "我儿子今年7岁", "我儿子今年8岁", "marker"),
])
def test_repairs(new, old, repaired, route):
    found = repair_of(new, old, CFG)
    assert found is not None and found[0] == repaired and found[4] == route


@pytest.mark.unit
@pytest.mark.parametrize("new,old", [
    ("dinner at 8pm with Tom", "my flight lands at 6pm"),  # a statement of its own: two other terms, nothing restated
    ("I meant to call her yesterday but work ran late", "my mom's birthday is on June 2nd"),  # no slot value
    ("明天下午3点开会", "周二下午4点看牙"),  # another appointment
    ("我女儿今年5岁", "我儿子今年7岁"),  # another relative
    ("my wife said Thursday, not Tuesday", "dentist on Tuesday"),  # about a relative the turn does not name
    ("if it's Thursday I'll go", "dentist on Tuesday"),  # a condition
    ("Tuesday or Thursday, not sure", "dentist on Tuesday at 3pm and gym on Thursday"),  # the value is there already
])
def test_not_repairs(new, old):
    assert repair_of(new, old, CFG) is None


@pytest.mark.integration
def test_repair_supersedes_only_the_repaired_turn(engine, t0):
    tue = engine.add("dentist appointment is on Tuesday at 3pm, remind me the day before", user_id="u",
                     session_id="s1", now=t0).memory_id
    milk = engine.add("also I switched to oat milk in my coffee", user_id="u", session_id="s1",
                      now=t0 + timedelta(minutes=2)).memory_id
    r = engine.add("wait I said Tuesday but I meant Thursday", user_id="u", session_id="s1",
                   now=t0 + timedelta(minutes=4))
    assert r.outcome == "stored" and r.superseded_ids == (tue,)
    assert r.evidence[0]["rule"] == "recent_repair" and r.evidence[0]["replaced"] == "Tuesday"
    rec = engine.memory(r.memory_id, user_id="u")
    assert "Thursday at 3pm" in rec.content and rec.metadata["_repair_text"].startswith("wait I said")
    assert engine.memory(tue, user_id="u").status.value == "deprecated"
    assert engine.memory(milk, user_id="u").status.value == "current"
    hits = engine.retrieve("when is my dentist appointment?", user_id="u", now=t0 + timedelta(days=1)).hits
    assert hits[0].memory_id == r.memory_id
    assert engine.undo_forget(user_id="u", now=t0 + timedelta(days=1)) == [tue]  # undoable like a correction


@pytest.mark.integration
def test_no_repair_across_sessions_or_after_the_window(engine, t0):
    engine.add("dentist appointment is on Tuesday at 3pm", user_id="u", session_id="s1", now=t0)
    other = engine.add("oops, Thursday", user_id="u", session_id="s2", now=t0 + timedelta(minutes=1))
    late = engine.add("oops, Thursday", user_id="u", session_id="s1", now=t0 + timedelta(hours=3))
    assert other.superseded_ids == () and late.superseded_ids == ()
