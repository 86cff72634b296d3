"""Suggestion threads (write/roles.py, retrieve/addressee.py): the user's own decision after an
assistant suggestion answers what their request answers and ranks above the request and the
suggestion; a question about what the assistant suggested is answered by the suggestion."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.retrieve.addressee import thread_demotions
from memory_engine.write.roles import ANSWERS_KEY, SETTLES_KEY, is_decision


@pytest.mark.unit
@pytest.mark.parametrize("text", ["I think I'll book Luigi's instead", "went with the cheaper one in the end",
                                  "算了，我还是订了楼下那家日料", "我决定去青岛", "nah, I'm going to cook at home tonight"])
def test_decisions(text):
    assert is_decision(text)


@pytest.mark.unit
@pytest.mark.parametrize("text", ["which one is closer to the station?", "我还是不太懂，这两个有什么区别？",
                                  "my knee hurts after long runs", "好的", "我还是觉得有点贵",
                                  "最后一个问题也想问一下"])
def test_not_decisions(text):
    assert not is_decision(text)


@pytest.mark.unit
def test_thread_demotions_by_addressee():
    pl = {"r": {"role": "user"}, "o": {"role": "assistant", "metadata": {ANSWERS_KEY: "r"}},
          "d": {"role": "user", "metadata": {SETTLES_KEY: ["o", "r"]}}}
    assert thread_demotions(["r", "o", "d"], pl, to_assistant=False) == {"d": ("r", "o")}
    assert thread_demotions(["r", "o", "d"], pl, to_assistant=True) == {"o": ("r", "d")}
    confirmed = {**pl, "o": {"role": "assistant", "metadata": {ANSWERS_KEY: "r", "_confirmed_by_user": {"text": "ok"}}}}
    # the user's own now, and itself the decision of the request it answers (accepted-proposals suite)
    assert thread_demotions(["r", "o", "d"], confirmed, to_assistant=False) == {"o": ("r",), "d": ("r",)}


def _thread(engine, t0, request, offer, decision, session="s1"):
    ids = []
    for i, (role, text) in enumerate((("user", request), ("assistant", offer), ("user", decision))):
        ids.append(engine.add(text, user_id="u", role=role, session_id=session, now=t0 + timedelta(minutes=i)).memory_id)
    return ids


@pytest.mark.integration
@pytest.mark.parametrize(("request_", "offer", "decision", "about_me", "about_you"), [
    ("Can you recommend a good restaurant for dinner tonight?",
     "I'd recommend Trattoria Roma on Main Street, they have amazing handmade pasta.",
     "I think I'll book Luigi's instead", "where am I eating tonight?", "what restaurant did you recommend to me?"),
    ("今晚想吃点好的，有什么推荐吗", "推荐你去万象城的鼎泰丰，小笼包很出名", "算了，我还是订了楼下那家日料",
     "我晚上在哪吃", "你给我推荐的是哪家餐厅"),
])
def test_the_decision_answers_the_request_and_the_suggestion_answers_what_was_suggested(
        engine, t0, request_, offer, decision, about_me, about_you):
    req, off, dec = _thread(engine, t0, request_, offer, decision)
    assert engine.memory(off, user_id="u").metadata[ANSWERS_KEY] == req
    assert engine.memory(dec, user_id="u").metadata[SETTLES_KEY] == [off, req]
    later = t0 + timedelta(hours=1)
    mine = engine.retrieve(about_me, user_id="u", session_id="s9", top_k=1, now=later)
    assert [h.memory_id for h in mine.hits] == [dec]  # under the floor / below the request on the old code
    yours = engine.retrieve(about_you, user_id="u", session_id="s9", top_k=1, now=later)
    assert [h.memory_id for h in yours.hits] == [off]  # the request repeating the question's words ranked first


@pytest.mark.integration
def test_off_switch_and_no_link_without_an_offer(make_engine, t0):
    eng = make_engine(overrides={"write.settle_threads": False})
    _, off, dec = _thread(eng, t0, "any ideas for dinner tonight?", "How about Sakura Omakase on Fifth?",
                          "I think I'll grab tacos instead")
    assert SETTLES_KEY not in eng.memory(dec, user_id="u").metadata
    assert ANSWERS_KEY not in eng.memory(off, user_id="u").metadata
    on = make_engine()
    d = on.add("I think I'll grab tacos instead", user_id="u", session_id="s2", now=t0).memory_id
    assert SETTLES_KEY not in on.memory(d, user_id="u").metadata  # nothing was offered in that session
