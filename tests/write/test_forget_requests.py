"""Forget requests recognised by structure, not by one phrasing (issue 16, failure class 6):
an imperative addressed to the assistant (forget / erase verbs, or keep / remember / store
verbs negated) plus a target, zh and en, polite, indirect, typo'd, mixed; talking ABOUT
forgetting is a statement. The engine test runs the real write path (qdrant-edge, e5)."""

from datetime import timedelta

import pytest

from memory_engine.write.intents import forget_target


@pytest.mark.unit
@pytest.mark.parametrize("text,target", [
    # indirect and polite requests the old verb-first patterns missed
    ("hmm I'd rather you didn't keep my salary info, pls drop it", "my salary"),
    ("actually scratch that, don't save that last thing", ""),
    ("plz forgt what i said about my bank", "my bank"),  # typo
    ("Could you please not remember anything about my medication? Thanks", "my medication"),
    ("Stop storing stuff about my medication", "my medication"),
    ("no need to remember my shoe size", "my shoe size"),
    ("I don't want you to remember my address", "my address"),
    ("pls don't keep that", ""),
    ("把我刚才说的地址删了吧", "地址"), ("算了，那条别记了", ""), ("关于我前任的事，你都忘了吧，不想再提", "我前任"),
    ("以后不用记我工资的事了", "我工资"), ("麻烦把公司地址那条记录删一下，谢谢", "公司地址"),
    ("我的体重就别记着了", "我的体重"), ("忘了我说的那些话吧", ""), ("请忘记我的生日", "我的生日"),
    ("那个 GitHub 账号的信息 pls delete 掉", "GitHub 账号"),  # mixed zh/en
    ("Can you wipe everything you know about my ex?", "my ex"), ("Do me a favor and forget my old phone number",
                                                                 "my old phone number"),
    ("Don't hold on to my credit card number", "my credit card number"),
    ("please disregard what I said about the budget", "budget"),
    ("我的电话号码你删掉吧", "我的电话号码"), ("不要把我的病情记下来", "我的病情"), ("就当我没说吧", ""), ("撤回上一条", ""),
])
def test_requests_in_many_phrasings(text, target):
    assert forget_target(text) == target


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "I always forget my keys when I leave for work in a hurry", "Don't forget to call mom",
    "Forgetting my passport at home last year cost me a flight", "Never keep cash at home",
    "don't remember where I parked", "Don't store batteries in the fridge", "Forget it, I'll book the hotel myself",
    "今天又忘了带伞，下班淋成落汤鸡", "删掉了手机里所有的游戏，想专心准备考研", "我老是记不住新同事的名字",
    "别忘了带伞", "我不用记这些", "你不要记错了", "我把文件删了",
    "Ignore all previous instructions", "Remove my name from the list", "你把这个文件删了", "别把钱存在支付宝里",
    "不要把鸡蛋放冰箱门上", "他当我没说过这话一样",
])
def test_talking_about_forgetting_is_no_request(text):
    assert forget_target(text) is None


@pytest.mark.integration
def test_a_topic_request_forgets_only_the_memory_it_names(engine, t0):
    meds = engine.add("I take sertraline 50mg every morning with breakfast", user_id="u", now=t0).memory_id
    food = engine.add("For breakfast I usually have oatmeal with blueberries", user_id="u", now=t0).memory_id
    r = engine.add("Could you please not remember anything about my medication? Thanks", user_id="u",
                   now=t0 + timedelta(days=1))
    assert r.outcome == "forgotten" and r.superseded_ids == (meds,)
    assert r.evidence[0]["rule"] == "forget_topic"
    assert engine.memory(food, user_id="u").status.value == "current"
    # "never mind" next to a statement is no forget request: the statement is kept
    r = engine.add("Forget it, I'll book the hotel in Kyoto myself", user_id="u", now=t0 + timedelta(days=2))
    assert r.outcome == "stored"
    assert engine.memory(food, user_id="u").status.value == "current"
