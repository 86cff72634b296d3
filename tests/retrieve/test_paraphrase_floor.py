"""Issue 16, class 3 (paraphrased recall): the order of equal scores does not depend on the random memory
ids, the dense-rank keep lets a paraphrase's top dense match past the floor once the question is on a stored
topic (never on a never-stored one, never in a store too small for a rank to mean anything), and the
coverage-scaled BM25 no longer gives one incidental shared word the whole keyword weight. Pure stages first,
then a real in-memory engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import timedelta

from memory_engine.config import RetrievalSection
from memory_engine.retrieve.cutoffs import RelevanceFloor
from memory_engine.retrieve.fusion import Candidate, fuse, rank_key

HYBRID = {"dense": 0.6, "keyword": 0.4, "recency": 0.0, "importance": 0.0, "tau_days": 180.0}


def test_equal_scores_rank_the_newer_memory_first_whatever_the_ids():
    # same features, so the same fused score; ids chosen so that id order contradicts time order
    old = Candidate("0000aaaa", similarity=0.5, written_at=1_000.0, text="我每周二去游泳")
    new = Candidate("ffff0000", similarity=0.5, written_at=2_000.0, text="我每周三去游泳")
    for order in ([old, new], [new, old]):
        assert [c.memory_id for c in fuse(order, "hybrid", HYBRID)] == ["ffff0000", "0000aaaa"]
    # same time: the text decides, not the id
    a = Candidate("ffff", similarity=0.5, written_at=5.0, text="a")
    b = Candidate("0000", similarity=0.5, written_at=5.0, text="b")
    assert sorted([b, a], key=rank_key) == [a, b]


def _pool(n: int) -> list[Candidate]:
    """One candidate at the floor (the question is answerable), a paraphrase under it with the best dense
    similarity, and n - 2 unrelated ones, in fused order."""
    gate = Candidate("gate", similarity=0.1, coverage=0.3, fused=0.5)
    para = Candidate("para", similarity=0.23, fused=0.3)
    rest = [Candidate(f"u{i:02d}", similarity=0.05, fused=0.1 - i / 1000) for i in range(n - 2)]
    return [gate, para, *rest]


def test_dense_keep_lifts_the_top_dense_match_of_an_answerable_question():
    floor = RelevanceFloor(RetrievalSection(floor=0.25, dense_keep=1, dense_keep_share=0.1))
    kept, below = floor.split(_pool(20))
    assert [c.memory_id for c in kept] == ["gate", "para"]  # the order of the ranked list is kept
    assert "para" not in {c.memory_id for c in below} and len(below) == 18
    # off: the floor alone
    kept0, _ = RelevanceFloor(RetrievalSection(floor=0.25, dense_keep=0)).split(_pool(20))
    assert [c.memory_id for c in kept0] == ["gate"]


def test_dense_keep_never_opens_a_never_stored_topic_or_a_tiny_store():
    floor = RelevanceFloor(RetrievalSection(floor=0.25, dense_keep=3, dense_keep_share=0.1))
    unanswerable = [c for c in _pool(20) if c.memory_id != "gate"]
    assert floor.split(unanswerable)[0] == []
    # six candidates: rank 1 of 6 is what an unrelated memory gets one time in six, nothing is lifted
    assert [c.memory_id for c in floor.split(_pool(6))[0]] == ["gate"]
    # a candidate at or under the unrelated baseline (similarity 0) is never lifted
    flat = [Candidate("gate", coverage=0.3, fused=0.5)] + [Candidate(f"z{i}", fused=0.1) for i in range(30)]
    assert [c.memory_id for c in floor.split(flat)[0]] == ["gate"]


EPISODES = [
    "考研那年最后两个月，我每天凌晨两三点才睡得着，躺在床上脑子里全是没背完的政治题",
    "和谈了四年的女朋友分手那天，我一个人在江边坐到半夜，之后一个多月都不想见任何人",
    "去年公司裁员名单里有我，HR十分钟就谈完了，我抱着纸箱站在电梯里，觉得自己特别没用",
    "我家的柯基豆豆十二岁那年肾衰竭走了，最后一晚它一直趴在我脚边，到现在我都不敢再养狗",
    "第一次跑半马在第十八公里腿抽筋了，是旁边一个陌生大叔扶着我走完的，过线的时候我哭了",
    "我哥结婚的时候我当伴郎上台致辞，紧张得把稿子念错了两次，全场都在笑，我脸红到耳根",
    "2021年夏天那场特大暴雨，我被困在地铁五号线车厢里两个小时，水一直涨到腰",
    "小时候每年过年外婆都给我包荠菜馅的饺子，她走了以后我再也没吃到过那个味道",
    "前年天天久坐写代码，腰椎间盘突出疼得下不了床，在家躺了三周，又做了两个月理疗",
    "刚到北京那年我住在没有窗户的地下室，冬天被子总是潮的，那是我最难熬的一年",
    "初中班主任王老师在我家最困难的时候偷偷帮我交了学费，我一直想当面谢谢她",
    "有一次在高铁上突然心跳特别快、喘不上气，以为自己要死了，后来医生说那是惊恐发作",
    "我妈逼我学了八年钢琴，考完十级我就再也没碰过，现在想想有点后悔",
    "Last spring I lost my passport in Lisbon two days before my flight home and spent a day at the embassy",
    "I tore my ACL playing soccer in college and recovering from the surgery took almost a year",
    "When I finally got promoted to team lead my dad called just to say he was proud of me",
    "下周六去考科目二，教练说我倒车入库还不太稳",
    "网上买了个乳胶枕，睡起来还挺软的，就是有股味道",
    "楼下邻居家的泰迪每天早上七点准时开始叫",
    "我把地铁卡绑到手机上了，现在进站刷手机就行",
]


def test_a_paraphrase_of_an_episode_comes_back_and_a_never_stored_topic_stays_empty(make_engine, t0):
    later = t0 + timedelta(days=40)
    query = "报名了今年秋天的全马，有点怕又在半路撑不住"
    found = {}
    for keep in (0, 3):
        eng = make_engine({"retrieval.dense_keep": keep, "retrieval.dense_keep_share": 0.1})
        ids = [eng.add(t, user_id="u", now=t0 + timedelta(days=i)).memory_id for i, t in enumerate(EPISODES)]
        found[keep] = [h.memory_id for h in eng.retrieve(query, user_id="u", top_k=5, now=later).hits]
        if keep:
            # a topic never told (a dentist next to the doctors) still returns nothing
            assert eng.retrieve("牙医", user_id="u", now=later).hits == []
            # the keyword note the query names still ranks first
            assert eng.retrieve("乳胶枕", user_id="u", top_k=1, now=later).hits[0].memory_id == ids[17]
    # before: the half-marathon cramp was dense #2 at relevance 0.23, under the 0.25 floor
    assert ids[4] not in found[0]
    assert ids[4] in found[3]


def test_one_incidental_shared_word_no_longer_earns_the_whole_keyword_weight(make_engine, t0):
    later = t0 + timedelta(days=40)
    fused = {}
    for scale in ("best", "best_coverage"):
        # keyword_scale_cjk None: the Chinese query follows keyword_scale (its own default is best_coverage)
        eng = make_engine({"retrieval.keyword_scale": scale, "retrieval.keyword_scale_cjk": None,
                           "retrieval.zh_term_prior": False, "retrieval.dense_scale_cjk": False})
        ids = [eng.add(t, user_id="u", now=t0 + timedelta(days=i)).memory_id for i, t in enumerate(EPISODES)]
        # the poodle note shares only 楼下 with this query: it is the query's best (and only) BM25 row
        res = eng.retrieve("想买辆自行车骑着上下班，又怕放楼下被人顺走", user_id="u", now=later, explain=True)
        full = eng.retrieve("乳胶枕", user_id="u", now=later, explain=True)
        fused[scale] = ({e.memory_id: e.fused_score for e in res.explanations}[ids[18]],
                        {e.memory_id: e.fused_score for e in full.explanations}[ids[17]])
    # before: BM25 / best BM25 = 1.0, the keyword weight 0.4 in full for one word of about ten
    assert fused["best"][0] - fused["best_coverage"][0] > 0.25
    # a query every word of which the memory holds keeps its keyword score
    assert abs(fused["best"][1] - fused["best_coverage"][1]) < 1e-6
