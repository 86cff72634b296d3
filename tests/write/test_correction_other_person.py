"""A correction about another person retires that person's memory, never the speaker's own (issue 16,
failure class 9). On 1a67098 "说错了，老王住的是重庆，不是成都" archived both "同事老王也住成都" and the
speaker's "我住在成都高新区，租的房子" (they share 住 and 成都): data loss."""

from datetime import timedelta

import pytest

from memory_engine.text import people


@pytest.mark.unit
def test_people_names_persons_and_relatives():
    assert {"老王"} <= people("说错了，老王住的是重庆") and "elder_sister" in people("my sister works at Grab")
    assert people("I live in Chengdu") == frozenset()  # jieba may tag a place (高新区) nr: no assertion on zh here


@pytest.mark.integration
@pytest.mark.parametrize("mine,theirs,fix", [
    ("我住在成都高新区，租的房子", "同事老王也住成都", "说错了，老王住的是重庆，不是成都"),
    ("我在华为上班，做测试", "我姐在腾讯上班", "不对，我姐是在阿里上班，不是腾讯"),
])
def test_correction_about_someone_else_keeps_mine(engine, t0, mine, theirs, fix):
    me = engine.add(mine, user_id="u", session_id="s1", now=t0).memory_id
    them = engine.add(theirs, user_id="u", session_id="s1", now=t0 + timedelta(minutes=1)).memory_id
    r = engine.add(fix, user_id="u", session_id="s1", now=t0 + timedelta(minutes=2))
    assert me not in r.superseded_ids
    assert engine.memory(me, user_id="u").status.value == "current"
    assert them in r.superseded_ids or any(e.get("id") == them for e in r.evidence)


@pytest.mark.integration
def test_a_companion_is_no_subject(engine, t0):
    """The person must be the corrected clause's subject: the child watching along does not stop the
    speaker's own 'no more horror films' from retiring 'I like horror films' (negation-constraints)."""
    old = engine.add("我喜欢看恐怖片，周末经常一个人看", user_id="u", now=t0).memory_id
    r = engine.add("最近孩子跟我一起看电影，以后不要再给我推荐恐怖片了", user_id="u", now=t0 + timedelta(days=5))
    assert r.superseded_ids == (old,)


@pytest.mark.integration
@pytest.mark.parametrize("theirs,mine,fix", [
    ("My brother is moving to Seattle next month", "I live in Portland",
     "Actually I moved to Seattle last month, so I don't live in Portland anymore"),
    ("我哥下个月要搬到杭州", "我住在南京", "其实我上个月就搬到杭州了，已经不住南京了"),
])
def test_my_correction_never_archives_a_relatives_memory(engine, t0, theirs, mine, fix):
    """Data loss (session 19 red-team): the user's own correction archived 'My brother is moving to Seattle next
    month' on month / move / seattle (similarity 0.38), a memory about a person the correction never names."""
    them = engine.add(theirs, user_id="u", session_id="s1", now=t0).memory_id
    engine.add(mine, user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    r = engine.add(fix, user_id="u", session_id="s2", now=t0 + timedelta(days=30))
    assert them not in r.superseded_ids, r.evidence
    assert engine.memory(them, user_id="u").status.value == "current"


@pytest.mark.unit
def test_companions_are_no_subject():
    from memory_engine.text import companions

    assert companions("我跟王医生约了周二看牙") == {"王医生"} and "husband" in companions("我和老公在备孕")
    assert companions("My wife and I are trying for a baby") == {"wife"} and companions("my sister works") == set()
