"""Closings and thanks-with-praise are noise clause by clause (write/noise.py is_pleasantry; issue 16, failure
class 7: Chinese acknowledgements and pleasantries stored as memories); any clause that says something the
user could later ask about keeps the whole text (losing the user's words is the worst bug)."""

from datetime import timedelta

import pytest

from memory_engine.write.noise import is_closing, is_compliment, noise_reason


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "好嘞收到～辛苦啦，今天先到这儿，明天再聊哈", "谢谢小助手，你太贴心了❤️", "omg thank you so much!! 🙏🙏 you're a lifesaver",
    "talk to you tomorrow!", "see you later!", "回头聊", "今天先到这儿吧", "thanks, you're the best", "改天再说～",
])
def test_pleasantries_are_noise(text):
    assert noise_reason(text) == "chit_chat"


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    # the same forms carrying something: a plan, a person, a past event, a time, a question, an instruction
    "好的好的，那就周六上午十点在国金的星巴克见", "thanks! oh btw my daughter's piano recital is on the 14th at 6",
    "I'll talk to him tomorrow", "we talked today", "我们今天聊过了", "他明天再说", "see you at the gym",
    "明天见面再聊合同", "see you tomorrow at 9", "you're a doctor", "你太慢了", "谢谢，明天我要去医院复查",
    "talk tomorrow?", "tomorrow", "明天", "thanks, that's all for today",
])
def test_the_same_forms_with_content_are_kept(text):
    assert noise_reason(text) is None


@pytest.mark.unit
def test_clause_readers():
    assert is_closing("明天再聊哈") and is_closing("talk to you tomorrow")
    assert not is_closing("明天") and not is_closing("I'll talk to him tomorrow") and not is_closing("talk at 9")
    assert is_compliment("you're a lifesaver") and is_compliment("你太贴心了")
    assert not is_compliment("you're a great help with my thesis") and not is_compliment("你是医生吗")


@pytest.mark.integration
def test_pleasantry_not_stored_and_the_plan_beside_it_found(engine, t0):
    plan = engine.add("明天上午九点半要去车管所换驾照", user_id="u", session_id="s1", now=t0)
    bye = engine.add("好嘞收到～辛苦啦，今天先到这儿，明天再聊哈", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    kept = engine.add("好的好的，那就周六上午十点在国金的星巴克见", user_id="u", session_id="s1", now=t0 + timedelta(minutes=2))
    assert bye.memory_id is None and plan.memory_id and kept.memory_id
    hits = engine.retrieve("我明天要干嘛", user_id="u", now=t0 + timedelta(hours=3)).hits
    assert hits and hits[0].memory_id == plan.memory_id
    assert any(h.memory_id == kept.memory_id
               for h in engine.retrieve("周六几点在哪见面", user_id="u", now=t0 + timedelta(days=1)).hits)


@pytest.mark.unit
@pytest.mark.parametrize("text,noise", [
    ("666", True), ("6666!", True), ("good to know", True),  # session 20 red-team round 4
    ("my room is 666", False), ("666块", False), ("good to know, I leave Tuesday for Chicago", False),
])
def test_sixes_and_good_to_know(text, noise):
    assert (noise_reason(text) == "chit_chat") is noise
