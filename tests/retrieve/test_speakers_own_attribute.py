"""A question about a relative's attribute is not answered by the speaker's own (issue 16, class 3: never-stored
near misses; session 20 red-team): '我的生日是3月15号' answered '我老公生日是哪天' at relevance 0.58, since the
relative mismatch looked only at memories that name a relative. The possessor right before the shared noun decides
(text.possessor), and the reverse: the husband's birthday no longer answers '我生日是哪天' first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.text import possessor

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)


@pytest.mark.parametrize("text,term,who", [
    ("我的生日是3月15号", "生日", "speaker"), ("my birthday is March 15", "birthday", "speaker"),
    ("我老公生日是哪天", "生日", "relative"), ("我老公的生日是哪天", "生日", "relative"),
    ("when is my husband's birthday?", "birthday", "relative"), ("I work at Google", "work", None),
    ("生日快乐", "生日", None),
])
def test_possessor(text, term, who):
    assert possessor(text, term) == who


def _add(engine, user, texts):
    return [engine.add(t, user_id=user, session_id=f"s{i}", now=T0 + timedelta(days=i)).memory_id
            for i, t in enumerate(texts)]


@pytest.mark.integration
@pytest.mark.parametrize("mine,query", [
    ("我的生日是3月15号", "我老公生日是哪天"),
    ("my birthday is March 15", "when is my husband's birthday?"),
])
def test_the_speakers_own_attribute_answers_no_relative(engine, mine, query):
    _add(engine, "u", [mine, "I play tennis on Sundays"])
    assert engine.retrieve(query, user_id="u", now=T0 + timedelta(days=9)).hits == []


@pytest.mark.integration
def test_each_birthday_answers_its_owner(engine):
    mine, his = _add(engine, "u", ["我的生日是3月15号", "我老公的生日是5月2号"])
    now = T0 + timedelta(days=9)
    assert [h.memory_id for h in engine.retrieve("我老公生日是哪天", user_id="u", now=now).hits][:1] == [his]
    assert [h.memory_id for h in engine.retrieve("我生日是哪天", user_id="u", now=now).hits][:1] == [mine]
