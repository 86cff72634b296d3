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
