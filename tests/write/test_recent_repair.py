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
    # editing terms (hesitations, apologies, 'I mean', 'make that', 说错了, 不好意思) say nothing beyond the value
    ("oops, I mean the 14th", "I'm flying to Paris on the 12th", "I'm flying to Paris on the 14th", "bare"),
    ("ugh sorry, the 19th", "booked the vet for the 9th", "booked the vet for the 19th", "bare"),
    ("hmm no, make that 5:45pm", "pick up the kids at 5pm", "pick up the kids at 5:45pm", "bare"),
    ("啊不好意思，应该是21号", "体检约在12号上午", "体检约在21号上午", "bare"),
    ("抱歉我记错了，是周五", "周二下午去看牙医", "周五下午去看牙医", "bare"),
    # a word the repaired turn says points back to it
    ("the dentist is Thursday actually", "dentist on Tuesday", "dentist on Thursday", "bare"),
    # a question before the repair does not make the repair a question
    ("sorry, did I say Tuesday? I meant Thursday", "dentist on Tuesday", "dentist on Thursday", "restated"),
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
    # the same kind of value for a subject the older turn does not name: a new statement (on 235285a the one
    # other term fitted write.repair_bare_terms 1 and '对了，工资是25号' retired the rent day)
    ("对了，工资是25号", "房租每个月5号交"),
    ("oh and payday is the 25th", "rent is due on the 1st of every month"),
    ("sorry, also the piano recital is the 14th", "I'm flying to Lisbon on the 12th"),
    ("不好意思，我儿子的篮球课是周六", "我女儿的舞蹈课是周日上午"),
    # an additive particle adds the value beside the older one; a question asks (on 235285a all four repaired)
    ("and Wednesday too", "I go to the gym on Monday"),
    ("周三也去", "我周一去健身房"),
    ("wait, is it 5pm?", "pick up the kids at 4pm"),
    ("等等，周三呢？", "周一去健身房"),
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


@pytest.mark.integration
def test_new_value_for_another_subject_retires_nothing(engine, t0):
    """Data safety: '对了，工资是25号' right after '房租每个月5号交' is a statement about pay day, not a repair of the rent
    day; on 235285a it superseded the rent memory (its one other term 工资 fitted write.repair_bare_terms 1)."""
    rent = engine.add("房租每个月5号交", user_id="u", session_id="s1", now=t0).memory_id
    pay = engine.add("对了，工资是25号", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    assert pay.outcome == "stored" and pay.superseded_ids == ()
    assert engine.memory(rent, user_id="u").status.value == "current"


@pytest.mark.integration
def test_apology_repair_with_only_the_value(engine, t0):
    """'ugh sorry, the 19th' a minute after the vet date replaces that date and nothing else."""
    vet = engine.add("booked Luna's annual vet checkup for the 9th", user_id="u", session_id="s1", now=t0).memory_id
    r = engine.add("ugh sorry, the 19th", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    assert r.superseded_ids == (vet,) and "checkup for the 19th" in engine.memory(r.memory_id, user_id="u").content
