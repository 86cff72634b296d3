"""A weekday in a note with no subject and no tense cue is the coming one (issue 16, 'understanding time';
session 19 red-team): 'Dentist on Monday' typed on a Friday resolved to the Monday before, so "what do I have on
Monday?" asked that weekend missed it. A clause with a subject keeps the past reading ('I ate sushi on Monday':
an irregular past form is no tense cue); ``memory.note_weekday`` = 'past' restores the old reading."""

from datetime import datetime, timedelta, timezone

import pytest

from memory_engine.retrieve.temporal import DateSettings, is_note, resolve

TZ = timezone(timedelta(hours=8))
FRI = datetime(2026, 6, 5, 18, 0, tzinfo=TZ)  # a Friday evening, UTC+8


def _day(text, settings=DateSettings()):
    r = resolve(text, FRI, settings)
    return None if r is None else datetime.fromtimestamp(r.start, TZ).date().isoformat()


@pytest.mark.unit
@pytest.mark.parametrize("text,expect", [
    ("Dentist on Monday", "2026-06-08"),
    ("Lunch with Sam on Thursday", "2026-06-11"),
    ("dentist appointment on Monday?", "2026-06-08"),
    # a subject, or a tense cue: as before
    ("I ate sushi on Monday", "2026-06-01"),
    ("My flight was on Monday", "2026-06-01"),
    ("Went hiking on Monday", "2026-06-01"),
    ("What did I do on Monday?", "2026-06-01"),
])
def test_a_note_means_the_coming_weekday(text, expect):
    assert _day(text) == expect


@pytest.mark.unit
def test_past_setting_keeps_the_old_reading():
    assert _day("Dentist on Monday", DateSettings(note_weekday="past")) == "2026-06-01"
    assert is_note("Dentist on Monday") and not is_note("I ate sushi on Monday")


@pytest.mark.integration
def test_a_note_is_found_by_the_day_it_names(engine):
    w = engine.add("Dentist on Monday", user_id="u", now=FRI)
    hits = engine.retrieve("What do I have on Monday?", user_id="u", now=FRI + timedelta(days=1)).hits
    assert [h.memory_id for h in hits][:1] == [w.memory_id]
    rec = engine.memory(w.memory_id, user_id="u")
    assert datetime.fromtimestamp(rec.event_start, TZ).date().isoformat() == "2026-06-08"


@pytest.mark.unit
@pytest.mark.parametrize("text,expect", [
    # a Chinese question's bare 周X is this week's (session 20 red-team: '我周一那天加班到几点？' got no date)
    ("我周一那天加班到几点？", "2026-06-01"),
    ("我周一加班到几点？", "2026-06-01"),
    # 会 of 开会 / 例会 is a noun, no future cue
    ("周三开会讲了什么", "2026-06-03"),
    ("周三的例会几点开始？", "2026-06-03"),
    # a statement keeps its cue, or stays undated without one
    ("我周一要去面试", "2026-06-08"),
    ("我周三会去开会", "2026-06-10"),
    ("周一面试", None),
])
def test_chinese_weekday_readings(text, expect):
    assert _day(text) == expect
