"""Issue 16, class 1: the write gate keeps what users say. A statement riding on a one-off
command ('check the weather in Tokyo, I'm flying there Friday') is kept; a command that says
nothing else is not; sign-offs and compliments to the assistant are noise. Units on the rules,
then the real write pipeline and retrieval on a real store and the bundled model."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.config import WriteSection
from memory_engine.write import rules
from memory_engine.write.noise import noise_reason
from memory_engine.write.pipeline import AddRequest, WritePipeline


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "check the weather in Tokyo, I'm flying there Friday for my cousin's wedding",
    "what's the weather like in Chengdu? going there next week for a wedding",
    "set an alarm for 6, my flight to Denver leaves at 9 from gate B12",
    "set a reminder for my mom's birthday on June 3rd",
    "convert my 401k to a Roth IRA next year",
    "帮我定个闹钟，明天早上六点要赶飞机去成都开会",
    "请帮我翻译一下，下个月我要去大阪见客户，对方只会说日语",
    "帮我查一下明天北京的天气，周末要去北京出差",
])
def test_statement_riding_on_a_command_is_kept(text):
    assert rules.reject_reason(text) is None


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "set a timer for 10 minutes", "set an alarm for 6:30 tomorrow morning, thanks", "check the weather in Tokyo",
    "translate hello into French", "convert 5 miles to km", "帮我查一下今天的天气", "帮我定个闹钟",
    "帮我把这句话翻译成英文", "现在几点", "帮我打开空调",
])
def test_command_that_says_nothing_else_is_rejected(text):
    assert rules.reject_reason(text) == "one_off_command"


@pytest.mark.unit
def test_object_terms_is_read_from_the_config():
    text = "set a reminder for my mom's birthday on June 3rd"  # mom, birthday, june
    assert rules.reject_reason(text, WriteSection(one_off_object_terms=3)) is None
    assert rules.reject_reason(text, WriteSection(one_off_object_terms=4)) == "one_off_command"


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "hey there!", "you're the best lol", "thanks man, that's all for now", "hi again", "ok bye for now",
    "sounds great, talk later!", "np, have a good one", "hahaha you're hilarious", "hello bot",
    "嗯嗯好的，辛苦你啦", "么么哒 爱你", "谢谢宝子",
])
def test_sign_offs_and_compliments_are_noise(text):
    assert noise_reason(text) == "chit_chat"


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "thanks man, the plumber fixed the sink", "you're the best, I got the job at Stripe", "宝宝今天发烧了",
    "辛苦你啦，我下周一入职腾讯", "hey there, I adopted a beagle named Toby", "see you at the clinic on Monday",
])
def test_sign_off_words_do_not_swallow_a_statement(text):
    assert noise_reason(text) is None and rules.reject_reason(text) is None


def _req(text, t0, **kw):
    return AddRequest(text=text, user_id="u1", tenant_id="default", ts=t0.timestamp(), now=t0, **kw)


@pytest.mark.integration
def test_rider_statement_is_stored_and_found(engine, t0):
    pipe = WritePipeline(engine.store, engine.embedder, engine.config)
    kept = pipe.run(_req("帮我定个闹钟，明天早上六点要赶飞机去成都开会", t0, session_id="s1"))
    assert kept.result.outcome == "stored"
    timer = pipe.run(_req("set a timer for 10 minutes", t0, session_id="s1"))
    assert timer.result.outcome == "rejected" and timer.result.reason == "one_off_command"
    bye = pipe.run(_req("thanks man, that's all for now", t0, session_id="s1"))
    assert bye.result.outcome == "rejected" and bye.result.reason == "chit_chat"
    got = engine.retrieve("我去成都干嘛", user_id="u1", top_k=3, now=t0 + timedelta(hours=5))
    assert got.ids[:1] == [kept.result.memory_id]


@pytest.mark.unit
def test_a_plan_is_scored_alike_however_it_is_phrased():
    # the removed '准备(去|参加)|要参加' fitted one data set's sentence shape: the same plan phrased
    # otherwise ('要去参加', '去参加') scored lower (0.5 vs 0.7)
    cfg = WriteSection()
    scores = {t: rules.importance(t, rules.signals(t), cfg)
              for t in ("我准备去参加表弟的婚礼", "我要参加表弟的婚礼", "我要去参加表弟的婚礼", "我去参加表弟的婚礼")}
    assert len(set(scores.values())) == 1, scores
