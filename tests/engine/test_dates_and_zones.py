"""Dates across time zones, doubled relative days, ISO times in UTC and named holidays (issue 16, class 2,
session 10; eval_sets/dates_and_zones.yaml): the resolver (pure) and what the real engine returns."""

from datetime import datetime, timedelta, timezone

import pytest

from memory_engine.errors import ValidationError
from memory_engine.retrieve.temporal import DateSettings, holiday_table, rebase, resolve

CN = timezone(timedelta(hours=8))
PDT = timezone(timedelta(hours=-7))
PST = timezone(timedelta(hours=-8))
SAT = datetime(2026, 6, 13, 10, 0, tzinfo=CN)  # Saturday 13 June 2026


def days(r, tz=CN):
    return datetime.fromtimestamp(r.start, tz).date().isoformat(), datetime.fromtimestamp(r.end, tz).date().isoformat()


@pytest.mark.unit
@pytest.mark.parametrize("text,expect", [
    ("上上周二我陪我妈干嘛去了", ("2026-05-26", "2026-05-27")),  # not 上周二 (2 June)
    ("下下周三出发去云南", ("2026-06-24", "2026-06-25")),  # not 下周三 (17 June)
    ("what did I do the Tuesday before last?", ("2026-06-02", "2026-06-03")),  # a week before 'last Tuesday'
    ("the Friday after next", ("2026-06-26", "2026-06-27")),
    ("my parents fly in the week after next", ("2026-06-22", "2026-06-29")),
    ("下下周要出差", ("2026-06-22", "2026-06-29")),
    ("下下周末去露营", ("2026-06-27", "2026-06-29")),
    ("上上个月", ("2026-04-01", "2026-05-01")),
    ("the month before last", ("2026-04-01", "2026-05-01")),
    ("下下个月", ("2026-08-01", "2026-09-01")),
    ("what did I do two Tuesdays ago", ("2026-06-02", "2026-06-03")),
    ("前几天我去医院干嘛了", ("2026-06-06", "2026-06-13")),  # memory.few_days_back days before, not today
    ("the other day I ran into Tom", ("2026-06-06", "2026-06-13")),
    # an ISO-8601 time a tool restates in UTC is the user's local day of that instant
    ("起飞时间 2026-06-11T23:50:00Z", ("2026-06-12", "2026-06-13")),
    ("2026-06-11T23:50:00+08:00", ("2026-06-11", "2026-06-12")),
    ("2026-06-11T23:50", ("2026-06-11", "2026-06-12")),  # no zone: the user's own clock
])
def test_resolve(text, expect):
    assert days(resolve(text, SAT)) == expect


@pytest.mark.unit
def test_iso_utc_in_los_angeles():
    ref = datetime(2026, 6, 8, 9, 0, tzinfo=PDT)
    assert days(resolve("Reservation confirmed, 2026-06-13T02:30:00Z", ref), PDT) == ("2026-06-12", "2026-06-13")


@pytest.mark.unit
@pytest.mark.parametrize("text,ref,expect", [
    ("国庆期间我去哪玩了", datetime(2026, 10, 15, tzinfo=CN), ("2026-10-01", "2026-10-08")),
    ("国庆打算去西安", datetime(2026, 9, 8, tzinfo=CN), ("2026-10-01", "2026-10-08")),
    ("国庆去了西安", datetime(2026, 9, 8, tzinfo=CN), ("2025-10-01", "2025-10-08")),  # past: last year's
    ("where did we go over the holidays?", datetime(2027, 1, 8, tzinfo=CN), ("2026-12-20", "2027-01-02")),
    ("what are we doing for Christmas Eve", datetime(2026, 12, 10, tzinfo=CN), ("2026-12-24", "2026-12-25")),
    # a year named with it wins over the tense, and over '去年' alone (the whole year)
    ("前年国庆去西藏，到拉萨第二天就高反", datetime(2026, 6, 10, tzinfo=CN), ("2024-10-01", "2024-10-08")),
    ("去年的圣诞在哪过的", datetime(2026, 6, 10, tzinfo=CN), ("2025-12-24", "2025-12-27")),
    ("what did we do for Christmas last year", datetime(2026, 6, 10, tzinfo=CN), ("2025-12-24", "2025-12-27")),
])
def test_holidays(text, ref, expect):
    assert days(resolve(text, ref)) == expect


@pytest.mark.unit
def test_holidays_are_config_and_checked():
    ref = datetime(2026, 10, 15, tzinfo=CN)
    assert resolve("国庆期间我去哪玩了", ref, DateSettings(holidays=())) is None
    assert resolve("I love christmassy stuff", ref) is None
    own = DateSettings(holidays=holiday_table({"Diwali": "11-08..11-08"}))
    assert days(resolve("what did we cook for diwali?", ref, own)) == ("2025-11-08", "2025-11-09")
    with pytest.raises(ValidationError):
        holiday_table({"x": "13-01..13-02"})
    with pytest.raises(ValidationError):
        holiday_table({"x": "Oct 1"})
    from memory_engine import EngineConfig

    cfg = EngineConfig().with_overrides({"memory.holiday_periods": {"diwali": "11-08..11-08"}, "memory.writer_day": False})
    s = DateSettings.from_config(cfg.memory)
    assert s.holidays == (("diwali", "11-08..11-08"),) and s.writer_day is False


@pytest.mark.unit
def test_writer_day_and_rebase_keep_the_day_the_user_lived():
    # 00:15 PDT on 31 October, read after daylight saving ended (PST)
    written = datetime(2026, 10, 31, 0, 15, tzinfo=PDT).timestamp()
    s = DateSettings()
    a, b = s.user_day(written, PST, utc_offset=-7 * 3600)
    assert (datetime.fromtimestamp(a, PST).isoformat(), datetime.fromtimestamp(b, PST).isoformat()) == (
        "2026-10-31T00:00:00-08:00", "2026-11-01T00:00:00-08:00")
    off = DateSettings(writer_day=False)
    assert datetime.fromtimestamp(off.user_day(written, PST, utc_offset=-7 * 3600)[0], PST).date().isoformat() == \
        "2026-10-30"
    day = (datetime(2026, 10, 31, tzinfo=PDT).timestamp(), datetime(2026, 11, 1, tzinfo=PDT).timestamp())
    moved = rebase(*day, -7 * 3600, PST)
    assert datetime.fromtimestamp(moved[0], PST).isoformat() == "2026-10-31T00:00:00-08:00"
    assert rebase(*day, None, PST) == day and rebase(*day, -7 * 3600, PST, off) == day


@pytest.mark.integration
def test_dst_end_keeps_a_late_note_on_its_day(engine):
    pumpkin = engine.add("finally done carving the pumpkins for the kids, my hands are orange", user_id="u1",
                         now=datetime(2026, 10, 31, 0, 15, tzinfo=PDT)).memory_id
    close = engine.add("stayed late at work for the quarter close, vending machine chips for dinner", user_id="u1",
                       now=datetime(2026, 10, 30, 20, 0, tzinfo=PDT)).memory_id
    assert engine.memory(pumpkin, user_id="u1").utc_offset == -7 * 3600
    asked = datetime(2026, 11, 5, 10, 0, tzinfo=PST)
    assert engine.retrieve("what did I do on October 31?", user_id="u1", now=asked, top_k=1).ids == [pumpkin]
    assert engine.retrieve("what was I up to on Oct 30", user_id="u1", now=asked, top_k=1).ids == [close]


@pytest.mark.integration
def test_digits_of_a_date_do_not_match_numbers(engine):
    glasses = engine.add("picked up the new glasses from the optometrist today", user_id="u1",
                         now=datetime(2026, 6, 3, 19, 0, tzinfo=PDT)).memory_id
    engine.add("found a new optometrist, the office is at 603 Market St, suite 3", user_id="u1",
               now=datetime(2026, 6, 8, 19, 0, tzinfo=PDT))
    engine.add("my contact lenses are the monthly ones, -3.25 both eyes", user_id="u1",
               now=datetime(2026, 5, 20, 19, 0, tzinfo=PDT))
    got = engine.retrieve("what did I do on June 3?", user_id="u1", now=datetime(2026, 6, 10, 10, 0, tzinfo=PDT),
                          top_k=1)
    assert got.ids == [glasses]
