"""The entity hop stays on one person (retrieve/referents.py, retrieve/hop.py): a pronoun's antecedent
agrees in gender, a surname the hits know under one given name does not reach a namesake, and a question
about the user's own wife is not answered by another person's wife (text.others_relatives). Each case
is from eval_sets/links_in_the_wild.yaml, where the code before this change returned the other person's
memory. Pure functions first, then the real in-memory engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory_engine import MemoryEngine
from memory_engine.retrieve.referents import agrees, full_names, gender_cues, name_conflict, pronoun_gender
from memory_engine.text import others_relatives

T0 = datetime(2026, 7, 12, 11, tzinfo=UTC)


def _add(engine: MemoryEngine, user: str, texts: list[str]) -> dict[str, str]:
    return {t: engine.add(t, user_id=user, session_id=f"s{i}", now=T0 + timedelta(days=i)).memory_id
            for i, t in enumerate(texts)}


def test_gender_cues_come_from_kinship_address_and_pronoun_words():
    assert pronoun_gender("she recommended the vet on Oak Street") == "f"
    assert pronoun_gender("他说可以去申请仲裁") == "m"
    assert pronoun_gender("my neighbour Linda has two dogs") is None
    assert gender_cues("我哥周浩下周来北京出差") == {"m"}
    assert gender_cues("Mark from work lent me his pressure washer") == {"m"}
    assert gender_cues("我大学室友小美现在在成都开民宿") == frozenset()
    assert gender_cues("我们去哥伦比亚旅游") == frozenset()  # a brother only as a whole word or after 我/表/堂...
    assert not agrees("f", frozenset({"m"}))
    assert agrees("f", frozenset()) and agrees("f", frozenset({"m", "f"})) and agrees(None, frozenset({"m"}))


def test_full_names_and_one_referent_per_surname():
    assert full_names("my cardiologist is Dr. Helen Chen at St Mary's") == {("helen", "chen")}
    assert full_names("Dr. Chen's office moved my echo to May 19") == frozenset()  # surname + title: no given name
    assert ("娜", "李") in full_names("我姐李娜在省人民医院当护士长")
    assert full_names("王老师这周六请假") == frozenset()
    known = frozenset({("helen", "chen")})
    assert name_conflict(known, frozenset({("kevin", "chen")}))
    assert not name_conflict(known, frozenset({("helen", "chen")}))
    assert not name_conflict(known, frozenset({("kevin", "lee")}))


def test_others_relatives_are_possessed_by_a_name_or_a_third_person():
    assert others_relatives("Dan's wife is allergic to peanuts") == {"wife"}
    assert others_relatives("Dan and his wife are coming over") == {"wife"}
    assert others_relatives("陈晓她老公宋凯上个月换工作了") == {"husband"}
    assert others_relatives("张伟的妈妈住院了") == {"mother"}
    assert others_relatives("my wife Anna can't stand cilantro") == frozenset()
    assert others_relatives("我的老婆喜欢花") == frozenset()
    assert others_relatives("明天的老板会议改到下午") == frozenset()  # 明天 is no person


def test_pronoun_antecedent_skips_a_person_of_the_other_gender(engine):
    """'她推荐…' follows '我哥周浩…' (the nearest memory naming a person): before the agreement check the
    hop linked the brother's trip to the roommate's tip and returned it."""
    user = "ref-pronoun-zh"
    ids = _add(engine, user, ["我大学室友小美现在在成都开民宿", "我哥周浩下周来北京出差",
                              "她推荐我去成都一定要吃那家冒椒火辣", "卧室空调漏水了，周一找人来修"])
    res = engine.retrieve("室友推荐我在成都吃哪家？", user_id=user, now=T0 + timedelta(days=6), explain=True)
    got = [h.memory_id for h in res.hits]
    assert ids["她推荐我去成都一定要吃那家冒椒火辣"] in got
    assert ids["我哥周浩下周来北京出差"] not in got
    via = {e.memory_id: e.route_ranks for e in res.explanations}
    assert "hop" not in via.get(ids["我哥周浩下周来北京出差"], {})


def test_gender_agreement_is_read_from_config(make_engine):
    """With retrieval.hop_gender_agreement off the nearest person is the antecedent again (the old link)."""
    eng = make_engine({"retrieval.hop_gender_agreement": False})
    user = "ref-pronoun-off"
    ids = _add(eng, user, ["我大学室友小美现在在成都开民宿", "我哥周浩下周来北京出差",
                           "她推荐我去成都一定要吃那家冒椒火辣"])
    res = eng.retrieve("室友推荐我在成都吃哪家？", user_id=user, now=T0 + timedelta(days=6), explain=True)
    via = {e.memory_id: e.route_ranks for e in res.explanations}
    assert "hop" in via.get(ids["我哥周浩下周来北京出差"], {})


def test_a_namesake_is_not_reached_through_the_surname(make_engine):
    """'Dr. Chen moved my echo' shares 'Chen' with 'Kevin Chen from accounting'; the hits name Helen Chen, so
    the hop does not reach Kevin (before: he ranked first for 'when is my heart scan?'). Off: he is reached."""
    texts = ["my cardiologist is Dr. Helen Chen at St Mary's", "Dr. Chen's office moved my echo to May 19 at 8am",
             "Kevin Chen from accounting is leaving in May, we're doing a farewell on the 19th"]
    for check, reached in ((True, False), (False, True)):
        eng = make_engine({"retrieval.hop_name_conflict": check})
        user = f"ref-surname-{check}"
        ids = _add(eng, user, texts)
        res = eng.retrieve("when is my heart scan?", user_id=user, now=T0 + timedelta(days=3), explain=True)
        via = {e.memory_id: e.route_ranks for e in res.explanations}
        assert ("hop" in via.get(ids[texts[2]], {})) is reached
        if check:
            assert ids[texts[2]] not in [h.memory_id for h in res.hits]
            assert {ids[texts[0]], ids[texts[1]]} <= {h.memory_id for h in res.hits}


def test_another_persons_wife_does_not_answer_about_mine(engine):
    """'what food does my wife hate?': "Dan's wife is allergic to peanuts" ranked first before this change."""
    user = "ref-wife-en"
    ids = _add(engine, user, ["my wife Anna can't stand cilantro, picks it out of everything",
                              "Dan's wife is allergic to peanuts, remember for the BBQ",
                              "Dan and his wife are coming over Saturday"])
    got = [h.memory_id for h in engine.retrieve("what food does my wife hate?", user_id=user,
                                                now=T0 + timedelta(days=5)).hits]
    assert got and got[0] == ids["my wife Anna can't stand cilantro, picks it out of everything"]
    assert ids["Dan's wife is allergic to peanuts, remember for the BBQ"] not in got
