"""Issue 16, class 3 (implicit recall): a statement of the user's present is not a lookup about the
relative it names (the memory it relates to may be about another relative), and the dictionary bridge
of cross-language coverage takes a long gloss by a share of its terms and never a gloss of particles
only. Pure functions, then a real in-memory engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.retrieve.crosslang import cross_coverage
from memory_engine.text import content_terms as terms
from memory_engine.text import is_lookup


@pytest.mark.parametrize("text", ["我舅舅的生日", "我舅舅住在哪个城市？", "我哥哥在哪里上班", "我女儿对什么过敏",
                                  "Is my daughter allergic to anything?", "what does my son like",
                                  "my daughter's peanut allergy", "我妈做过手术吗"])
def test_questions_and_short_phrases_are_lookups(text):
    assert is_lookup(text, 4)


@pytest.mark.parametrize("text", ["我儿子最近天天抱着平板打游戏，我在想要不要直接没收",
                                  "女儿九月就要上幼儿园了，我感觉我比她还焦虑",
                                  "my son wants a bike for his birthday and keeps asking to ride down the hill"])
def test_a_statement_of_the_present_is_no_lookup(text):
    assert not is_lookup(text, 4)
    assert is_lookup("我儿子的平板", 0) is False and is_lookup("我儿子的平板？", 0)


def test_a_long_gloss_bridges_by_a_share_of_its_terms():
    trip = terms("我每次出差前都会把绿植搬进浴室，再拔掉路由器的电源")
    q = terms("what do I usually do before I leave for a business trip?")
    # 出差 is 'to go on an official or business trip': the query carries 2 of its 4 terms
    assert cross_coverage(q, trip, 0.5) > 0.0
    assert cross_coverage(q, trip, 1.0) == 0.0
    bp = terms("我血压偏高，医生让我每天早上起床量一次")
    assert cross_coverage(terms("blood sugar"), bp, 0.5) == 0.0  # a two-term gloss still needs both


def test_a_gloss_of_particles_bridges_nothing():
    # 起来 'to get up' is {up} once 'get' is a stop word: "sign up" must not meet every 起来
    mem = terms("去年项目上线前我连续一个多月失眠，后来去看了心理咨询才慢慢好起来")
    assert cross_coverage(terms("which gym did I sign up for?"), mem, 0.5) == 0.0


EPISODES = [
    "高中时我偷偷通宵打游戏，被我爸发现后把电脑砸了，那之后半年我都没怎么跟他说话",
    "儿子第一天去幼儿园哭着扒着门不放，我在门外站了半个小时才狠心走掉",
    "我妈前年查出甲状腺结节，做穿刺那天我请假陪她，在诊室门外等结果的时候手心全是汗",
    "去年冬天下雪我在高架上追尾了前面的车，人没事，可之后好几个月我都不敢再上高架",
    "我每次出差前都会这样做：先把绿植搬进浴室，再把猫送到我妹妹家，最后拔掉路由器的电源",
    "去年项目上线前我连续一个多月失眠，凌晨三点还睁着眼，后来去看了心理咨询才慢慢好起来",
    "三十岁生日那天我开始学滑板，第一次就摔得膝盖流血，但那天是我好几年来最开心的一天",
    "毕业后和大学同学合伙开了一家奶茶店，撑了八个月还是关门了，亏了十几万",
]


def test_implicit_recall_of_another_relatives_episode(make_engine, t0):
    eng = make_engine()
    ids = [eng.add(t, user_id="u", now=t0 + timedelta(days=i)).memory_id for i, t in enumerate(EPISODES)]
    later = t0 + timedelta(days=30)
    res = eng.retrieve("我儿子最近天天抱着平板打游戏，我在想要不要直接没收", user_id="u", top_k=5, now=later)
    # before: the query names 儿子, the memory only 爸, so its similarity was x0.3 (relevance 0.16 < 0.25)
    assert ids[0] in [h.memory_id for h in res.hits]
    # a lookup about a relative never told still returns nothing
    assert eng.retrieve("我舅舅住在哪个城市？", user_id="u", now=later).hits == []
    # an English question for the Chinese procedure (before: coverage 0, relevance 0.07 < 0.25)
    trip = eng.retrieve("what do I usually do before I leave for a business trip?", user_id="u", now=later)
    assert ids[4] in [h.memory_id for h in trip.hits]
    # before: 'up' bridged to 起来 in the insomnia memory (coverage 1/3) and four memories came back
    assert eng.retrieve("which gym did I sign up for?", user_id="u", now=later).hits == []
