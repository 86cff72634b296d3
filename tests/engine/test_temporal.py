"""Relative dates against a reference time (pure) and their effect on ranking (engine)."""

from datetime import datetime, timedelta, timezone

import pytest

from memory_engine.retrieve.temporal import resolve

TZ = timezone(timedelta(hours=8))
WED = datetime(2026, 5, 13, 10, 0, tzinfo=TZ)


def day(r):
    return datetime.fromtimestamp(r.start, TZ).date().isoformat(), datetime.fromtimestamp(r.end, TZ).date().isoformat()


@pytest.mark.unit
@pytest.mark.parametrize("text,expect", [
    ("What did I do last Friday?", ("2026-05-08", "2026-05-09")),
    ("上周五做了什么", ("2026-05-08", "2026-05-09")),
    ("三天前和房东沟通了什么？", ("2026-05-10", "2026-05-11")),
    ("two days ago", ("2026-05-11", "2026-05-12")),
    ("昨天去了医院", ("2026-05-12", "2026-05-13")),
    ("last week", ("2026-05-04", "2026-05-11")),
    ("这周三", ("2026-05-13", "2026-05-14")),
    ("tomorrow", ("2026-05-14", "2026-05-15")),
])
def test_resolve(text, expect):
    assert day(resolve(text, WED)) == expect


@pytest.mark.unit
def test_resolve_none_and_naive_ref():
    assert resolve("I like tea", WED) is None
    with pytest.raises(ValueError):
        resolve("yesterday", datetime(2026, 5, 13))


@pytest.mark.integration
def test_last_friday_picks_the_memory_of_that_day(engine):
    fri = datetime(2026, 5, 8, 16, 0, tzinfo=TZ)
    a = engine.add("Signed the lease for the new office, confirmed move-in on June 1", user_id="u1", now=fri).memory_id
    b = engine.add("Reviewed the floor plan of the new office, decided on an open layout", user_id="u1",
                   now=fri + timedelta(days=4)).memory_id
    q = "What did I do about the new office last Friday?"
    assert engine.retrieve(q, user_id="u1", now=WED, top_k=1).ids == [a]
    assert engine.retrieve("What did I do about the new office?", user_id="u1", now=WED, top_k=1).ids == [b]


@pytest.mark.integration
def test_memory_relative_date_resolved_at_write_time(engine):
    said = datetime(2026, 5, 11, 20, 0, tzinfo=TZ)  # Monday: "昨天" = Sunday the 10th
    m = engine.add("昨天和房东沟通，决定续租一年", user_id="u1", now=said)
    rec = engine.memory(m.memory_id, user_id="u1")
    assert datetime.fromtimestamp(rec.event_start, TZ).date().isoformat() == "2026-05-10"
    engine.add("今天和房东沟通了修热水器的事，决定下周修", user_id="u1", now=WED - timedelta(hours=2))
    assert engine.retrieve("三天前和房东沟通了什么？", user_id="u1", now=WED, top_k=1).ids == [m.memory_id]
