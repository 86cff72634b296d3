"""Hygiene of what is kept (issue 16, failure class 7): Chinese acknowledgements with glue words
are noise; two statements of different values of one subject never merge as duplicates."""

from datetime import timedelta

import pytest

from memory_engine.write.hygiene import different_values, same_meaning
from memory_engine.write.noise import noise_reason


@pytest.mark.unit
@pytest.mark.parametrize("text", ["行吧那就先这样", "okk 谢啦", "好嘞，收到～", "嗯嗯，明白了，辛苦啦", "得嘞，麻烦你了",
                                  "好嘞~谢谢小助手", "好的老板", "好的好的，我知道了", "行，就这么办", "okok"])
def test_chinese_acknowledgements_with_glue_words_are_noise(text):
    assert noise_reason(text) == "chit_chat"


@pytest.mark.unit
@pytest.mark.parametrize("text", ["笑死", "哈哈哈太好笑了", "笑哭了哈哈", "嘿嘿嘿", "绝了绝了"])
def test_laughter_is_an_acknowledgement(text):
    assert noise_reason(text) == "chit_chat"


@pytest.mark.unit
@pytest.mark.parametrize("text", ["笑死我了，我妈把我的猫叫成狗", "他讲的笑话笑死我了", "同事说绝了这家店的烤鸭"])
def test_laughter_with_a_story_is_kept(text):
    assert noise_reason(text) is None


@pytest.mark.unit
@pytest.mark.parametrize("text", ["那就周五见", "我先走了", "安排一下周五的会议", "谢谢你帮我订了酒店", "老板说下周一开会",
                                  "我知道了他的电话", "小助手你好，我想订一张去上海的票"])
def test_glue_words_do_not_swallow_content(text):
    assert noise_reason(text) is None


@pytest.mark.unit
def test_different_values_never_have_the_same_meaning():
    window, aisle = {"坐", "高铁", "喜欢", "靠窗", "座位"}, {"坐", "高铁", "喜欢", "靠", "道", "座位", "方便"}
    assert different_values(aisle, window)
    kw = dict(repeat_similarity=0.92, reworded_similarity=0.85, term_overlap=0.3)
    assert same_meaning(0.95, aisle, window, **kw)  # similarity alone would merge them
    assert not same_meaning(0.95, aisle, window, distinct_terms=True, **kw)
    assert same_meaning(0.95, {"花生", "过敏"}, {"花生", "过敏"}, distinct_terms=True, **kw)  # a rewording still merges


@pytest.mark.integration
def test_a_flip_keeps_both_values(engine, t0):
    a = engine.add("坐高铁我喜欢靠窗的座位", user_id="u", now=t0)
    b = engine.add("坐高铁我现在喜欢靠过道的座位，方便起身", user_id="u", now=t0 + timedelta(days=15))
    assert a.outcome == "stored" and b.outcome == "stored" and b.memory_id != a.memory_id
    again = engine.add("坐高铁我喜欢靠窗的座位", user_id="u", now=t0 + timedelta(days=40))
    assert again.outcome == "merged" and again.memory_id == a.memory_id


@pytest.mark.unit
@pytest.mark.parametrize("text,uncertain", [
    ("我每天坐二号线去上班，大概四十分钟", False), ("I commute about 40 minutes each way", False),
    ("我每天走路大约 30 分钟", False), ("大概下个月去杭州", True), ("我大概会去吧", True), ("maybe I will try yoga", True),
])
def test_an_approximate_quantity_is_no_hedge(text, uncertain):
    from memory_engine.write import rules

    sig = rules.signals(text)
    assert sig.uncertain is uncertain and rules.hedged(text, sig) is uncertain


@pytest.mark.integration
def test_a_rewording_merges_across_the_gates_kind_guess_and_an_opposite_never(engine, t0):
    a = engine.add("我不吃羊肉，一点都不能碰", user_id="u", session_id="s1", now=t0)
    b = engine.add("羊肉我是一点都不吃的", user_id="u", session_id="s2", now=t0 + timedelta(days=2))
    assert (a.memory_type, b.memory_type) == ("episodic", "semantic")  # the gate read '我是' as a factual statement
    assert b.outcome == "merged" and b.memory_id == a.memory_id
    kept = engine.memory(a.memory_id, user_id="u")
    assert kept.memory_type.value == "semantic" and kept.importance >= b.importance  # the more curated reading
    c = engine.add("我吃羊肉，一点都不怕膻", user_id="u", session_id="s2", now=t0 + timedelta(days=3))
    assert c.outcome == "stored"


@pytest.mark.unit
@pytest.mark.parametrize("text", ["yesss", "yea makes sense", "fair enough", "ahh i see", "ok makes sense thx", "my bad",
                                  "哦哦哦原来是这样", "没错没错", "说得对"])
def test_stretched_words_and_backchannel_phrases_are_noise(text):
    assert noise_reason(text) == "chit_chat"


@pytest.mark.unit
@pytest.mark.parametrize("text", ["yesss please book it", "I see Dr. Wang on Fridays", "it makes sense to buy a car",
                                  "fair enough, let's do friday", "no worries, I moved it to 5pm", "没错，我下周二去",
                                  "原来是这样，那我周三再去", "好的，那就周三"])
def test_a_backchannel_that_carries_a_statement_is_kept(text):
    assert noise_reason(text) is None
