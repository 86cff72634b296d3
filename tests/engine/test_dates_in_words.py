"""Dates in users' own words (issue 16, failure class 2; eval_sets/dates_in_the_wild.yaml):
the resolver (pure) and its effect on what the real engine files and returns."""

from datetime import datetime, timedelta, timezone

import pytest

from memory_engine.retrieve.temporal import DateSettings, resolve

TZ = timezone(timedelta(hours=8))
WED = datetime(2026, 6, 10, 12, 0, tzinfo=TZ)  # Wednesday 10 June 2026


def days(r, tz=TZ):
    """(first day, day after the last) of a DateRange as ISO dates in ``tz``."""
    return datetime.fromtimestamp(r.start, tz).date().isoformat(), datetime.fromtimestamp(r.end, tz).date().isoformat()


@pytest.mark.unit
@pytest.mark.parametrize("text,expect", [
    ("what did I do the weekend before last?", ("2026-05-30", "2026-06-01")),
    ("上上周末去了哪", ("2026-05-30", "2026-06-01")),
    ("what did I do on the 3rd?", ("2026-06-03", "2026-06-04")),
    ("3号那天我请假去办了什么事？", ("2026-06-03", "2026-06-04")),
    ("what am I doing on the 12th?", ("2026-06-12", "2026-06-13")),
    ("12号我要干嘛？", ("2026-06-12", "2026-06-13")),
    ("how was my knee in early March?", ("2026-03-01", "2026-03-11")),
    ("late May I was in Lisbon", ("2026-05-22", "2026-06-01")),
    ("这个月月初交了什么钱", ("2026-06-01", "2026-06-11")),
    ("上个月底我去哪玩了", ("2026-05-22", "2026-06-01")),
    ("3月中旬", ("2026-03-11", "2026-03-21")),
    ("去年这个时候我在干嘛", ("2025-05-27", "2025-06-25")),
    ("what was I doing this time last year?", ("2025-05-27", "2025-06-25")),
    ("what did I book in May?", ("2026-05-01", "2026-06-01")),
    ("五月份去了哪", ("2026-05-01", "2026-06-01")),
    ("next Friday I fly to Osaka", ("2026-06-19", "2026-06-20")),
    ("my mom is staying with us for three weeks starting today", ("2026-06-10", "2026-07-01")),
    ("从下周一开始要去总部封闭培训两周", ("2026-06-15", "2026-06-29")),
    ("booked my physical for 3/6", ("2026-03-06", "2026-03-07")),
    ("版本发布定在 2026-06-11 22:00 UTC", ("2026-06-12", "2026-06-13")),
])
def test_resolve_dates_in_words(text, expect):
    assert days(resolve(text, WED)) == expect


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "what did May lend me?",  # May the colleague
    "I may march in the parade",  # the verb, the modal
    "周末愉快！",  # a greeting
    "坐地铁1号线到人民广场",  # a subway line
    "住在5号楼",
    "年底要搬家",  # the year's end names no month
    "open 24/7",
    "I like tea",
])
def test_not_a_date(text):
    assert resolve(text, WED) is None


@pytest.mark.unit
def test_duration_is_not_read_into_an_ago():
    # '两周前' is when it happened, not a stay of two weeks
    assert days(resolve("两周前去了趟上海", WED)) == ("2026-05-25", "2026-06-01")


@pytest.mark.unit
def test_settings_slash_order_day_start_next_weekday_month_parts():
    assert days(resolve("dentist on 3/6", WED, DateSettings(slash_dates="dmy"))) == ("2026-06-03", "2026-06-04")
    assert resolve("dentist on 3/6", WED, DateSettings(slash_dates="off")) is None
    late = datetime(2026, 6, 11, 0, 30, tzinfo=TZ)
    night_owl = DateSettings(day_start_hour=4)
    assert days(resolve("had my visa interview this morning", late, night_owl)) == ("2026-06-10", "2026-06-11")
    assert days(resolve("tomorrow I sleep in", late, night_owl)) == ("2026-06-11", "2026-06-12")
    # the default: days end at midnight ('this morning' in the past tense is the morning that just passed, by
    # memory.day_part_hours, test_part_of_today_not_begun_yet)
    assert days(resolve("went to the gym today", late)) == ("2026-06-11", "2026-06-12")
    assert days(resolve("had my visa interview this morning", late, DateSettings(day_parts=()))) == (
        "2026-06-11", "2026-06-12")
    assert days(resolve("next Friday I fly", WED, DateSettings(next_weekday="nearest"))) == ("2026-06-12", "2026-06-13")
    assert days(resolve("early March", WED, DateSettings(month_part_days=5))) == ("2026-03-01", "2026-03-06")
    assert days(resolve("去年这个时候", WED, DateSettings(year_back_days=0))) == ("2025-06-10", "2025-06-11")


@pytest.mark.unit
def test_settings_are_config_fields():
    from memory_engine import EngineConfig

    cfg = EngineConfig().with_overrides({"memory.slash_dates": "dmy", "memory.day_start_hour": 0,
                                         "retrieval.date_mismatch": 1.0})
    s = DateSettings.from_config(cfg.memory)
    assert (s.slash_dates, s.day_start_hour, s.next_weekday) == ("dmy", 0, "next_week")
    assert cfg.retrieval.date_mismatch == 1.0


@pytest.mark.integration
def test_note_after_local_midnight_is_filed_under_the_day_before(make_engine):
    """With ``memory.day_start_hour=4`` (not the default: 0 files it under the new local day, see
    tests/engine/test_write_keep_integration.py::test_time_zone_decides_the_local_day)."""
    engine = make_engine({"memory.day_start_hour": 4})
    late = datetime(2026, 6, 11, 0, 30, tzinfo=TZ)
    visa = engine.add("had my visa interview this morning, went fine, so tired now", user_id="u1", now=late).memory_id
    rec = engine.memory(visa, user_id="u1")
    assert datetime.fromtimestamp(rec.event_start, TZ).date().isoformat() == "2026-06-10"
    dry = engine.add("picked up my dry cleaning today", user_id="u1", now=late + timedelta(hours=18)).memory_id
    asked = late + timedelta(days=3)
    assert engine.retrieve("what did I do on June 10?", user_id="u1", now=asked, top_k=1).ids == [visa]
    assert engine.retrieve("what did I do on June 11?", user_id="u1", now=asked, top_k=1).ids == [dry]


@pytest.mark.integration
def test_memory_of_the_named_day_beats_another_day_sharing_more_words(make_engine):
    said_then = datetime(2026, 5, 27, 22, 0, tzinfo=TZ)
    for mismatch, expect_first in ((0.6, "hz"), (1.0, "nj")):
        # the control runs without the general-IDF term weights (retrieval.zh_term_prior): with them the shared
        # '去' weighs 0.08 and the named week wins even with the discount off
        engine = make_engine({"retrieval.date_mismatch": mismatch, "retrieval.zh_term_prior": mismatch < 1.0})
        hz = engine.add("这周一直在杭州出差，天天跑客户", user_id="u1", now=said_then).memory_id
        nj = engine.add("这周又被派去南京出差了，住在新街口", user_id="u1", now=said_then + timedelta(days=7)).memory_id
        got = engine.retrieve("上上周我是去哪出差来着", user_id="u1", now=WED, top_k=1).ids
        # with the discount off (1.0) the other week's memory, which shares '出差' and '去', wins as before
        assert got == [{"hz": hz, "nj": nj}[expect_first]]


@pytest.mark.integration
def test_future_plan_found_by_its_day_of_month_and_nothing_for_an_empty_day(engine):
    said = datetime(2026, 6, 3, 20, 0, tzinfo=TZ)
    osaka = engine.add("next Friday I fly to Osaka for the conference, need to pack the adapter", user_id="u1",
                       now=said).memory_id
    engine.add("dentist appointment this Friday at 3", user_id="u1", now=said + timedelta(minutes=5))
    monday = datetime(2026, 6, 8, 9, 0, tzinfo=TZ)
    assert engine.retrieve("what am I doing on the 12th?", user_id="u1", now=monday, top_k=1).ids == [osaka]
    engine.add("got my flu shot at the pharmacy today", user_id="u1", now=said - timedelta(days=1))
    assert engine.retrieve("what did I do on June 20?", user_id="u1", now=monday + timedelta(days=20)).ids == []


@pytest.mark.integration
def test_a_memory_naming_no_day_is_not_discounted_by_a_dated_question(engine):
    # the day in the question is context for the trip; the standing habit answers it (eval_sets/multi_hop.yaml)
    t = datetime(2026, 5, 1, 8, 0, tzinfo=TZ)
    med = engine.add("我每天早上八点要吃降压药，不能漏", user_id="u1", now=t, memory_type="procedural").memory_id
    flight = engine.add("已确认下周二早上七点的航班飞广州出差", user_id="u1", now=t + timedelta(days=3)).memory_id
    engine.add("健身房年卡确认续费了", user_id="u1", now=t + timedelta(days=4))
    got = engine.retrieve("下周二早上飞广州出差，吃药要注意什么？", user_id="u1", now=t + timedelta(days=5)).ids
    assert med in got and flight in got


@pytest.mark.unit
@pytest.mark.parametrize("text,expect", [
    # a past-tense part of today said before it began (00:30): that part of the day before
    ("had my visa interview this morning, went fine", ("2026-06-10", "2026-06-11")),
    ("had a blast tonight with the team", ("2026-06-10", "2026-06-11")),
    ("今天上午面试了，感觉还行", ("2026-06-10", "2026-06-11")),
    ("what did I do this afternoon?", ("2026-06-10", "2026-06-11")),
    # a coming or untensed one stays today; plain 'today' has begun at 00:30
    ("I have a meeting this morning", ("2026-06-11", "2026-06-12")),
    ("今晚早点睡", ("2026-06-11", "2026-06-12")),
    ("went to the gym today", ("2026-06-11", "2026-06-12")),
])
def test_part_of_today_not_begun_yet(text, expect):
    late = datetime(2026, 6, 11, 0, 30, tzinfo=TZ)
    assert days(resolve(text, late)) == expect
    # memory.day_part_hours {} = off: the calendar day
    assert days(resolve(text, late, DateSettings(day_parts=()))) == ("2026-06-11", "2026-06-12")


@pytest.mark.unit
@pytest.mark.parametrize("text", ["watched Dune 2 tonight, rated it 4/5", "had fun this evening", "今天晚上吃了火锅"])
def test_part_of_today_in_daytime_stays_today(text):
    # said at 09:00 the speaker's day has turned (the morning began at 5): 'tonight' is no report of last night,
    # however odd the tense
    day = datetime(2026, 6, 11, 9, 0, tzinfo=TZ)
    assert days(resolve(text, day)) == ("2026-06-11", "2026-06-12")


@pytest.mark.unit
def test_day_part_hours_config():
    from memory_engine import EngineConfig
    from memory_engine.errors import ConfigError

    cfg = EngineConfig().with_overrides({"memory.day_part_hours": {"morning": 6}})
    assert DateSettings.from_config(cfg.memory).day_parts == (("morning", 6),)
    with pytest.raises(ConfigError):
        EngineConfig().with_overrides({"memory.day_part_hours": {"brunch": 10}})
    with pytest.raises(ConfigError):
        EngineConfig().with_overrides({"memory.day_part_hours": {"evening": 24}})


@pytest.mark.integration
@pytest.mark.parametrize("told_day_match", [0.5, 0.0])
def test_report_of_an_earlier_day_is_about_that_day(make_engine, told_day_match):
    """At the default day boundary (midnight): the visa note typed at 00:30 on 11 June is about 10 June, and
    for 11 June it ranks below that day's own memories (retrieval.told_day_match); the plan made on 11 June
    ('move-in on June 20') is about the day it was made too."""
    engine = make_engine({"retrieval.told_day_match": told_day_match})
    late = datetime(2026, 6, 11, 0, 30, tzinfo=TZ)
    visa = engine.add("had my visa interview this morning, went fine, so tired now", user_id="u1", now=late).memory_id
    dry = engine.add("picked up my dry cleaning today", user_id="u1", now=late + timedelta(hours=18)).memory_id
    lease = engine.add("Signed the lease for the flat, move-in on June 20", user_id="u1",
                       now=late + timedelta(hours=10)).memory_id
    asked = late + timedelta(days=3)
    assert engine.retrieve("what did I do on June 10?", user_id="u1", now=asked, top_k=1).ids == [visa]
    got = engine.retrieve("what did I do on June 11?", user_id="u1", now=asked, top_k=3).ids
    assert set(got[:2]) == {dry, lease}


@pytest.mark.unit
@pytest.mark.parametrize("text,expect", [
    # an offset counted from the date the text names, read as 'last week' / 'two weeks ago' / ... on that date
    ("what did John do the week before August 3, 2023 with his kids?", ("2023-07-24", "2023-07-31")),
    ("the puppy she got two weeks before August 11, 2023", ("2023-07-24", "2023-07-31")),
    ("what did Maria do last weekend before April 10, 2023?", ("2023-04-08", "2023-04-10")),
    ("what did I do the day after June 3?", ("2026-06-04", "2026-06-05")),
    ("three days before 3 June I was in Lisbon", ("2026-05-31", "2026-06-01")),
    ("我6月3号的前一天干嘛了", ("2026-06-02", "2026-06-03")),
    ("6月11号前两周买了什么", ("2026-05-25", "2026-06-01")),
    # no offset: the date itself ('前' alone is a deadline)
    ("6月3号前交报告", ("2026-06-03", "2026-06-04")),
    ("what did I do on June 3?", ("2026-06-03", "2026-06-04")),
])
def test_offset_from_a_named_date(text, expect):
    assert days(resolve(text, WED)) == expect


@pytest.mark.integration
@pytest.mark.parametrize("question", ["今天要交什么？", "今天有什么要交的？", "What's due today?"])
def test_a_day_named_by_a_stop_word_counts_as_matched(engine, question):
    """'今天' is a stop word of Chinese (no content term), where 'today' is one in English: the date phrase counts as
    one covered term, so '今天要交什么？' finds the report due today as "What's due today?" does (issue 16 session 19,
    red-team: the gate was shut at relevance 0.15)."""
    due = engine.add("下周三之前要把季度报告交给老板", user_id="u1", now=datetime(2026, 6, 3, 9, 0, tzinfo=TZ)).memory_id
    engine.add("我一般坐地铁二号线上班", user_id="u1", now=datetime(2026, 6, 1, 9, 0, tzinfo=TZ))
    assert engine.retrieve(question, user_id="u1", now=WED + timedelta(hours=9), top_k=1).ids == [due]


@pytest.mark.unit
def test_coverage_with_a_stop_word_date():
    from memory_engine.retrieve.temporal import coverage_with_date

    assert coverage_with_date(frozenset({"交"}), frozenset(), ("季度", "报告"), "今天") == 0.5
    assert coverage_with_date(frozenset(), frozenset(), (), "今天") == 1.0
    # a phrase whose words are query terms counts them, as before ('June 10': 2 of 3)
    assert coverage_with_date(frozenset({"june", "10", "do"}), frozenset({"june", "10"}), (), "June 10") == 2 / 3
