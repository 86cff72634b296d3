"""Hop pool links, the chain anchor fallback, role referents and the person conflict (retrieve/hop.py,
retrieve/referents.py; ``retrieval.hop_pool_links``, ``hop_chain_focus_chain_anchor``, ``hop_role_referents``,
``hop_person_conflict``). Sentences differ from the golden suites'. Pure functions first, then the real
in-memory engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory_engine import MemoryEngine
from memory_engine.retrieve.referents import (
    introduces,
    people_of,
    role_referents,
    roles,
    same_person,
    zh_surname,
)
from memory_engine.text import content_terms

T0 = datetime(2026, 5, 4, 9, tzinfo=UTC)


def _add(engine: MemoryEngine, user: str, texts: list[str]) -> dict[str, str]:
    return {t: engine.add(t, user_id=user, session_id=f"s{i}", now=T0 + timedelta(days=i)).memory_id
            for i, t in enumerate(texts)}


def _hits(engine: MemoryEngine, user: str, query: str, days: int = 10) -> list[str]:
    return [h.memory_id for h in engine.retrieve(query, user_id=user, now=T0 + timedelta(days=days)).hits]


def test_role_words_are_a_closed_class_outside_person_names():
    assert "superior" in roles("my boss said the offsite moved")
    assert "superior" in roles("我上司下周出差")
    assert "superior" not in roles("刘经理下午不在")  # 经理 of 刘经理 is part of a name
    assert "contact" in roles("对接人是王总")
    assert roles("the weather is nice") == frozenset()


def test_people_and_forms_of_one_name():
    assert people_of("我的房东是王建华，人很好") == {"王建华"}
    assert people_of("Mina is allergic to peanuts") == {"mina"}
    assert people_of("王总对花生过敏") == {"王总"}  # jieba's person tag on 过敏 opens with no surname
    assert same_person("王建华", "王总") and same_person("王建华", "老王")
    assert not same_person("周总", "周姐") and not same_person("小周", "周经理")
    assert zh_surname("欧阳娜娜") == "欧阳" and zh_surname("老周") == "周"


def test_a_role_is_introduced_next_to_the_name_and_the_newest_holds_it():
    assert introduces("my landlord is Omar, he fixes things fast", "omar", roles("my landlord"), 1)
    assert not introduces("my landlord lives far away from Denver", "denver", roles("my landlord"), 1)
    ref, others = role_referents("what does my coach want me to eat?", [
        ("my coach Lena wants more protein", 1.0), ("new gym this month, my coach is Marco now", 2.0)])
    assert ref == {"marco"} and others == {"lena"}
    assert role_referents("what's the weather?", [("my coach Lena", 1.0)]) == (frozenset(), frozenset())


def test_pool_links_reach_a_name_the_segmenter_fused_with_its_neighbour(make_engine):
    """'陈浩在一家药企' stores the term 陈浩在: the keyword search for 陈浩 misses it; the pool (the dense route
    found it) does not."""
    assert "陈浩" not in content_terms("陈浩在一家药企做研发，天天泡实验室")
    texts = ["我妹妹去年嫁给了陈浩", "陈浩在一家药企做研发，天天泡实验室", "我表哥在银行上班"]
    got = {}
    for n in (0, 20):
        eng = make_engine({"retrieval.hop_pool_links": n, "retrieval.hop_role_referents": False})
        ids = _add(eng, "pool", texts)
        got[n] = (ids, _hits(eng, "pool", "我妹夫在哪上班来着？"))
    ids, on = got[20]
    assert ids[texts[0]] in on and ids[texts[1]] in on
    ids0, off = got[0]
    assert ids0[texts[1]] not in off


def test_chain_anchor_when_the_top_hit_does_not_name_the_subject(make_engine):
    """The top hit answers but names no word of the question; the chain (the other memory names 'Pixel')
    is the anchor, and the other pet's reminder, linked to no memory of the chain, goes."""
    texts = ["Pixel is registered at Oakwood Animal Clinic",
             "Oakwood Animal Clinic called: booster shots on the 9th at 10:00",
             "the hamster's cage needs cleaning next week"]
    res = {}
    for on in (False, True):
        eng = make_engine({"retrieval.hop_chain_focus_chain_anchor": on})
        ids = _add(eng, "anchor", texts)
        res[on] = (ids, _hits(eng, "anchor", "when is Pixel's next shot?"))
    ids, got = res[True]
    assert ids[texts[1]] in got and ids[texts[0]] in got
    assert ids[texts[2]] not in got


def test_role_referent_leaves_out_the_earlier_holder_of_the_role(make_engine):
    """'my coach' is Marco now; Lena was the coach before: her diet advice is not the answer."""
    texts = ["my coach Lena always wants me to eat oatmeal before training",
             "new gym this month, my coach is Marco now",
             "Marco wants me eating more rice and eggs before training"]
    res = {}
    for on in (False, True):
        eng = make_engine({"retrieval.hop_role_referents": on})
        ids = _add(eng, "role", texts)
        res[on] = (ids, _hits(eng, "role", "what does my coach want me to eat before training?"))
    ids, got = res[True]
    assert ids[texts[2]] in got and ids[texts[0]] not in got
    ids_off, off = res[False]
    assert ids_off[texts[0]] in off


def test_role_referent_and_person_conflict_leave_out_another_of_the_surname(make_engine):
    """'我领导' is 王总 (introduced as such); 王姐 is someone else of the same surname."""
    texts = ["我现在的领导是王总，上周刚到任", "王总不喝酒，聚餐别劝", "王姐爱喝红酒，聚餐可以带一瓶"]
    eng = make_engine({"retrieval.hop_role_referents": True, "retrieval.hop_person_conflict": True})
    ids = _add(eng, "conflict", texts)
    got = _hits(eng, "conflict", "跟领导聚餐，喝的方面要注意什么？")
    assert ids[texts[1]] in got and ids[texts[2]] not in got


def test_a_single_chinese_character_links_nothing(make_engine):
    """'店' of '4S店' and '洗车店' (and '家' of '那家') is no link: the car wash is off the chain of the car's
    service shop."""
    texts = ["我的车一直在城西那家4S店做保养", "4S店的服务顾问是小杨，微信上就能约", "小区门口那家洗车店周二休息"]
    res = {}
    for on in (True, False):
        eng = make_engine({"retrieval.hop_single_char_links": on})
        ids = _add(eng, "single", texts)
        res[on] = (ids, _hits(eng, "single", "车该保养了，约保养找谁？"))
    ids, got = res[False]
    assert ids[texts[0]] in got and ids[texts[2]] not in got


def test_a_relation_path_referent_leaves_out_another_relatives_spouse(make_engine):
    """'我表妹的老公' is 孙磊 (the memory stating the path); 刘洋 married the user's sister: his job is not the
    answer."""
    texts = ["我表妹去年嫁给了孙磊", "刘洋在一家券商做分析师", "我姐嫁给了刘洋，都结婚三年了"]
    eng = make_engine({"retrieval.hop_role_referents": True})
    ids = _add(eng, "path", texts)
    got = _hits(eng, "path", "我表妹的老公是做什么工作的？")
    assert ids[texts[1]] not in got and ids[texts[2]] not in got


def test_a_name_written_in_both_memories_links_them_however_it_was_cut(make_engine):
    """'…在爱宠诊所打' is cut 爱 / 宠, '爱宠诊所搬到…' keeps 爱宠: written in both, the name links the cat's clinic to
    its new address, and the other pet's clinic and its address, linked to neither, leave the answer."""
    texts = ["咪咪的疫苗一直在爱宠诊所打", "爱宠诊所搬到滨江路和江南大道路口了", "豆豆去年在康康宠物医院绝育",
             "康康宠物医院在万象城对面"]
    res = {}
    for on in (False, True):
        eng = make_engine({"retrieval.hop_substring_names": on})
        ids = _add(eng, "written", texts)
        res[on] = (ids, _hits(eng, "written", "咪咪又该打疫苗了，那家诊所在哪来着？"))
    ids, got = res[True]
    assert ids[texts[0]] in got and ids[texts[1]] in got
    assert ids[texts[3]] not in got
    ids_off, off = res[False]
    assert ids_off[texts[3]] in off  # terms alone: no chain, the other clinic's address stays


def test_the_chain_anchor_fallback_keeps_the_memories_of_the_person_the_question_names(make_engine):
    # the top hit is Maria's question (no 'John'); her turns chain by her name alone, so the fallback anchor was
    # {'Maria'} and every turn of John, the person asked about, was dropped from the result
    chat = [("John", "I finally fixed the leaking kitchen tap this morning."),
            ("Maria", "That sounds awesome! How often do you work out with your family?"),
            ("John", "Three times a week; it keeps us on track."),
            ("Maria", "I started a pottery class on Tuesday evenings."),
            ("John", "My car needs new tyres before the trip."),
            ("Maria", "We did a family workout at the park, everyone joined in.")]
    got = {}
    for on in (True, False):
        eng = make_engine({"retrieval.hop_chain_focus_chain_anchor": on, "retrieval.floor": 0.0,
                           "tracing.enabled": False, "retrieval.touch_on_hit": False})
        for i, (who, text) in enumerate(chat):
            eng.add(f"{who}: {text}", user_id="u", session_id="s1" if i < 3 else f"s{i}", memory_type="episodic",
                    metadata={"speaker": who}, now=T0 + timedelta(minutes=i))
        hits = eng.retrieve("How often does John work out with his family?", user_id="u", top_k=6,
                            now=T0 + timedelta(days=1)).hits
        got[on] = {h.content for h in hits}
    answer = "John: Three times a week; it keeps us on track."
    assert answer in got[True] and answer in got[False]
    assert {c for c in got[True] if c.startswith("John:")} == {c for c in got[False] if c.startswith("John:")}
