"""Relative FUTURE dates (issue 16, 'understanding time'): a plan's weekday is the coming
one, a past statement's the past one; 下周X / 后天 / 下个月N号 resolve; a question about
that day finds the plan; a dateless correction keeps the date of what it corrects."""

from datetime import datetime, timedelta, timezone

import pytest

from memory_engine.retrieve.temporal import prefers_future, resolve

TZ = timezone(timedelta(hours=8))
THU = datetime(2027, 3, 11, 21, 30, tzinfo=TZ)  # a Thursday evening, UTC+8 (13:30 UTC)


def day(r):
    return datetime.fromtimestamp(r.start, TZ).date().isoformat(), datetime.fromtimestamp(r.end, TZ).date().isoformat()


@pytest.mark.unit
@pytest.mark.parametrize("text,expect", [
    # future statements: the coming weekday (old code: the past one, or nothing)
    ("My sister is flying in on Sunday", ("2027-03-14", "2027-03-15")),
    ("I'm going to repaint the bathroom Saturday", ("2027-03-13", "2027-03-14")),
    ("Piano recital for Emma next Wednesday at 6pm", ("2027-03-17", "2027-03-18")),
    ("I booked a table for Friday", ("2027-03-12", "2027-03-13")),
    ("Driving my dad to the eye clinic on Monday", ("2027-03-15", "2027-03-16")),
    ("What do I have on Friday?", ("2027-03-12", "2027-03-13")),
    ("the plumber comes in 4 days", ("2027-03-15", "2027-03-16")),
    ("周日要带孩子去打疫苗", ("2027-03-14", "2027-03-15")),
    ("下个星期二交季度报告", ("2027-03-16", "2027-03-17")),
    ("下周五我打算请假", ("2027-03-19", "2027-03-20")),
    ("后天搬家", ("2027-03-13", "2027-03-14")),
    ("大后天出差去深圳", ("2027-03-14", "2027-03-15")),
    ("下个月5号还信用卡", ("2027-04-05", "2027-04-06")),
    ("下周有什么安排？", ("2027-03-15", "2027-03-22")),
    ("我这周末准备去露营", ("2027-03-13", "2027-03-15")),
    ("next month", ("2027-04-01", "2027-05-01")),
    ("周末要去看房", ("2027-03-13", "2027-03-15")),
    ("Any plans for the weekend?", ("2027-03-13", "2027-03-15")),
    # past statements keep resolving to the past
    ("We grabbed dinner with Leo on Monday", ("2027-03-08", "2027-03-09")),
    ("What did I eat on Friday?", ("2027-03-05", "2027-03-06")),
    ("周一去了健身房", ("2027-03-08", "2027-03-09")),
    ("上周五加班到很晚", ("2027-03-05", "2027-03-06")),
    ("前天丢了钥匙", ("2027-03-09", "2027-03-10")),
    ("周末去看了房", ("2027-03-06", "2027-03-08")),
    ("We went sailing over the weekend", ("2027-03-06", "2027-03-08")),
    ("yesterday I renewed my passport", ("2027-03-10", "2027-03-11")),
])
def test_resolve_future_and_past(text, expect):
    assert day(resolve(text, THU)) == expect


@pytest.mark.unit
def test_tense_is_judged_on_the_clause_that_names_the_day():
    text = "I visited grandma on Saturday and she is coming over on Tuesday"
    assert not prefers_future(text, text.index("on Saturday"))
    assert prefers_future(text, text.index("on Tuesday"))
    assert resolve("一周一次去游泳", THU) is None  # '一周一' is 'once a week', not Monday
    # a habit names no day; a bare weekend without any tense cue is not dated either
    assert resolve("I always go to the gym on Friday evenings", THU) is None
    assert resolve("我喜欢看恐怖片，周末经常一个人看", THU) is None
    assert resolve("周末推荐一部电影", THU) is None


@pytest.mark.integration
def test_plans_are_found_by_the_day_they_happen(engine):
    u = "fut"
    sister = engine.add("My sister is flying in on Sunday", user_id=u, now=THU).memory_id
    report = engine.add("下周二要交季度报告", user_id=u, now=THU + timedelta(minutes=1)).memory_id
    recital = engine.add("Emma's piano recital is next Wednesday at 6pm", user_id=u,
                         now=THU + timedelta(minutes=2)).memory_id
    gym = engine.add("I went to the gym on Monday", user_id=u, now=THU + timedelta(minutes=3)).memory_id
    engine.add("I prefer oolong tea", user_id=u, now=THU + timedelta(minutes=4))
    rec = engine.memory(sister, user_id=u)
    assert datetime.fromtimestamp(rec.event_start, TZ).date().isoformat() == "2027-03-14"
    asked = THU + timedelta(days=1)  # Friday 12 March
    assert engine.retrieve("What's happening on March 14?", user_id=u, now=asked, top_k=1).ids == [sister]
    assert engine.retrieve("3月16号我要做什么？", user_id=u, now=asked, top_k=1).ids == [report]
    assert engine.retrieve("What's on next Wednesday?", user_id=u, now=asked, top_k=1).ids == [recital]
    assert engine.retrieve("What did I do on March 8?", user_id=u, now=asked, top_k=1).ids == [gym]


@pytest.mark.integration
def test_a_dateless_correction_keeps_the_date_it_corrects(engine):
    u = "fix"
    old = engine.add("Dentist appointment next Tuesday at 3pm", user_id=u, now=THU).memory_id
    engine.add("I like hiking in the hills", user_id=u, now=THU + timedelta(minutes=1))
    r = engine.add("Actually the dentist appointment is at 4pm, not 3pm", user_id=u, now=THU + timedelta(hours=1))
    new = engine.memory(r.memory_id, user_id=u)
    assert old in r.superseded_ids or old in new.metadata.get("_corrects", ())  # retired, or kept and linked
    assert datetime.fromtimestamp(new.event_start, TZ).date().isoformat() == "2027-03-16"
    hits = engine.retrieve("What do I have on March 16?", user_id=u, now=THU + timedelta(days=2), top_k=1)
    assert hits.ids == [r.memory_id]
