"""What the assistant said answers only a question that refers to the assistant or its
suggestion, never a first-person question about the user (issue 16, failure class 7); a
suggestion the user confirmed is the user's. Addressee by structure: phrasings below appear in
no suite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import EngineConfig, MemoryEngine
from memory_engine.retrieve.addressee import about_user_only, may_answer, refers_to_assistant

T0 = datetime(2026, 2, 3, 9, tzinfo=UTC)


@pytest.mark.unit
@pytest.mark.parametrize("query", [
    "what was the book you told me about last week?", "did you say the museum closes at five?",
    "remind me of your recommendation for a dentist", "the assistant mentioned a cheaper flight, which one was it?",
    "你昨天给我推荐的那本书叫什么", "您之前提到的那个理财产品是哪个", "上次给我推荐的电影是哪部", "助手说的那家店在哪",
])
def test_questions_about_what_the_assistant_said(query):
    assert refers_to_assistant(query) and not about_user_only(query)


@pytest.mark.unit
@pytest.mark.parametrize("query", [
    "which gym did I sign up for?", "can you tell me what my sister likes?", "do I own a bike?",
    "我最后选了哪家幼儿园", "你还记得我对什么过敏吗", "你帮我看看我下周有什么安排", "我们家用的是哪个牌子的洗衣液",
])
def test_first_person_questions_about_the_user(query):
    assert about_user_only(query)


@pytest.mark.unit
def test_only_an_unconfirmed_assistant_memory_is_refused():
    asst = {"role": "assistant", "metadata": {}}
    assert not may_answer(asst, True) and may_answer(asst, False)
    assert may_answer({"role": "assistant", "metadata": {"_confirmed_by_user": {"text": "ok", "at": 1.0}}}, True)
    assert may_answer({"role": "user"}, True) and may_answer({"role": "tool"}, True)
    assert not about_user_only("Kyoto hotel right above the station")  # no first person: left to the weights


@pytest.fixture(scope="module")
def engines():
    on = MemoryEngine.in_memory(EngineConfig().with_overrides({"tracing.enabled": False,
                                                               "retrieval.touch_on_hit": False}))
    off = MemoryEngine(on.config.with_overrides({"retrieval.assistant_needs_addressee": False}), embedder=on.embedder,
                       store=on.store, ephemeral=True)
    yield on, off
    on.close()


@pytest.fixture(scope="module")
def eng(engines):
    return engines[0]


@pytest.mark.integration
@pytest.mark.parametrize("assistant,user,mine,theirs", [
    ("You'd probably enjoy climbing too, the Boulder Lab on Elm Street has a beginner night on Tuesdays.",
     "I go swimming at the community pool on Tuesdays and Thursdays", "what do I do on Tuesdays?",
     "what was that climbing place you recommended?"),
    ("我建议您换成戴森的吸尘器，吸力更强，噪音也小", "最后我买的是追觅的吸尘器，便宜不少", "我家吸尘器是什么牌子的",
     "你之前建议我买哪个牌子的吸尘器"),
])
def test_assistant_turn_answers_only_the_question_about_it(engines, assistant, user, mine, theirs):
    eng, off = engines
    owner = f"addr-{abs(hash(mine))}"
    a = eng.add(assistant, user_id=owner, role="assistant", session_id="s1", now=T0).memory_id
    u = eng.add(user, user_id=owner, session_id="s1", now=T0 + timedelta(minutes=1)).memory_id
    at = T0 + timedelta(days=2)
    assert a in [h.memory_id for h in off.retrieve(mine, user_id=owner, session_id="s2", now=at).hits]  # before
    hits = [h.memory_id for h in eng.retrieve(mine, user_id=owner, session_id="s2", now=at).hits]
    assert u in hits and a not in hits
    assert a in [h.memory_id for h in eng.retrieve(theirs, user_id=owner, session_id="s2", now=at).hits]
    assert eng.memory(a, user_id=owner).status.value == "current"  # nothing is archived: only left out


@pytest.mark.integration
def test_a_confirmed_suggestion_answers_as_the_users_choice(eng):
    owner = "addr-confirm"
    eng.add("下周想带爸妈去泡温泉，帮我找个地方", user_id=owner, session_id="s1", now=T0)
    first = eng.add("可以去从化碧水湾，离广州一个小时车程，价格四百左右", user_id=owner, role="assistant",
                    session_id="s1", now=T0 + timedelta(minutes=1)).memory_id
    eng.add("有没有近一点的？", user_id=owner, session_id="s1", now=T0 + timedelta(minutes=2))
    second = eng.add("番禺的长隆温泉近很多，半小时就到，价格三百左右", user_id=owner, role="assistant",
                     session_id="s1", now=T0 + timedelta(minutes=3)).memory_id
    ok = eng.add("行，就订这家", user_id=owner, session_id="s1", now=T0 + timedelta(minutes=4))
    assert ok.outcome == "merged" and ok.memory_id == second  # nothing new of its own: merged into what it takes up
    rec = eng.memory(second, user_id=owner)
    assert rec.metadata["_confirmed_by_user"]["text"] == "行，就订这家" and rec.source.value == "user_stated"
    assert eng.memory(first, user_id=owner).source.value == "model_inferred"
    hits = [h.memory_id for h in eng.retrieve("我带爸妈去哪泡温泉", user_id=owner, session_id="s2",
                                             now=T0 + timedelta(days=1)).hits]
    assert second in hits and first not in hits


@pytest.mark.integration
def test_a_question_about_the_suggestion_puts_the_suggestion_first(engines):
    eng, off = engines
    owner = "addr-first"
    eng.add("在索尼和 Bose 的降噪耳机之间犹豫，主要通勤用", user_id=owner, session_id="s1", now=T0)
    a = eng.add("我建议您选索尼的降噪耳机，通勤地铁上效果最好", user_id=owner, role="assistant", session_id="s1",
                now=T0 + timedelta(minutes=1)).memory_id
    eng.add("最后还是买了 Bose 的降噪耳机，戴着更舒服", user_id=owner, session_id="s2", now=T0 + timedelta(days=2))
    q, at = "你之前建议我买哪个降噪耳机", T0 + timedelta(days=3)
    before = [h.memory_id for h in off.retrieve(q, user_id=owner, session_id="s3", now=at).hits]
    assert before[0] != a  # the user precedence capped the answer below the user's own words
    assert eng.retrieve(q, user_id=owner, session_id="s3", now=at).hits[0].memory_id == a
