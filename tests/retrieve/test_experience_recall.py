"""Issue 16, class 3, session 9 (MADial-like recall of Chinese experiences): a Chinese query's keyword evidence
is weighted by general-corpus IDF (jieba's table), so its function-like words (去, 上, 一起) no longer match
memories at full weight; the best keyword row of a Chinese query is scaled by the weighted share of the query it
holds; the hybrid fusion max-normalises a Chinese query's dense term like its keyword term; 这几天 / 什么都 ask
nothing; and a statement of the user's present, which looks nothing up, lets its top dense matches past the
floor even when none reaches it, while a never-told lookup stays empty. Pure functions first, then a real
in-memory engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import EngineConfig, MemoryEngine
from memory_engine.config import RetrievalSection
from memory_engine.retrieve.cutoffs import RelevanceFloor
from memory_engine.retrieve.fusion import Candidate, fuse
from memory_engine.text import (
    is_lookup,
    sparse_query,
    term_id,
    weighted_coverage,
    zh_term_weight,
    zh_term_weights,
)

LOW, FULL, MIN = 3.0, 7.0, 0.05


def test_general_idf_weighs_function_like_chinese_words_down_and_leaves_english_alone():
    # jieba's general IDF: 去 3.3, 上 2.5 (function-like in any text); 宠物 9.9, 香格里拉 10.6 (content)
    assert zh_term_weight("去", LOW, FULL, MIN) < 0.2
    assert zh_term_weight("上", LOW, FULL, MIN) == pytest.approx(MIN)
    assert zh_term_weight("宠物", LOW, FULL, MIN) == 1.0
    assert zh_term_weight("香格里拉", LOW, FULL, MIN) == 1.0
    # a word jieba does not list gets its median IDF (11.95): a content word
    assert zh_term_weight("犯怵", LOW, FULL, MIN) == 1.0
    # English, digits and identifiers are unchanged
    assert zh_term_weight("marathon", LOW, FULL, MIN) == 1.0
    assert zh_term_weight("sf1234567890", LOW, FULL, MIN) == 1.0
    w = zh_term_weights(["去", "宠物"], LOW, FULL, MIN)
    vec = sparse_query(["去", "宠物"], w)
    assert dict(zip(vec.indices, vec.values, strict=True)) == {term_id("去"): w["去"], term_id("宠物"): 1.0}
    # without weights every term is 1.0, as before
    assert sparse_query(["去", "宠物"]).values == (1.0, 1.0)
    # a row holding only 去 holds little of the query
    assert weighted_coverage(w, ["去", "公园"]) < 0.1
    assert weighted_coverage(w, ["宠物"]) > 0.9
    assert weighted_coverage({}, ["宠物"]) == 0.0


@pytest.mark.parametrize("text", ["我老婆预产期就在下周，我这几天紧张得饭都吃不下",
                                  "最近什么都不想吃，整个人没精神", "前几年搬到南方以后就再没见过雪了"])
def test_indefinite_interrogatives_ask_nothing(text):
    assert not is_lookup(text, 4)


@pytest.mark.parametrize("text", ["你几点下班", "我家有几只猫", "我上次去日本玩是哪一年？", "你这几天去哪了"])
def test_real_questions_stay_lookups(text):
    assert is_lookup(text, 4)


def _statement_pool() -> list[Candidate]:
    """Thirty candidates, none at the 0.25 floor: the right experience is the top dense match (0.2)."""
    right = Candidate("right", similarity=0.2, fused=0.3)
    weak = Candidate("weak", similarity=0.05, fused=0.4)  # under statement_min_similarity
    rest = [Candidate(f"u{i:02d}", similarity=0.12 - i / 1000, fused=0.2 - i / 1000) for i in range(28)]
    return [weak, right, *rest]


def test_a_statement_lifts_its_top_dense_matches_when_nothing_reaches_the_floor():
    floor = RelevanceFloor(RetrievalSection(floor=0.25, dense_keep=3, dense_keep_share=0.1, statement_keep=0))
    kept, below = floor.split(_statement_pool(), lookup=False)
    assert [c.memory_id for c in kept] == ["right", "u00", "u01"]  # the order of the ranked list is kept
    assert len(below) == 27 and "weak" in {c.memory_id for c in below}
    # a lookup (a question about a never-told fact) stays empty, as does the default call
    assert floor.split(_statement_pool(), lookup=True)[0] == []
    assert floor.split(_statement_pool())[0] == []
    # off: the floor's gate alone
    off = RelevanceFloor(RetrievalSection(floor=0.25, dense_keep=3, statement_dense_keep=False))
    assert off.split(_statement_pool(), lookup=False)[0] == []
    # nothing above the unrelated baseline: nothing is lifted
    flat = [Candidate(f"z{i}", similarity=0.0, fused=0.1) for i in range(30)]
    assert floor.split(flat, lookup=False)[0] == []


def test_hybrid_fusion_max_normalises_a_chinese_querys_dense_term_only():
    params = {"dense": 0.6, "keyword": 0.4, "recency": 0.0, "importance": 0.0, "tau_days": 180.0}
    para = Candidate("para", similarity=0.3, cjk_statement=True)
    word = Candidate("word", similarity=0.1, keyword=1.0, cjk_statement=True)
    # unnormalised, one shared word (keyword 1.0) beats the best paraphrase
    assert [c.memory_id for c in fuse([para, word], "hybrid", params)] == ["word", "para"]
    out = {c.memory_id: c.fused for c in fuse([para, word], "hybrid", {**params, "dense_scale_cjk": 1.0})}
    assert out["para"] == pytest.approx(0.6) and out["word"] == pytest.approx(0.6 * 0.1 / 0.3 + 0.4)
    # an English query's dense term is unchanged
    en = [Candidate("a", similarity=0.3), Candidate("b", similarity=0.1, keyword=1.0)]
    assert {c.memory_id: c.fused for c in fuse(en, "hybrid", {**params, "dense_scale_cjk": 1.0})} == {
        c.memory_id: c.fused for c in fuse(en, "hybrid", params)}


T0 = datetime(2026, 5, 1, 12, tzinfo=UTC)
EXPERIENCES = [
    "前年夏天在三亚学潜水，下到五米耳朵就疼得受不了，之后好几天都听不清",
    "去年去重庆出差，在火锅店被辣到胃疼，半夜去医院挂了急诊",
    "小时候在外婆家的池塘边玩，差点掉下去，是表哥一把把我拽了上来",
    "第一次去健身房练腿，第二天下楼梯腿一直在抖",
    "大学军训的时候中暑晕倒在操场上，醒来已经在校医室了",
    "用户去年养的一缸金鱼因为换水太急一夜之间全死了，他难过了好几天",
    "研一那年导师当着全组的面说我的实验设计是在浪费时间，我回宿舍哭了一场",
    "和发小一起去爬泰山看日出，结果山顶全是雾，什么都没看到",
    "我爸做完心脏搭桥手术那周，我每天在医院走廊的椅子上睡",
    "第一次自己包饺子，煮出来全破了皮，最后变成了一锅片汤",
    "刚工作那年被房东临时赶出来，拖着两个箱子在街上找了一晚上房子",
    "我姐生二胎那天凌晨我开车送她去医院，一路闯了两个黄灯",
]
OLD = {"retrieval.zh_term_prior": False, "retrieval.keyword_scale_cjk": None,
       "retrieval.dense_scale_cjk": False, "retrieval.statement_dense_keep": False}


def _engine(over: dict[str, object]) -> tuple[MemoryEngine, list[str]]:
    eng = MemoryEngine.in_memory(EngineConfig().with_overrides(
        {"tracing.enabled": False, "retrieval.touch_on_hit": False, **over}))
    ids = [eng.add(t, user_id="u", session_id=f"s{i}", now=T0 + timedelta(days=i)).memory_id
           for i, t in enumerate(EXPERIENCES)]
    return eng, ids


def test_a_current_situation_recalls_the_experience_it_calls_for_and_never_told_lookups_stay_empty():
    later = T0 + timedelta(days=40)
    # the wife's due date 'these days' calls for the night the user drove the sister to give birth; before, 这几天
    # made it a question about the wife, the sister's memory was discounted as another relative's, and the goldfish
    # memory won on 一 / 天 shaped words
    query = "我老婆这几天就要生了，我整个人都绷着"
    top = {}
    for name, over in (("old", OLD), ("new", {})):
        eng, ids = _engine(over)
        try:
            top[name] = [h.memory_id for h in eng.retrieve(query, user_id="u", top_k=1, now=later).hits]
            if name == "new":
                assert eng.retrieve("我家的鹦鹉叫什么名字？", user_id="u", now=later).hits == []
                assert eng.retrieve("我对花粉过敏吗？", user_id="u", now=later).hits == []
                # a query naming the memory's own words still finds it first
                assert eng.retrieve("金鱼换水", user_id="u", top_k=1, now=later).hits[0].memory_id == ids[5]
        finally:
            eng.close()
        top[name + "_want"] = [ids[11]]
    assert top["old"] != top["old_want"]
    assert top["new"] == top["new_want"]


def test_a_shared_function_word_no_longer_earns_the_keyword_weight():
    later = T0 + timedelta(days=40)
    # a statement (eleven terms, no question) that shares only 去 with the gym memory (去健身房)
    query = "这周末天气不错，打算约上朋友去海边吹吹风"
    fused = {}
    # the dense term unnormalised in both runs: only the keyword evidence differs
    for name, over in (("old", OLD), ("new", {"retrieval.dense_scale_cjk": False})):
        eng, ids = _engine(over)
        try:
            res = eng.retrieve(query, user_id="u", now=later, explain=True)
            fused[name] = {e.memory_id: e.fused_score for e in res.explanations}.get(ids[3], 0.0)
        finally:
            eng.close()
    # before: BM25 over the best BM25 gave the gym memory most of the keyword weight (0.4) for 去 alone
    # (measured 0.35 -> 0.15 fused)
    assert fused["old"] - fused["new"] > 0.15


def test_a_statement_keeps_its_statement_keep_nearest_experiences():
    """retrieval.statement_keep (default 5) replaces dense_keep for a statement, within statement_keep_share."""
    floor = RelevanceFloor(RetrievalSection(floor=0.25, dense_keep=3, dense_keep_share=0.1))
    kept, _ = floor.split(_statement_pool(), lookup=False)
    assert [c.memory_id for c in kept] == ["right", "u00", "u01", "u02", "u03"]
    assert floor.split(_statement_pool(), lookup=True)[0] == []  # a lookup still stays empty
