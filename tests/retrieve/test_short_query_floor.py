"""Issue 16 (short, one-word and cross-language queries, "what about my X" questions under the floor): the memory
that answers exists, but the query's keyword coverage of it stays 0 and its dense similarity under
``retrieval.floor``. Five mechanisms, each a general reading of the words, never of one sentence's shape:

* a gloss's first comma part is a gloss of its own (东京 'Tokyo, capital of Japan' is 'Tokyo');
* an English query word meets a Chinese memory word whose gloss it heads (攀岩 'rock climbing' for "climbing");
* a Chinese word the dictionary glosses only as a verb is no entity of the contrast check (上学 'to go to school');
* a compound's verb said alone covers the compound (跑步 / 跑: both 'to run');
* a kinship word covers the relatives it names ('siblings' / 'my brother'), and a word of several relatives
  does not make the brother introduced last displace the sister.

Pure functions first, then a real in-memory engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.config import RetrievalSection
from memory_engine.retrieve.contrast import contrasts
from memory_engine.retrieve.crosslang import _entries, _head, cross_coverage, glosses, zh_cores
from memory_engine.retrieve.referents import role_referents
from memory_engine.text import content_terms, kin_term, relative_words, relatives


def test_first_comma_part_is_a_gloss():
    assert frozenset({"tokyo"}) in glosses("东京")
    q, mem = content_terms("我哪天飞东京？"), content_terms("My flight to Tokyo leaves on March 3rd in the morning")
    assert cross_coverage(q, mem, 0.5) > 0.0
    # the whole gloss stays: 'capital of Japan' still needs both words
    assert frozenset({"tokyo", "capit", "japan"}) in glosses("东京")


def test_gloss_heads():
    assert _head("rock climbing") == "climb"
    assert _head("primary school") == "school"
    assert _head("capital of Japan") == "capit"  # the post-modifier is no head
    assert _head("Tokyo, capital of Japan") == "tokyo"  # the apposition after the comma describes the head
    assert _head("to climb a rockface") is None  # a verb's object is no kind of it
    assert _head("pottery and porcelain") is None  # two conjuncts, no single head
    assert _head("yoga") is None
    assert ("climb" in {h for _, h in _entries("攀岩")})


def test_english_head_word_meets_the_chinese_compound():
    mem = content_terms("最近迷上了攀岩，每周去两次岩馆，手上全是茧")
    assert cross_coverage(content_terms("climbing"), mem, 0.5) == 0.0
    assert cross_coverage(content_terms("climbing"), mem, 0.5, heads=True) == 1.0
    # a modifier of the gloss is no head: "rock" asks about rocks, not about rock climbing
    assert cross_coverage(content_terms("rock"), mem, 0.5, heads=True) == 0.0
    # 血压 'blood pressure': "blood sugar" meets neither word of it as a whole gloss nor as its head
    bp = content_terms("我血压偏高，医生让我每天早上起床量一次")
    assert cross_coverage(content_terms("blood sugar"), bp, 0.5, heads=True) == 0.0


def test_verbal_compound_is_no_entity():
    q = "我女儿在哪个学校上学？"
    assert contrasts(q, "搞错了，我女儿去年就转到育才小学了，不在实验小学了") is None
    # two nouns of one head still contrast (钢琴课 / 游泳课)
    assert contrasts("儿子的游泳课是星期几？", "儿子的钢琴课在每周三下午四点半") == ("游泳课", "钢琴课")


def test_compound_cores():
    assert zh_cores("跑步") == {"跑"} and "睡" in zh_cores("睡觉")
    assert zh_cores("上班") == frozenset()  # 上 is 'on', 'up': not 'to go to work'
    assert zh_cores("颜色") == frozenset()  # a noun: '胡桃木色' is no answer about the shelf's colour
    assert zh_cores("健身") == frozenset() and zh_cores("跑") == frozenset()


def test_kin_terms():
    assert kin_term("sibl") == relatives("my brother") | relatives("my sister")
    assert kin_term("kid") == {"son", "daughter"} and kin_term("兄弟姐妹") == kin_term("sibl")
    assert kin_term("live") == frozenset()
    assert relative_words("my kids and my sister") == {frozenset({"son", "daughter"}),
                                                       frozenset({"elder_sister", "younger_sister"})}


def test_a_word_of_several_relatives_keeps_each_introduction():
    # people_of reads the capitalised city as the relative's name: each memory "introduces" one person
    mems = [("my sister lives in Denver", 1.0), ("my brother moved to Austin last year", 2.0)]
    ref, others = role_referents("where do my siblings live?", mems)
    assert ref == {"austin"} and others == frozenset()
    # one relative introduced twice: the newer holds the role, the older is another person in it
    ref, others = role_referents("who is my manager?", [("my manager is Priya", 1.0), ("my manager is Tom now", 2.0)])
    assert ref == {"tom"} and others == {"priya"}


def test_switches_are_config():
    r = RetrievalSection()
    assert r.cross_language_gloss_heads and r.zh_compound_cores and r.kin_coverage


@pytest.mark.integration
@pytest.mark.parametrize("on", [True, False])
def test_short_and_broad_questions_pass_the_floor(make_engine, t0, on):
    """Fails on the code before these mechanisms: each answer sat under the floor (relevance 0.03-0.22)."""
    eng = make_engine({"tracing.enabled": False, "retrieval.touch_on_hit": False,
                       "retrieval.cross_language_gloss_heads": on, "retrieval.zh_compound_cores": on,
                       "retrieval.kin_coverage": on})
    climb = eng.add("最近迷上了攀岩，每周去两次岩馆，手上全是茧", user_id="u", now=t0)
    eng.add("房租每个月十五号交，房东姓陈", user_id="u", now=t0 + timedelta(minutes=1))
    run = eng.add("我每天早上跑5公里", user_id="u", now=t0 + timedelta(minutes=2))
    eng.add("早上只喝绿茶，咖啡喝了会心慌", user_id="u", now=t0 + timedelta(minutes=3))
    sis = eng.add("my sister lives in Denver", user_id="v", now=t0)
    bro = eng.add("my brother moved to Austin last year", user_id="v", now=t0 + timedelta(days=1))
    later = t0 + timedelta(days=5)

    def ids(q: str, user: str, k: int = 5) -> list[str]:
        return [h.memory_id for h in eng.retrieve(q, user_id=user, now=later, top_k=k).hits]

    assert (climb.memory_id in ids("climbing", "u")) is on
    assert (run.memory_id in ids("我跑步的情况", "u")) is on
    family = ids("where do my siblings live?", "v", 2)
    assert sis.memory_id in family and (bro.memory_id in family) is on
    # never-stored topics stay empty; a memory of a group says nothing about one member of it
    assert ids("swimming", "u") == [] and ids("我游泳的情况", "u") == []
    eng.add("My sister moved to Denver last spring with her two kids", user_id="w", now=t0)
    eng.add("儿子的钢琴老师姓刘，每周四下午来家里上课", user_id="w", now=t0 + timedelta(minutes=1))
    assert ids("女儿的舞蹈老师叫什么？", "w") == []
