"""Requests that need a stored fact (issue 16, facts by intent): a one-line request's date names when the task is
due, not which memories it needs (``intent.requests_match_written_day``), and the shape-balanced example facts of
write/categories.toml (a fact in a habitual frame the reject class also has stays a member of its kind). Real
bundled e5 and in-memory engine."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from memory_engine.config import IntentSection
from memory_engine.write.categories import Categories

_MONTH = ["女儿开始学钢琴了，老师很有耐心", "最近在追一部悬疑剧，每晚看两集"]


def _month_engine(make_engine, t0, overrides=None):
    eng = make_engine(overrides)
    for i, text in enumerate(_MONTH):
        eng.add(text, user_id="u", session_id="s1", now=t0 + timedelta(minutes=i))
    return eng


def test_a_request_dated_this_month_brings_nothing_it_does_not_need(make_engine, t0):
    ask = "帮我把这个月的宽带费交了"
    res = _month_engine(make_engine, t0).retrieve(ask, user_id="u", session_id="s2", now=t0 + timedelta(days=2))
    assert [h.content for h in res.hits] == []


def test_the_written_day_match_is_kept_when_configured(make_engine, t0):
    eng = _month_engine(make_engine, t0, {"intent.requests_match_written_day": True})
    res = eng.retrieve("帮我把这个月的宽带费交了", user_id="u", session_id="s2", now=t0 + timedelta(days=2))
    assert res.hits  # the old behaviour: the month's statements match the request's date


def test_a_question_about_this_month_still_matches_the_written_day(make_engine, t0):
    eng = _month_engine(make_engine, t0)
    res = eng.retrieve("这个月我都干了些什么？", user_id="u", session_id="s2", now=t0 + timedelta(days=2))
    assert any("钢琴" in h.content for h in res.hits)


@pytest.mark.parametrize(("ask", "cat", "fact"), [
    ("book me a flight to Rome for the conference", "travel", "I collect Flying Blue miles, so Air France or KLM please"),
    ("帮我订下周去西安的机票和酒店", "travel", "公司报销标准是经济舱，酒店一晚四百以内"),
    ("what can I take for this toothache", "health", "I've been on lisinopril since my blood pressure went up"),
])
def test_a_fact_in_a_habitual_frame_stays_a_member_of_its_kind(embedder, ask, cat, fact):
    cats, cfg = Categories(embedder, IntentSection()), IntentSection()
    qv = embedder.embed_query(ask)
    assert cat in [lb.name for lb in cats.query_labels(qv)] + [lb.name for lb in cats.need_labels(ask, qv)]
    m = float(cats.membership(np.asarray([embedder.embed_documents([fact])[0]]), cat, qv)[0])
    assert m >= cfg.member_min, (fact, m)
