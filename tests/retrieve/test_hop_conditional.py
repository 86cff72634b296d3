"""Conditional questions through the entity hop (retrieve/hop.py): the question names a person by one of
their attributes ('那个会拉小提琴的人') and asks another ('叫什么名字'). The attribute it names finds the person's
memory; the hop then reaches that person's other memories through the relation noun they share (我的下属,
我上司), and of those it keeps the ones nearest the question (``retrieval.hop_rank_by_query``), so the one
that answers is among them. Real in-memory engine (bundled e5, qdrant-edge), no session (as MemDaily's
messages come)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import MemoryEngine
from memory_engine.retrieve.hop import hop_terms
from memory_engine.text import relation_nouns

T0 = datetime(2026, 5, 4, 9, tzinfo=UTC)


def _add(eng: MemoryEngine, user: str, texts: list[str]) -> list[str]:
    return [eng.add(t, user_id=user, now=T0 + timedelta(hours=7 * i)).memory_id for i, t in enumerate(texts)]


def test_relation_nouns_count_whatever_the_tagger_says():
    """jieba tags 下属 as a verb and 邻居 too; they still name who the memory is about. Whole words only."""
    assert relation_nouns("我的下属身高有一米八") == {"下属"}
    assert relation_nouns("我的邻居养了一条金毛") == {"邻居"}
    assert relation_nouns("打了个的哥开得很稳") == frozenset()
    assert relation_nouns("my neighbour is nice") == frozenset()
    assert "下属" in hop_terms("我的下属是个警察")  # before: no noun at all, so no link


@pytest.mark.integration
def test_a_conditional_question_reaches_the_persons_name_through_a_mistagged_relation_noun(quiet_engine_factory):
    """The violin memory answers the condition; the name is in another memory of 我的下属 (jieba: a verb), one
    of five about that person. Before, 下属 linked nothing and the name fell under the floor."""
    eng = quiet_engine_factory()
    ids = _add(eng, "cond-sub", [
        "我的下属叫周明远",
        "我下属今年三十一岁",
        "我的下属老家在河北保定",
        "我的下属周末特别爱拉小提琴",
        "我的下属在一家律所做合规",
        "我表哥叫李浩",
        "我同事名字叫陈静",
    ])
    res = eng.retrieve("那个会拉小提琴的人叫什么名字？", user_id="cond-sub", now=T0 + timedelta(days=3), top_k=10)
    got = [h.memory_id for h in res.hits]
    assert ids[3] in got and ids[0] in got
    assert got.index(ids[3]) < got.index(ids[0])  # the hop ranks below the memory that reached it


@pytest.mark.integration
@pytest.mark.parametrize(("by_query", "found"), [(True, True), (False, False)])
def test_the_hop_keeps_the_linked_memories_nearest_the_question(by_query, found, quiet_engine_factory):
    """上司 is a noun, so every memory of the boss is linked; hop_limit 3 keeps three of the five. By BM25
    against the hit's words (the order before, ``hop_rank_by_query`` False) the height is not among them; by
    nearness to the question it is."""
    eng = quiet_engine_factory({"retrieval.hop_rank_by_query": by_query})
    ids = _add(eng, "cond-boss", [
        "我上司身高一米六五左右",
        "我上司是研究生学历，读的是经济学",
        "我上司今年四十二岁",
        "我上司的老家在江西赣州",
        "我上司以前在银行做过信贷",
        "我舅舅个子一米八",
        "我表妹也就一米五八",
    ])
    res = eng.retrieve("那个在银行做过信贷的人有多高？", user_id="cond-boss", now=T0 + timedelta(days=3), top_k=10)
    got = [h.memory_id for h in res.hits]
    assert ids[4] in got
    assert (ids[0] in got) is found
