"""Chinese people called by a surname and a prefix or a title (老周, 小李, 张总, 王老师) and Latin words inside
Chinese (Keep, iPad, 4S店) as names and single terms (memory_engine.text.zh_person_names, keyword.person_names,
keyword.latin_in_cjk). jieba tags 老周 a time word and cuts 小李 / 张总 apart, so the entity hop could not link
'会员积分改版这期是老周在牵头' to '老周说接口卡在法务审批' (eval_sets/names_and_chains.yaml). Pure functions first,
then the real in-memory engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import MemoryEngine
from memory_engine.config import KeywordSection
from memory_engine.text import configure_names, entities, people, tokenize, zh_names

T0 = datetime(2026, 6, 1, 10, tzinfo=UTC)


@pytest.mark.parametrize("text, name", [
    ("老周这季度负责智能客服那个项目", "老周"),  # jieba: 't'
    ("小李下周去4S店保养车", "小李"),  # jieba: 小 / 李
    ("张总让我周五前交方案", "张总"),  # jieba's search cut: 张 / 总
    ("刘经理习惯上午开会", "刘经理"),
    ("王老师说孩子数学进步了", "王老师"),
    ("今天王姐来了", "王姐"),  # 天王 is a word, but a rare one
    ("小张开车来的", "小张"),  # 张开 is a word, but a rare one
    ("我们王总监下周出差", "王总监"),  # the longest title
])
def test_a_prefix_or_title_with_a_surname_is_one_name(text, name):
    assert name in zh_names(text)
    assert name in tokenize(text)
    assert name in entities(text) and name in people(text)


@pytest.mark.parametrize("text", [
    "这周总结会挪到周四",  # 周 + 总 by accident: 总结
    "历史老师布置了作业",  # 史 ends 历史
    "我从小就怕狗",  # 小 ends 从小
    "温度小于十度就开暖气",  # 小于 is a word
    "小龙虾好吃",  # one dictionary word
    "老毛病又犯了",
    "老高兴了",  # 老 = very
    "老师说明天放假", "小时候住在乡下", "老公下班了", "任何人都可以",  # 师 / 时 / 公 are no surnames here
])
def test_words_that_only_look_like_names_name_no_one(text):
    assert zh_names(text) == frozenset()


def test_two_people_of_one_surname_share_no_term():
    """老周 and 小周, 张总 and 张姐: the surname alone is no term, so the two memories share no name."""
    assert not ({"老周", "周"} & set(tokenize("小周说周报模板已经改好了")))
    assert "张" not in tokenize("张总海鲜过敏") and "张" not in tokenize("张姐不吃辣")
    assert not (entities("张总海鲜过敏") & entities("张姐不吃辣"))


def test_latin_words_in_chinese_are_names_and_short_codes_stay_whole():
    assert {"keep", "周姐"} <= entities("周姐推荐我用Keep练瑜伽")
    assert "ipad" in entities("小王把我的iPad借走了")
    assert "4s" in tokenize("我的车一直在城东那家4S店做保养")
    assert "4s" in entities("4S店的售后顾问是小马")
    assert entities("my therapist suggested the calm app") == frozenset()  # English: capitalised names only


def test_switched_off_the_tokenizer_is_jiebas_again():
    off = KeywordSection(person_names=False, latin_in_cjk=False)
    try:
        configure_names(off)
        assert zh_names("张总让我周五前交方案") == frozenset()
        assert "张总" not in tokenize("张总让我周五前交方案")
        assert "4s" not in tokenize("4S店")
        assert "keep" not in entities("周姐推荐我用Keep练瑜伽")
    finally:
        configure_names(KeywordSection())
    assert "张总" in tokenize("张总让我周五前交方案")


def _add(engine: MemoryEngine, user: str, texts: list[str]) -> dict[str, str]:
    return {t: engine.add(t, user_id=user, session_id=f"s{i}", now=T0 + timedelta(days=i)).memory_id
            for i, t in enumerate(texts)}


_PROJECT = ["智能客服这季度是老周负责", "老周说供应商合同还没盖章", "小周下周去深圳出差", "张总让我周五前交预算",
            "王老师说周三开家长会"]


def _hop_routes(eng: MemoryEngine, user: str) -> tuple[dict[str, str], list[str], dict[str, dict[str, int]]]:
    ids = _add(eng, user, _PROJECT)
    res = eng.retrieve("智能客服那边推进到哪了？", user_id=user, now=T0 + timedelta(days=9), explain=True)
    return ids, [h.memory_id for h in res.hits], {e.memory_id: e.route_ranks for e in res.explanations}


def test_the_hop_links_a_project_to_its_owners_report_through_the_name(engine):
    """The question names the project only; 老周's report shares nothing else with it and is reached through
    老周, ranked after the project; 小周 (the same surname) is not reached."""
    ids, got, via = _hop_routes(engine, "names-hop")
    report = ids["老周说供应商合同还没盖章"]
    assert report in got and "hop" in via[report]
    assert got.index(ids["智能客服这季度是老周负责"]) < got.index(report)
    assert "hop" not in via.get(ids["小周下周去深圳出差"], {})


def test_without_names_the_report_is_not_reached(make_engine):
    """keyword.person_names=false: 老周 is jieba's time word again, no name, and the hop does not reach the report
    (the behaviour before session 11)."""
    eng = make_engine({"keyword.person_names": False})
    try:
        ids, _, via = _hop_routes(eng, "names-hop-off")
        assert "hop" not in via.get(ids["老周说供应商合同还没盖章"], {})
    finally:
        configure_names(KeywordSection())


def test_contrast_tells_two_people_of_one_surname_apart():
    """retrieve/contrast.py: 老周 (jieba's time word) and 小周 (cut 小 / 周家) are two person words; the same
    person, or a word that only holds the surname and a title (这周总结), is no contrast."""
    from memory_engine.retrieve.contrast import contrasts

    assert contrasts("老周孩子考得怎么样？", "小周家孩子刚上幼儿园，天天哭着不肯去") == ("老周", "小周")
    assert contrasts("老周孩子考得怎么样？", "老周家孩子今年高考，考了六百二十多分") is None
    assert contrasts("张总对什么过敏？", "张姐不吃辣，点菜的时候要注意") == ("张总", "张姐")
    assert contrasts("张总对什么过敏？", "张总海鲜过敏") is None
    assert contrasts("周总交代的事情要什么时候交？", "这周总结会挪到周四下午开") is None
