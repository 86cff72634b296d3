"""Facts by intent (issue 16, failure class 4): requests routed to fact categories by
their nearest example requests, user statements tagged at write by their nearest
example facts, and the intent route through a real in-memory engine (bundled e5,
qdrant-edge). The engine cases failed before the mechanism: the fact was under the
floor (shares no word with the request)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.config import IntentSection
from memory_engine.errors import ConfigError
from memory_engine.retrieve.routes import DEFAULT_ROUTES, IntentRoute, RouteQuery
from memory_engine.write.categories import Categories, category_of, load_examples


def test_bundled_examples_are_bilingual_and_have_a_reject_class():
    ex = load_examples()
    assert "none" in ex.requests and "none" not in ex.keys
    for name in ("shipping", "payment", "food", "travel", "purchase"):
        texts = ex.requests[name] + ex.facts[name]
        assert any(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in texts), name
        assert any(t.isascii() for t in texts), name
        # small, general lists: one to three examples per shape a kind's facts take (categories.toml header)
        assert len(ex.requests[name]) <= 16 and len(ex.facts[name]) <= 16


@pytest.mark.parametrize("text", [
    "[shipping]\nrequests = 'not a list'\nfacts = ['x']\n",
    "[shipping]\nrequests = ['a']\nfacts = ['b']\nextra = ['c']\n",
    "[none]\nrequests = ['a']\nfacts = ['b']\n",
    "not toml [",
])
def test_a_bad_examples_file_is_a_config_error(tmp_path, text):
    p = tmp_path / "cats.toml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError):
        load_examples(p)


def test_requests_route_to_the_category_they_need(embedder):
    cats = Categories(embedder, IntentSection())
    want = {
        "帮我寄个快递给我妈": "shipping",
        "Go ahead and check out the cart for me": "payment",
        "中午帮我点个外卖": "food",
        "Book me a flight to Denver next Tuesday": "travel",
        "我之前下单的东西发货了没": "purchase",
    }
    for text, name in want.items():
        label = cats.of_query(embedder.embed_query(text))
        assert label is not None and label.name == name, text
        assert label.margin >= IntentSection().query_margin
    # a question that needs no category of fact goes nowhere (reject class / too close a call)
    assert cats.of_query(embedder.embed_query("When am I getting my teeth checked?")) is None
    assert Categories(embedder, IntentSection(enabled=False)).of_query(embedder.embed_query("帮我寄个快递")) is None


def test_statements_are_tagged_by_example_facts_and_fact_keys(embedder):
    cats = Categories(embedder, IntentSection())

    def tag(text: str, key: str | None = None) -> str | None:
        label = cats.of_fact(embedder.embed_documents([text])[0], key)
        return label.name if label else None

    assert tag("我寄东西一般都用京东物流，上门取件方便") == "shipping"
    assert tag("I'm vegetarian, no meat and no fish") == "food"
    assert tag("昨天在京东买了一台戴森吹风机，花了两千多") == "purchase"
    assert tag("坐高铁我喜欢靠窗的座位") == "travel"
    assert tag("周末和朋友去爬了香山，人特别多") is None
    assert tag("I live in Hangzhou") is None
    # a structured fact's key names its category whatever the value says
    assert tag("SF", "Shipping.Courier") == "shipping"


def test_intent_route_returns_the_routed_category_only(make_engine, t0):
    eng = make_engine()
    eng.add("我寄东西一般都用京东物流，上门取件方便", user_id="u", session_id="s1", now=t0)
    eng.add("周末和朋友去爬了香山，人特别多", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    route = IntentRoute(eng.store, eng.config.retrieval, IntentSection())
    assert "intent" in DEFAULT_ROUTES
    from memory_engine.scope import Scope
    scope = Scope("default", "u", eng.embedder.version)
    q = RouteQuery("q", "q", frozenset(), eng.embedder.embed_query("q"), scope, scope.filter())
    assert route.search(q) == []  # not routed: nothing
    rows = route.search(RouteQuery(q.query, q.text, q.terms, q.vector, scope, scope.filter(), None, "shipping"))
    assert [category_of(r.payload) for r in rows] == ["shipping"]
    assert rows[0].payload["content"].startswith("我寄东西")
    assert IntentRoute(eng.store, eng.config.retrieval, IntentSection(limit=0)).search(
        RouteQuery(q.query, q.text, q.terms, q.vector, scope, scope.filter(), None, "shipping")) == []


@pytest.mark.parametrize(("facts", "distractors", "ask", "want"), [
    (["我寄东西一般都用京东物流，上门取件方便"], ["家里的猫最近不太爱吃猫粮", "这周项目评审改到周四下午了"],
     "明天要把合同原件给客户邮过去，帮我安排一下", "京东物流"),
    (["I'm vegetarian, no meat and no fish"], ["I like the window seat when I take the train"],
     "Order us some takeout for lunch", "vegetarian"),
    (["昨天在京东买了一台戴森吹风机，花了两千多"], ["下个月打算去云南玩一个星期", "女儿这学期开始学游泳了"],
     "我之前下单的东西发货了没", "吹风机"),
    (["On planes I always want a window seat near the front"], ["I'm allergic to peanuts"],
     "Book me a flight to Denver next Tuesday", "window seat"),
    # a size for clothes and shoes, a condition that rules what to cook (red-team round 5 I06 / I07: under the floor)
    (["鞋我一般穿44码，脚背高"], ["家里的猫最近不太爱吃猫粮", "这周项目评审改到周四下午了"],
     "帮我买双登山靴", "44码"),
    (["I'm diabetic, have been since my twenties"], ["I like the window seat when I take the train"],
     "suggest a dessert I could bring to the potluck", "diabetic"),
])
def test_a_request_finds_the_fact_it_needs_from_another_session(make_engine, t0, facts, distractors, ask, want):
    eng = make_engine()
    for i, text in enumerate(facts + distractors):
        eng.add(text, user_id="u", session_id="s1", now=t0 + timedelta(minutes=i))
    res = eng.retrieve(ask, user_id="u", session_id="s2", now=t0 + timedelta(days=3))
    assert res.hits and want in res.hits[0].content
    # found as the fact the request needs: by its key, its meaning or its category (the channels a hit names)
    assert {"fact", "meaning", "intent"} & set(res.hits[0].sources)


def test_a_request_whose_fact_was_never_stored_brings_no_unrelated_fact(make_engine, t0):
    eng = make_engine()
    eng.add("I prefer an aisle seat when I fly", user_id="u", session_id="s1", now=t0,
            fact={"key": "travel.seat", "value": "aisle"})
    eng.add("I've been vegan for two years", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1),
            fact={"key": "diet.restriction", "value": "vegan"})
    res = eng.retrieve("Ship this box of books to my brother", user_id="u", session_id="s2",
                       now=t0 + timedelta(days=4))
    assert [h.content for h in res.hits] == []


def test_a_contrast_names_the_value_it_corrects():
    from memory_engine.write.intents import correction_strength, replaced_phrase

    assert replaced_phrase("Actually my city is Suzhou, not Hangzhou") == "Hangzhou"
    assert replaced_phrase("Actually my dentist appointment is Thursday at 3pm, not Tuesday") == "Tuesday"
    assert correction_strength("Actually my city is Suzhou, not Hangzhou", True) == "explicit"
    # ordinary contrasts name no old value
    for text in ("The food was great, not bad at all", "I like it, not only for the price",
                 "We went home, not to the party"):
        assert replaced_phrase(text) is None and correction_strength(text, False) is None


def test_a_contrast_correction_retires_only_the_memory_naming_the_old_value(make_engine, t0):
    eng = make_engine()
    old = eng.add("My dentist appointment is on Tuesday at 3pm", user_id="u", session_id="s1", now=t0).memory_id
    gym = eng.add("I go to spin class on Tuesday evenings", user_id="u", session_id="s1",
                  now=t0 + timedelta(minutes=1)).memory_id
    new = eng.add("Actually my dentist appointment is Thursday at 3pm, not Tuesday", user_id="u", session_id="s2",
                  now=t0 + timedelta(days=1))
    assert new.superseded_ids == (old,)
    assert eng.memory(gym, user_id="u").status.value == "current"
    res = eng.retrieve("When am I getting my teeth checked?", user_id="u", session_id="s3", now=t0 + timedelta(days=2))
    assert res.ids[:1] == [new.memory_id] and old not in res.ids


def test_category_evidence_passes_the_floor_but_is_not_lent_to_neighbours():
    from memory_engine.retrieve.context import smooth
    from memory_engine.retrieve.fusion import Candidate

    fact = Candidate("fact", similarity=0.05, category_match=0.45, fused=0.3)
    neighbour = Candidate("next", similarity=0.05, fused=0.1)
    # category evidence and the memory's own similarity are combined as independent evidence (noisy-OR)
    assert fact.relevance == pytest.approx(1 - (1 - 0.05) * (1 - 0.45))
    out = {c.memory_id: c for c in smooth([fact, neighbour], [("fact", "next", 1)], weight=0.5, relevance_share=0.6)}
    # the turn next to a courier fact is not what a parcel request needs: it borrows nothing from the category
    assert out["next"].relevance == pytest.approx(0.05)


@pytest.mark.parametrize("word", ["coffee", "奶茶", "hobbies"])
def test_a_one_word_query_is_a_topic_not_a_request(make_engine, t0, word):
    # fresh-user trial: "coffee" was routed to 'food' and answered with the peanut allergy at the
    # category's relevance; a one-word query names a topic, so only memories about it may answer
    eng = make_engine()
    eng.add("I'm allergic to peanuts, even a trace makes me sick", user_id="u", session_id="s1", now=t0)
    eng.add("我不吃香菜，一点都不行", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    res = eng.retrieve(word, user_id="u", session_id="s2", now=t0 + timedelta(days=2))
    assert not any("intent" in h.sources for h in res.hits)
    assert not any("peanut" in h.content or "香菜" in h.content for h in res.hits)
    # a request of a few words still reaches the fact it needs
    res = eng.retrieve("Order us some takeout for lunch", user_id="u", session_id="s2", now=t0 + timedelta(days=2))
    assert res.hits and "peanut" in res.hits[0].content


# --- query-time membership (session 8): the routed category asks each statement "are you of my kind?" ---

_UNTAGGED = [
    ("I'm vegetarian, no meat and no fish", ["I like the window seat when I take the train", "my parking spot is B12"],
     "Order us some takeout for lunch"),
    ("我寄东西一般都用京东物流，上门取件方便", ["家里的猫最近不太爱吃猫粮", "这周项目评审改到周四下午了"],
     "明天要把合同原件给客户邮过去，帮我安排一下"),
    ("牛奶酸奶我都不能碰，乳糖不耐受", ["车位在地下一层C区", "女儿在学画画"], "午饭不想出去吃了，帮我弄点吃的"),
    ("On planes I always want a window seat near the front", ["I'm allergic to peanuts", "my sister lives in Ohio"],
     "Book me a flight to Denver next Tuesday"),
]


def _store_untagged(eng, texts, t0):
    """Store ``texts`` and drop their write-time category tags, as for memories written before tagging existed
    (or tagged wrongly: the tag is an argmax over nine close classes)."""
    ids = [eng.add(t, user_id="u", session_id="s1", now=t0 + timedelta(minutes=i)).memory_id
           for i, t in enumerate(texts)]
    for mid in ids:
        eng.store.set_payload([mid], {"metadata": {}})
    return ids


@pytest.mark.parametrize(("fact", "distractors", "ask"), _UNTAGGED)
def test_an_untagged_statement_is_found_by_query_time_membership(make_engine, t0, fact, distractors, ask):
    # before: the intent route read write-time tags only, so these requests returned nothing at all
    eng = make_engine()
    fid, *others = _store_untagged(eng, [fact, *distractors], t0)
    res = eng.retrieve(ask, user_id="u", session_id="s2", now=t0 + timedelta(days=3))
    assert fid in res.ids
    assert not set(others) & set(res.ids)  # a need does not drag in the statements of no kind or another kind


def test_query_time_membership_is_configuration(make_engine, t0):
    fact, distractors, ask = _UNTAGGED[0]
    for overrides, found in (({}, True), ({"intent.member_scan": 0}, False),
                             ({"intent.member_min": 2.0, "intent.member_full": 2.0}, False)):
        eng = make_engine(overrides=overrides)
        fid, *_ = _store_untagged(eng, [fact, *distractors], t0)
        res = eng.retrieve(ask, user_id="u", session_id="s2", now=t0 + timedelta(days=3))
        assert (fid in res.ids) is found, overrides


def test_a_request_that_needs_nothing_finds_no_untagged_statement(make_engine, t0):
    eng = make_engine()
    _store_untagged(eng, ["I'm vegetarian, no meat and no fish", "my home address is 9 Quay Street, Cork",
                          "I pay for everything with my Mastercard"], t0)
    for ask in ("Write me a haiku about the sea at night", "把这句话翻译成英文：今天天气很好"):
        assert eng.retrieve(ask, user_id="u", session_id="s2", now=t0 + timedelta(days=3)).hits == [], ask


def test_membership_leads_for_the_statements_own_kind_only(embedder):
    cats = Categories(embedder, IntentSection())
    vecs = embedder.embed_documents(["I'm vegetarian, no meat and no fish", "周末和朋友去爬了香山，人特别多"])
    food = cats.membership(vecs, "food")
    assert food[0] > IntentSection().member_full and food[1] < IntentSection().member_min
    assert cats.membership(vecs, "no-such-category").tolist() == [0.0, 0.0]
    assert cats.prototype("no-such-category") is None


def test_membership_evidence_ramps_from_min_to_full():
    from memory_engine.retrieve.candidates import member_evidence

    icfg = IntentSection(member_min=0.0, member_full=0.2)
    assert member_evidence(None, icfg) == 0.0
    assert member_evidence(-0.1, icfg) == 0.0
    assert member_evidence(0.1, icfg) == pytest.approx(0.5)
    assert member_evidence(0.5, icfg) == 1.0
    assert member_evidence(0.1, IntentSection(member_min=0.1, member_full=0.1)) == 1.0  # a step when full <= min
