"""The engine end to end on the real qdrant-edge engine and the real bundled model."""

from datetime import timedelta

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memory_engine import EngineConfig, MemoryEngine, ValidationError
from memory_engine.errors import EmbeddingError
from memory_engine.store.base import StoreFilter

pytestmark = pytest.mark.integration


def ids(res):
    return [h.memory_id for h in res.hits]


# --- the seeds' three golden questions (SEED_DIGEST section 7), both languages ----------------

def test_q1_fuzzy_reference_zh(engine, t0):
    target = engine.add("我买了蓝色的 Jabra Elite 8 Active 耳机，订单号 JD88231", user_id="u1", now=t0).memory_id
    engine.add("我喜欢蓝色的帆布鞋，买了一双 Converse", user_id="u1", now=t0 + timedelta(days=1))
    engine.add("我给女儿买了一个蓝色书包，决定就要这个", user_id="u1", now=t0 + timedelta(days=2))
    res = engine.retrieve("那个蓝色耳机降价了吗？", user_id="u1", now=t0 + timedelta(days=5))
    assert ids(res)[0] == target


def test_q1_fuzzy_reference_en(engine, t0):
    target = engine.add("I ordered the blue Jabra Elite 8 Active headphones, order JD88231", user_id="u1", now=t0).memory_id
    engine.add("I like my blue Converse sneakers", user_id="u1", now=t0 + timedelta(days=1))
    engine.add("I decided to buy a blue backpack for my daughter", user_id="u1", now=t0 + timedelta(days=2))
    res = engine.retrieve("That blue headphone, has it dropped in price?", user_id="u1", now=t0 + timedelta(days=5))
    assert ids(res)[0] == target


@pytest.mark.parametrize("constraint,other,query", [
    ("别给我推游戏相关的内容", "我上周学完了 Python 入门课", "最近有什么新课程推荐？"),
    ("Don't recommend anything game-related to me", "I finished the intro Python course last week",
     "Any new courses you would recommend?"),
])
def test_q2_negation_constraint_surfaces(engine, t0, constraint, other, query):
    c = engine.add(constraint, user_id="u1", now=t0).memory_id
    engine.add(other, user_id="u1", memory_type="episodic", now=t0 + timedelta(days=1))
    res = engine.retrieve(query, user_id="u1", now=t0 + timedelta(days=3))
    assert c in ids(res)
    assert "fact" in next(h for h in res.hits if h.memory_id == c).sources


@pytest.mark.parametrize("monday,wednesday,query,expect", [
    ("默认快递用顺丰", "这次寄到北京朝阳区", "寄快递默认用哪家？", "顺丰"),
    ("My default courier is SF Express", "Ship this one to Chaoyang, Beijing", "Which courier is my default for shipping?", "SF"),
])
def test_q3_cross_session_courier(engine, t0, monday, wednesday, query, expect):
    engine.add(monday, user_id="u1", session_id="mon", now=t0)
    engine.add(wednesday, user_id="u1", session_id="wed", memory_type="episodic", now=t0 + timedelta(days=2))
    res = engine.retrieve(query, user_id="u1", session_id="wed", now=t0 + timedelta(days=2, hours=1))
    assert res.hits and expect in res.hits[0].content


# --- isolation --------------------------------------------------------------------------------

def test_isolation_across_users_and_tenants_all_routes(engine, t0):
    a = engine.add("My VIP level is gold and I prefer SF Express", user_id="alice", tenant_id="t1",
                   fact={"key": "vip.level", "value": "gold"}, now=t0).memory_id
    engine.add("I prefer SF Express for every order ORD-7788", user_id="alice", tenant_id="t1", now=t0)
    engine.add("I prefer SF Express for every order ORD-7788", user_id="alice", tenant_id="t2", now=t0)
    for user, tenant in (("bob", "t1"), ("alice", "t3"), ("bob", "t2")):
        res = engine.retrieve("vip level SF Express ORD-7788 order", user_id=user, tenant_id=tenant,
                              now=t0 + timedelta(hours=1), explain=True)
        assert res.hits == [] and res.explanations == []
        assert engine.get_fact("vip.level", user_id=user, tenant_id=tenant) is None
        assert engine.memory(a, user_id=user, tenant_id=tenant) is None
        assert engine.forget(a, user_id=user, tenant_id=tenant) is False
    own = engine.retrieve("vip level SF Express ORD-7788", user_id="alice", tenant_id="t2", now=t0 + timedelta(hours=1))
    assert len(own.hits) == 1 and own.hits[0].memory_id != a
    assert engine.get_fact("vip.level", user_id="alice", tenant_id="t1") == "gold"


# --- write pipeline ------------------------------------------------------------------------------

def test_correction_supersedes_old_memory(engine, t0):
    old = engine.add("I prefer window seats on flights", user_id="u1", now=t0).memory_id
    keep = engine.add("I am allergic to peanuts", user_id="u1", now=t0)
    r = engine.add("Actually I no longer want window seats, change to aisle seats", user_id="u1", now=t0 + timedelta(days=1))
    assert r.outcome == "stored" and r.superseded_ids == (old,)
    rec = engine.memory(old, user_id="u1")
    assert rec.status.value == "deprecated" and rec.superseded_by == r.memory_id and rec.archived_at is not None
    res = engine.retrieve("which seats do I want on flights?", user_id="u1", now=t0 + timedelta(days=2))
    assert r.memory_id in ids(res) and old not in ids(res)
    assert engine.memory(keep.memory_id, user_id="u1").status.value == "current"


def test_correction_zh(engine, t0):
    old = engine.add("我喜欢喝拿铁咖啡", user_id="u1", now=t0).memory_id
    r = engine.add("更正一下，我不再喝拿铁了，改为喝美式咖啡", user_id="u1", now=t0 + timedelta(days=1))
    assert old in r.superseded_ids
    res = engine.retrieve("我平时喝什么咖啡", user_id="u1", now=t0 + timedelta(days=2))
    assert old not in ids(res) and r.memory_id in ids(res)


def test_dedup_merges_and_touches(engine, t0):
    first = engine.add("I prefer aisle seats on long flights", user_id="u1", now=t0)
    again = engine.add("I prefer aisle seats on long flights.", user_id="u1", now=t0 + timedelta(days=1))
    assert again.outcome == "merged" and again.memory_id == first.memory_id
    rec = engine.memory(first.memory_id, user_id="u1")
    assert rec.access_count == 1 and rec.updated_at > rec.created_at
    other = engine.add("I prefer aisle seats on long flights, order ABC123456", user_id="u1", now=t0)
    assert other.outcome == "stored"  # identifiers differ: not a duplicate
    neg = engine.add("I don't prefer aisle seats on long flights", user_id="u1", now=t0 + timedelta(days=2))
    assert neg.outcome == "stored"  # negation differs: never merged into the positive


def test_rejections_and_pii(engine, t0):
    assert engine.add("thanks!", user_id="u1", now=t0).reason == "chit_chat"
    assert engine.add("帮我查一下今天天气", user_id="u1", now=t0).reason == "one_off_command"
    bland = engine.add("the sky was grey", user_id="u1", now=t0)  # below the threshold: kept, not curated (issue 16)
    assert (bland.outcome, bland.memory_type) == ("stored", "episodic") and bland.importance < engine.config.write.threshold
    r = engine.add("我的身份证号是110101199003071233，请记住我喜欢靠窗座位", user_id="u1", now=t0)
    assert r.outcome == "stored" and r.redactions == ("ID_NUMBER",)
    assert "110101199003071233" not in engine.memory(r.memory_id, user_id="u1").content
    res = engine.retrieve("身份证 110101199003071233 靠窗", user_id="u1", now=t0)
    assert res.hits and all("110101199003071233" not in h.content for h in res.hits)


def test_uncertain_becomes_candidate_then_promoted(engine, t0):
    r1 = engine.add("Maybe I will learn Japanese next year?", user_id="u1", session_id="s1", now=t0)
    assert r1.outcome == "candidate"
    assert engine.retrieve("learn Japanese", user_id="u1", now=t0).hits == []
    r2 = engine.add("Maybe I will learn Japanese next year?", user_id="u1", session_id="s2", now=t0 + timedelta(days=3))
    assert r2.outcome == "stored" and r2.memory_id == r1.memory_id and r2.reason == "promoted_candidate"
    assert r1.memory_id in ids(engine.retrieve("learn Japanese", user_id="u1", now=t0 + timedelta(days=4)))


def test_fact_overwrite_keeps_history(engine, t0):
    engine.add("My child is in grade 3", user_id="u1", fact={"key": "child.grade", "value": 3}, now=t0)
    assert engine.add("My child is in grade 3", user_id="u1", fact={"key": "child.grade", "value": 3}, now=t0).outcome == "merged"
    r = engine.add("My child is in grade 4 now", user_id="u1", fact={"key": "Child.Grade", "value": 4}, now=t0 + timedelta(days=200))
    assert r.outcome == "stored" and len(r.superseded_ids) == 1
    assert engine.get_fact("child.grade", user_id="u1") == 4
    assert [h.fact_value for h in engine.fact_history("child.grade", user_id="u1")] == [3, 4]


def test_missing_user_id_is_refused_and_nothing_stored(engine, t0):
    for bad in (None, "", "   "):
        with pytest.raises(ValidationError, match="user_id"):
            engine.add("I prefer tea", user_id=bad, now=t0)
        with pytest.raises(ValidationError):
            engine.retrieve("tea", user_id=bad)
    assert engine.store.count(StoreFilter(tenant_id="default", user_id=None, tenant_scan=True, statuses=None,
                                          include_archived=True)) == 0
    with pytest.raises(ValidationError, match="fact"):
        engine.add("x", user_id="u1", fact={"value": 1})
    with pytest.raises(ValidationError, match="memory_type"):
        engine.add("x", user_id="u1", memory_type="dream")


# --- retrieval ----------------------------------------------------------------------------------

def test_order_number_found_by_keyword_route_when_dense_misses(make_engine, t0):
    eng = make_engine({"retrieval.route_limit": 3})
    for i, item in enumerate(["a phone case", "two lamps", "a rice cooker", "garden chairs", "a yoga mat", "ink"]):
        eng.add(f"Where is my parcel with {item}? It has not arrived yet, I decided to wait", user_id="u1",
                memory_type="episodic", now=t0 + timedelta(minutes=i))
    target = eng.add("Uniqlo socks were bought under ORD88231", user_id="u1", memory_type="episodic", now=t0).memory_id
    query = "Where is my parcel ORD88231? It has not arrived yet"
    dense = eng.store.search_dense(eng.embedder.embed_query(query).tolist(),
                                   StoreFilter(tenant_id="default", user_id="u1"), 3)
    assert target not in [p.id for p in dense]  # the dense route alone misses it
    res = eng.retrieve(query, user_id="u1", now=t0 + timedelta(hours=1), explain=True)
    assert target in ids(res) and "keyword" in res.hits[ids(res).index(target)].sources
    ex = next(e for e in res.explanations if e.memory_id == target)
    assert ex.route_ranks.get("keyword") == 1 and "vector" not in ex.route_ranks


def test_abstention_and_explain(engine, t0):
    engine.add("I prefer aisle seats on long flights", user_id="u1", now=t0)
    res = engine.retrieve("What is the capital of Mongolia?", user_id="u1", now=t0, explain=True)
    assert res.hits == []
    assert res.explanations and all(e.dropped_at == "floor" for e in res.explanations)


def test_fusion_strategies_all_work_and_rrf_matches_qdrant(make_engine, t0):
    docs = ["I prefer aisle seats on flights", "My favourite airline is KLM", "I decided to fly to Tokyo in May",
            "I like jazz music", "My cat is called Miso"]
    for fusion in ("weighted", "five_term", "rrf"):
        eng = make_engine({"retrieval.fusion": fusion, "retrieval.recent_limit": 0, "retrieval.floor": 0.0,
                           "retrieval.top_k": 5, "retrieval.constraints_on_recommend": False})
        for d in docs:
            eng.add(d, user_id="u1", now=t0)
        res = eng.retrieve("flights airline seats", user_id="u1", now=t0 + timedelta(days=1))
        assert res.hits and not res.degraded
        if fusion == "rrf":
            q = "flights airline seats"
            from memory_engine.text import content_terms, sparse_query

            server = eng.store.search_rrf(eng.embedder.embed_query(q).tolist(), sparse_query(content_terms(q)),
                                          StoreFilter(tenant_id="default", user_id="u1"), 5, 20, 60)
            assert [p.id for p in server] == ids(res)


def test_vague_query_rewritten_from_session(engine, t0):
    engine.add("I'm comparing the Sony WH-1000XM5 and the Bose QC Ultra headphones", user_id="u1",
               session_id="s1", memory_type="episodic", now=t0)
    res = engine.retrieve("what did I say about that one last time?", user_id="u1", session_id="s1", now=t0)
    assert res.rewritten_query and "sony" in res.rewritten_query and "wh-1000xm5" in res.rewritten_query
    assert res.hits


def test_hits_touch_access(engine, t0):
    m = engine.add("I prefer aisle seats", user_id="u1", now=t0).memory_id
    engine.retrieve("aisle seats", user_id="u1", now=t0 + timedelta(days=1))
    rec = engine.memory(m, user_id="u1")
    assert rec.access_count == 1 and rec.last_access_at == pytest.approx((t0 + timedelta(days=1)).timestamp())


def test_kill_switch(make_engine, t0):
    eng = make_engine({"memory.enabled": False})
    assert eng.add("I prefer tea", user_id="u1", now=t0).reason == "memory_disabled"
    res = eng.retrieve("tea", user_id="u1")
    assert res.hits == [] and not res.degraded


class _BrokenEmbedder:
    """Fault injection at the Embedder protocol boundary: every call fails."""

    def __init__(self, real):
        self.version, self.dim, self.baseline = real.version, real.dim, real.baseline

    def embed_documents(self, texts):
        raise EmbeddingError("model file unreadable")

    def embed_query(self, text):
        raise EmbeddingError("model file unreadable")

    def rescale(self, cos):
        return cos


def test_embedder_failure_degrades_with_error_span(embedder, tmp_path, t0):
    exporter = InMemorySpanExporter()
    eng = MemoryEngine.in_memory(EngineConfig(workspace=str(tmp_path)), embedder=_BrokenEmbedder(embedder),
                                 span_processors=[SimpleSpanProcessor(exporter)])
    try:
        res = eng.retrieve("anything", user_id="u1", now=t0)
        assert res.hits == [] and res.degraded and "model file unreadable" in res.error
        span = [s for s in exporter.get_finished_spans() if s.name == "memory.retrieve"][0]
        assert span.status.status_code.name == "ERROR" and span.attributes["memory.degraded"] is True
        assert any(ev.name == "exception" for ev in span.events)
    finally:
        eng.close()


# --- spans ---------------------------------------------------------------------------------------

def test_spans_carry_documented_attributes(make_engine, t0):
    exporter = InMemorySpanExporter()
    eng = make_engine(span_processors=[SimpleSpanProcessor(exporter)])
    w = eng.add("I prefer aisle seats", user_id="u1", tenant_id="t1", session_id="s1", now=t0)
    eng.add("ok", user_id="u1", tenant_id="t1", now=t0)
    res = eng.retrieve("aisle seats", user_id="u1", tenant_id="t1", session_id="s1", now=t0)
    cited = eng.record_answer(res, f"You like aisle seats [mem-{w.memory_id}].")
    eng.forget(w.memory_id, user_id="u1", tenant_id="t1")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"memory.write", "memory.retrieve", "memory.answer", "memory.forget"}
    r = spans["memory.retrieve"].attributes
    for key in ("memory.tenant_id", "memory.user_id", "memory.session_id", "memory.query", "memory.top_k",
                "memory.retrieved_ids", "memory.retrieved_scores", "memory.retrieved_sources", "memory.retrieved_count",
                "memory.degraded", "memory.config_hash", "memory.embedding_version"):
        assert key in r, key
    assert list(r["memory.retrieved_ids"]) == res.ids and r["memory.retrieved_count"] == 1
    assert r["memory.retrieved_sources"][0] in {"vector+keyword", "vector+keyword+recent"}
    writes = [s for s in exporter.get_finished_spans() if s.name == "memory.write"]
    assert {s.attributes["memory.write_outcome"] for s in writes} == {"stored", "rejected"}
    stored = next(s for s in writes if s.attributes["memory.write_outcome"] == "stored").attributes
    assert stored["memory.id"] == w.memory_id and stored["memory.type"] == "semantic" and stored["memory.importance"] == 0.8
    a = spans["memory.answer"]
    assert list(a.attributes["memory.cited_ids"]) == cited == [w.memory_id]
    assert a.attributes["memory.retrieve_span_id"] == res.span_id
    assert f"{a.context.trace_id:032x}" == res.trace_id  # same trace as its retrieval
    assert spans["memory.forget"].attributes["memory.id"] == w.memory_id


def test_forget_and_erase_user(engine, t0):
    a = engine.add("I prefer aisle seats", user_id="u1", now=t0).memory_id
    engine.add("My cat is called Miso, I love her", user_id="u1", now=t0)
    engine.add("I prefer aisle seats", user_id="u2", now=t0)
    assert engine.forget(a, user_id="u1") and engine.memory(a, user_id="u1") is None
    assert engine.erase_user("u1") == 1
    assert engine.list_memories(user_id="u1") == []
    assert len(engine.list_memories(user_id="u2")) == 1


def test_context_block(engine, t0):
    m = engine.add("I prefer aisle seats", user_id="u1", now=t0).memory_id
    res = engine.retrieve("aisle seats", user_id="u1", now=t0)
    assert engine.context_block(res) == f"[mem-{m}] I prefer aisle seats"


@pytest.mark.slow  # measured 5-15 s on 2 shared cores; still runs in make test
def test_persistent_engine_reopens(embedder, tmp_path, t0):
    cfg = EngineConfig(workspace=str(tmp_path / "ws")).with_overrides({"tracing.warehouse": False})
    with MemoryEngine(cfg, embedder=embedder) as eng:
        m = eng.add("I prefer aisle seats", user_id="u1", now=t0).memory_id
    with MemoryEngine(cfg, embedder=embedder) as eng:
        assert eng.retrieve("aisle seats", user_id="u1", now=t0).ids == [m]


def test_entity_hop_answers_a_bridge_question(engine, t0):
    m1 = engine.add("My manager is Sarah Lee, confirmed after the reorg", user_id="u1", now=t0).memory_id
    m2 = engine.add("Sarah Lee works from the London office", user_id="u1", memory_type="semantic",
                    now=t0 + timedelta(days=2)).memory_id
    engine.add("I prefer a standing desk near the window", user_id="u1", now=t0 + timedelta(days=3))
    res = engine.retrieve("In which city is my manager based?", user_id="u1", now=t0 + timedelta(days=6), explain=True)
    assert res.ids[:2] == [m1, m2]  # the bridged memory ranks below the hit that named it
    assert "hop" in next(e for e in res.explanations if e.memory_id == m2).route_ranks
