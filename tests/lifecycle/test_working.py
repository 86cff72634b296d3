"""Working memory (turns, rolling summary, TTL) and build_context budgets, with the real tokenizer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_engine.config import WorkingSection
from memory_engine.errors import ValidationError
from memory_engine.lifecycle.llm import OpenAICompatibleClient, client_from_env
from memory_engine.text import count_tokens
from memory_engine.working import (
    ExtractiveSummariser,
    LLMSummariser,
    WorkingMemory,
    build_context,
    sessions_for,
    truncate_tokens,
)

SMALL = WorkingSection(conversation_tokens=100, recent_turns=4)
CHAT = [
    "hello there",
    "My order number is A12345 and it cost 399 yuan",
    "ok thanks",
    "I decided to ship it to Beijing Chaoyang district",
    "what a lovely day it is today in the city",
    "Please use SF Express as the courier",
    "the weather has been rainy all week long here",
    "I confirm the delivery window is 9 to 11 am",
    "tell me a joke about cats and dogs please",
    "my phone tail number is 8890",
]


@pytest.mark.unit
def test_truncate_tokens_is_the_longest_fitting_prefix():
    text = "订单号 A12345 已经发货，预计周三到达北京朝阳区。" * 5
    for n in (0, 1, 7, 30):
        cut = truncate_tokens(text, n)
        assert count_tokens(cut) <= n and text.startswith(cut)
        if n:
            assert count_tokens(text[: len(cut) + 1]) > n
    assert truncate_tokens("short", 10) == "short"


@pytest.mark.unit
def test_no_summary_below_the_trigger_then_rolling_summary_keeps_facts_and_cites_turns(day):
    wm = WorkingMemory(SMALL, summary_tokens=40)
    wm.add_turn(CHAT[0], user_id="u", session_id="s", now=day(0))
    v = wm.view("u", "s", now=day(0))
    assert v.summary is None and [t.turn_id for t in v.turns] == ["t1"]
    t = day(0)
    for i, text in enumerate(CHAT[1:], start=2):
        t += timedelta(minutes=1)
        wm.add_turn(text, user_id="u", session_id="s", role="user" if i % 2 else "assistant", now=t)
    v = wm.view("u", "s", now=t)
    assert v.summary is not None
    # the summary covers a prefix of turns, the raw turns are exactly the rest: never both for one span
    n = len(v.summary_turn_ids)
    assert v.summary_turn_ids == tuple(f"t{i}" for i in range(1, n + 1))
    assert [x.turn_id for x in v.turns] == [f"t{i}" for i in range(n + 1, len(CHAT) + 1)]
    assert len(v.turns) >= 4
    assert v.summary.startswith(f"Summary of turns t1-t{n}:")
    assert "A12345" in v.summary and "399" in v.summary and "(t2 " in v.summary
    assert "ok thanks" not in v.summary and "hello" not in v.summary
    assert count_tokens(v.summary) <= 40
    # one level only: a later fold rebuilds from raw turns, never summarises the summary
    for i in range(30):
        t += timedelta(minutes=1)
        wm.add_turn(f"note {i}: ticket T{1000 + i} is open", user_id="u", session_id="s", now=t)
    v2 = wm.view("u", "s", now=t)
    assert v2.summary.count("Summary of turns") == 1 and len(v2.summary_turn_ids) > n
    assert wm.block_tokens(wm.session("u", "s", now=t)) <= SMALL.conversation_tokens


@pytest.mark.unit
def test_session_ttl_and_validation(day):
    wm = WorkingMemory(WorkingSection(ttl_minutes=120))
    wm.add_turn("I prefer aisle seats", user_id="u", session_id="s", now=day(0))
    wm.add_turn("other session", user_id="u", session_id="s2", now=day(0) + timedelta(minutes=100))
    assert wm.session("u", "s", now=day(0) + timedelta(minutes=120)) is not None
    assert wm.expire(now=day(0) + timedelta(minutes=121)) == 1 and len(wm) == 1
    assert wm.view("u", "s", now=day(0) + timedelta(minutes=121)).turns == ()
    turn = wm.add_turn("new start", user_id="u", session_id="s", now=day(1))
    assert turn.turn_id == "t1"
    assert wm.session("u", "s2", tenant_id="other", now=day(0)) is None  # tenants are separate
    with pytest.raises(ValidationError):
        wm.add_turn("x", user_id="", session_id="s", now=day(0))
    with pytest.raises(ValidationError):
        wm.add_turn("x", user_id="u", session_id="s", role="robot", now=day(0))
    with pytest.raises(ValidationError):
        WorkingMemory(WorkingSection(conversation_tokens=100), summary_tokens=100)


@pytest.mark.integration
def test_build_context_blocks_ids_and_budgets(make_engine, day):
    eng = make_engine(**{"working.conversation_tokens": 100, "working.system_tokens": 30, "working.memory_tokens": 60})
    a = eng.add("My default courier is SF Express", user_id="u", now=day(0))
    eng.add("I am allergic to peanuts", user_id="u", now=day(0))
    eng.add("My default courier is YTO", user_id="other", now=day(0))
    wm = sessions_for(eng)
    assert sessions_for(eng) is wm
    t = day(1)
    for text in CHAT:
        t += timedelta(minutes=1)
        wm.add_turn(text, user_id="u", session_id="s", now=t)
    system = "You are a helpful shopping assistant. " * 10
    ctx = build_context(eng, "which courier do I use by default?", user_id="u", session_id="s", system=system, now=t)
    names = [b.name for b in ctx.blocks]
    assert names == ["system", "summary", "recent_turns", "memories"]
    sys_b, summ, recent, mem = ctx.blocks
    assert sys_b.truncated and sys_b.tokens <= 30 and system.startswith(sys_b.text)
    assert summ.text and summ.ids and summ.tokens + recent.tokens <= 100
    assert recent.ids[-1] == f"t{len(CHAT)}" and not set(summ.ids) & set(recent.ids)
    assert mem.ids[0] == a.memory_id and mem.text.startswith(f"[mem-{a.memory_id}] My default courier is SF Express")
    assert "YTO" not in ctx.render()
    assert all(b.tokens == count_tokens(b.text) <= b.budget for b in ctx.blocks)
    assert ctx.total_tokens == sum(b.tokens for b in ctx.blocks) <= ctx.context_tokens
    assert ctx.retrieve_span_id and not ctx.degraded
    # no session: only system + memories
    ctx2 = build_context(eng, "courier", user_id="u", now=t)
    assert ctx2.block("recent_turns").text == "" and ctx2.block("summary").text == ""


@pytest.mark.integration
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lengths=st.lists(st.integers(min_value=1, max_value=140), min_size=1, max_size=14),
       budget=st.integers(min_value=40, max_value=260), keep=st.integers(min_value=1, max_value=5))
@pytest.mark.slow  # measured 7-30 s on 2 shared cores; still runs in make test
def test_build_context_never_exceeds_a_budget_and_keeps_the_newest_turns(make_engine, day, lengths, budget, keep):
    eng = _shared_engine(make_engine)
    cfg = WorkingSection(conversation_tokens=budget, recent_turns=keep, memory_tokens=40, system_tokens=20)
    wm = WorkingMemory(cfg, summary_tokens=max(1, budget // 3))
    t = day(0)
    for i, n in enumerate(lengths):
        t += timedelta(seconds=30)
        wm.add_turn(" ".join(f"w{i}x{j} order A{i}{j:03d}" for j in range(n)), user_id="u", session_id="s", now=t)
    ctx = build_context(eng, "order", user_id="u", session_id="s", now=t, working=wm)
    summ, recent, mem = ctx.block("summary"), ctx.block("recent_turns"), ctx.block("memories")
    assert summ.tokens + recent.tokens <= budget
    assert mem.tokens <= 40 and ctx.block("system").tokens <= 20
    for b in ctx.blocks:
        assert b.tokens == count_tokens(b.text) <= b.budget
    assert ctx.total_tokens <= ctx.context_tokens
    # the newest turn is always there, and kept turns are the newest ones in order
    n_turns = len(lengths)
    assert recent.ids and recent.ids[-1] == f"t{n_turns}"
    nums = [int(x[1:]) for x in recent.ids]
    assert nums == list(range(nums[0], n_turns + 1))
    assert not set(summ.ids) & set(recent.ids)


_ENG = {}


def _shared_engine(make_engine):
    if "e" not in _ENG or _ENG["e"]._closed:
        _ENG["e"] = make_engine()
        _ENG["e"].add("My order A1001 was shipped by SF Express", user_id="u")
    return _ENG["e"]


@pytest.mark.integration
def test_llm_summariser_through_an_openai_compatible_endpoint(chat_server, day):
    chat_server.reply = lambda req: "- order A12345 costs 399 yuan (t2)"
    client = client_from_env({"MEMWB_LLM_BASE_URL": chat_server.base_url, "MEMWB_LLM_MODEL": "tiny"})
    assert isinstance(client, OpenAICompatibleClient)
    wm = WorkingMemory(SMALL, summariser=LLMSummariser(client), summary_tokens=40)
    t = day(0)
    for text in CHAT:
        t += timedelta(minutes=1)
        wm.add_turn(text, user_id="u", session_id="s", now=t)
    v = wm.view("u", "s", now=t)
    assert v.summary.startswith("Summary of turns t1-") and "A12345 costs 399 yuan (t2)" in v.summary
    req = chat_server.requests[-1]
    assert req["model"] == "tiny" and "[t2] user: My order number is A12345" in req["messages"][1]["content"]
    # endpoint down -> extractive fallback, never an error
    chat_server.close()
    client.max_retries = 0
    out = LLMSummariser(OpenAICompatibleClient(chat_server.base_url, "tiny", timeout_s=1, max_retries=0)).summarise(
        wm.session("u", "s", now=t).turns[:3], 60)
    assert "A12345" in out and out.startswith("Summary of turns t1-t3:")
    assert client_from_env({}) is None
    assert ExtractiveSummariser().summarise([], 10) == ""
