"""Holidays that move every year (issue 16, class 2, session 11; eval_sets/movable_holidays.yaml): the lunar
festivals and Western movable days read from the `holidays` package's calendars (memory.holiday_periods'
'CC:Name' periods, memory.holiday_breaks), the resolver (pure) and what the real engine returns."""

from datetime import date, datetime, timedelta, timezone

import pytest

from memory_engine import EngineConfig
from memory_engine.errors import ValidationError
from memory_engine.retrieve.temporal import DEFAULT_DATES, DateSettings, holiday_table, movable_days, resolve

CN = timezone(timedelta(hours=8))
EST = timezone(timedelta(hours=-5))


def days(r, tz=CN):
    return datetime.fromtimestamp(r.start, tz).date().isoformat(), datetime.fromtimestamp(r.end, tz).date().isoformat()


@pytest.mark.unit
@pytest.mark.parametrize("text,ref,expect", [
    # the 2026 Spring Festival break: eve 16 Feb, festival 17-19, substituted days off 20 and 23 Feb, the weekends
    ("春节期间我跟亲戚吃饭聊了啥", datetime(2026, 3, 10, tzinfo=CN), ("2026-02-14", "2026-02-24")),
    ("过年的时候孩子看烟花什么反应", datetime(2026, 9, 1, tzinfo=CN), ("2026-02-14", "2026-02-24")),
    ("what did we eat over Chinese New Year?", datetime(2026, 3, 1, tzinfo=CN), ("2026-02-14", "2026-02-24")),
    # 除夕 is one day, not the break; "Chinese New Year's Eve" is not 31 December
    ("除夕那天晚上我们家包饺子发生了啥", datetime(2026, 4, 1, tzinfo=CN), ("2026-02-16", "2026-02-17")),
    ("what did we do on Chinese New Year's Eve", datetime(2026, 4, 1, tzinfo=CN), ("2026-02-16", "2026-02-17")),
    # the tense picks the year: asked in October 2026 in the past tense, 春节 is February 2026; planned, 2027's
    ("中秋节那天我在哪吃的饭", datetime(2026, 11, 1, tzinfo=CN), ("2026-09-25", "2026-09-28")),
    ("春节打算回老家", datetime(2026, 10, 1, tzinfo=CN), ("2027-02-05", "2027-02-11")),
    ("去年过年去了哪", datetime(2026, 10, 1, tzinfo=CN), ("2025-01-28", "2025-02-05")),
    # 2025: Mid-Autumn fell on 6 October, inside the National Day break, which the calendar joins into one
    ("去年中秋在哪过的", datetime(2026, 5, 1, tzinfo=CN), ("2025-10-01", "2025-10-09")),
    ("端午那天下午我去河边干嘛了", datetime(2026, 7, 20, tzinfo=CN), ("2026-06-19", "2026-06-22")),
    ("how was the food over Thanksgiving?", datetime(2026, 12, 20, tzinfo=EST), ("2026-11-26", "2026-11-27")),
    ("what did the twins do at Easter?", datetime(2026, 5, 1, tzinfo=EST), ("2026-04-03", "2026-04-07")),
])
def test_movable_holidays(text, ref, expect):
    assert days(resolve(text, ref, DEFAULT_DATES), ref.tzinfo) == expect


@pytest.mark.unit
def test_movable_days_bridge_and_calendar():
    spec = dict(DEFAULT_DATES.holidays)["春节"]
    assert spec.startswith("CN:")
    assert movable_days(spec, 2026, False, 10) == (date(2026, 2, 16), date(2026, 2, 19))
    assert movable_days(spec, 2026, True, 10) == (date(2026, 2, 14), date(2026, 2, 23))
    assert movable_days(spec, 2026, True, 5) == (date(2026, 2, 16), date(2026, 2, 20))  # at most 5 days
    assert movable_days("US:Thanksgiving Day", 2027, False, 10) == (date(2027, 11, 25), date(2027, 11, 25))
    assert movable_days("CN:Thanksgiving Day", 2026, False, 10) is None  # China's calendar has no such day


@pytest.mark.unit
def test_movable_holidays_are_config_and_checked():
    ref = datetime(2026, 3, 10, tzinfo=CN)
    own = EngineConfig().with_overrides({"memory.holiday_breaks": []})
    s = DateSettings.from_config(own.memory)
    assert s.breaks == frozenset()
    assert days(resolve("春节期间我跟亲戚吃饭聊了啥", ref, s)) == ("2026-02-16", "2026-02-20")
    diwali = DateSettings(holidays=holiday_table({"diwali": "IN:Diwali"}))
    assert days(resolve("what did we cook for Diwali?", datetime(2026, 12, 1, tzinfo=CN), diwali)) == (
        "2026-11-08", "2026-11-09")
    with pytest.raises(ValidationError, match="gives no day"):
        holiday_table({"x": "CN:Thanksgiving Day"})
    with pytest.raises(ValidationError, match="holiday_periods"):
        holiday_table({"x": "ZZ:Diwali"})  # no such country
    with pytest.raises(ValidationError, match="holiday_periods"):
        holiday_table({"x": "Lunar new year"})  # neither form
    assert resolve("春节期间", ref, DateSettings(holidays=())) is None


@pytest.mark.unit
@pytest.mark.parametrize("overrides,why", [
    ({"memory.holiday_breaks": ["chinese new year", "thanksgivng"]}, "'thanksgivng' names no holiday"),
    ({"memory.holiday_breaks": ["国庆"]}, "'国庆' names a fixed-date holiday"),
    ({"memory.holiday_periods": {"diwali": "IN:Diwali"}, "memory.holiday_breaks": ["divali"]}, "'divali' names no"),
])
def test_a_holiday_break_that_names_no_movable_holiday_fails_at_config_load(overrides, why):
    from memory_engine.errors import ConfigError

    with pytest.raises(ConfigError, match=why) as e:
        EngineConfig().with_overrides(overrides)
    assert e.value.key == "memory.holiday_breaks"


@pytest.mark.unit
def test_holiday_breaks_that_name_movable_holidays_load():
    cfg = EngineConfig().with_overrides({"memory.holiday_breaks": [" Thanksgiving", "春节"]})
    assert DateSettings.from_config(cfg.memory).breaks == frozenset({"thanksgiving", "春节"})
    # periods replaced: the default breaks name holidays no longer configured and stay inert
    own = EngineConfig().with_overrides({"memory.holiday_periods": {"diwali": "IN:Diwali"}})
    assert "thanksgiving" in DateSettings.from_config(own.memory).breaks
    with_diwali = EngineConfig().with_overrides({"memory.holiday_periods": {"diwali": "IN:Diwali"},
                                                 "memory.holiday_breaks": ["diwali"]})
    assert DateSettings.from_config(with_diwali.memory).breaks == frozenset({"diwali"})


@pytest.mark.integration
@pytest.mark.parametrize("periods,first", [(None, "home"), ({}, "jan")])
def test_spring_festival_dinner_is_found_by_the_holiday(quiet_engine_factory, periods, first):
    # without the holiday calendar the January dinner, which shares more words, comes first
    engine = quiet_engine_factory(None if periods is None else {"memory.holiday_periods": periods})
    ids = {"home": engine.add("昨天在老家跟七大姑八大姨吃了一整天，被问了八百遍什么时候结婚", user_id="u1",
                              now=datetime(2026, 2, 18, 21, 0, tzinfo=CN)).memory_id,
           "jan": engine.add("今天跟亲戚一起吃了顿饭，聊的都是买房的事", user_id="u1",
                             now=datetime(2026, 1, 10, 20, 0, tzinfo=CN)).memory_id}
    got = engine.retrieve("春节期间我跟亲戚吃饭聊了啥", user_id="u1", now=datetime(2026, 3, 10, 10, 0, tzinfo=CN), top_k=2)
    assert got.ids and got.ids[0] == ids[first]
