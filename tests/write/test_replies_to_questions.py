"""A short user reply to the assistant's question about the user is that question's answer (write/roles.py,
replies): a bare yes / no is kept instead of dropped as chit-chat and is found with its question; a reply to
an offer, a proposal, a suggestion or a closing of the conversation stays what it was."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.citations import context_block
from memory_engine.write.roles import REPLY_TO_KEY, asked_about_user, is_polar_reply


@pytest.mark.unit
@pytest.mark.parametrize("turn,question", [
    ("Got it. Do you wear glasses? Some of these frames are only for contact lenses.", "Do you wear glasses?"),
    ("Before I pick a gym plan, is your shoulder injury still bothering you?",
     "is your shoulder injury still bothering you?"),
    ("Where did you study?", "Where did you study?"),
    ("好的。你平时抽烟吗？", "你平时抽烟吗？"),
    ("为了推荐合适的房型，您是一个人住吗", "您是一个人住吗"),
    ("May I ask how old you are?", "May I ask how old you are?"),     # a polite 'I' is no offer
    ("I can book either. Which day works better for you?", "Which day works better for you?"),
])
def test_questions_about_the_user(turn, question):
    assert asked_about_user(turn) == question


@pytest.mark.unit
@pytest.mark.parametrize("turn", [
    "Would you like me to reserve the 8pm slot?",           # an offer
    "Shall I add the museum pass to your cart?",            # an offer
    "How about a cooking class on Sunday?",                 # a proposal
    "You might enjoy the night market near the station.",   # a suggestion, no question
    "Is there anything else you need today?",               # a closing
    "要不要换成靠窗的座位？",                                   # a proposal
    "需要我把行程发到你邮箱吗？",                               # an offer
    "还有其他问题吗？",                                         # a closing
    "Can I get you anything to drink?",                     # an offer
    "我可以帮你改签吗？",                                       # an offer
    "Does that make sense?",                                # not about the user
    "Your order ships tomorrow.",                           # no question
])
def test_not_questions_about_the_user(turn):
    assert asked_about_user(turn) is None


@pytest.mark.unit
def test_polar_replies():
    assert all(is_polar_reply(t) for t in ("yes", "Nope.", "yeah, since 2019", "是的", "没有", "不是", "对"))
    assert not any(is_polar_reply(t) for t in ("ok thanks", "Hangzhou", "北京", "thanks!", "哈哈"))


@pytest.mark.integration
def test_bare_yes_after_a_question_is_kept_and_found(engine, t0):
    """Fails on 2c7bdc7: 'yes' was rejected as chit-chat, the user's answer lost."""
    q = engine.add("Noted. Do you wear glasses? Some frames are only for contacts.", user_id="u", role="assistant",
                   session_id="s1", now=t0)
    r = engine.add("yes", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    assert r.outcome == "stored", r
    rec = engine.memory(r.memory_id, user_id="u")
    assert rec.content == "yes" and rec.role == "user"  # the user's words as said; the question is context
    assert rec.metadata[REPLY_TO_KEY] == {"id": q.memory_id, "text": "Do you wear glasses?"}
    res = engine.retrieve("do I wear glasses?", user_id="u", session_id="s2", now=t0 + timedelta(days=3))
    assert r.memory_id in [h.memory_id for h in res.hits]
    assert '(asked: "Do you wear glasses?") yes' in context_block(res.hits)


@pytest.mark.integration
def test_zh_bare_no_after_a_question_is_kept_and_found(engine, t0):
    """Fails on 2c7bdc7 ('没有' is an acknowledgement now and was stored without its question before)."""
    engine.add("我帮你查一下停车场。你有车吗？", user_id="u", role="assistant", session_id="s1", now=t0)
    r = engine.add("没有", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    assert r.outcome == "stored", r
    hits = engine.retrieve("我有车吗", user_id="u", session_id="s2", now=t0 + timedelta(days=2)).hits
    assert r.memory_id in [h.memory_id for h in hits]


@pytest.mark.integration
def test_short_answer_is_found_by_its_question(engine, t0):
    """Fails on 2c7bdc7: 'Porto, mostly' was stored, but 'where did I grow up?' fell under the floor."""
    engine.add("Where did you grow up? I can add some places from your home region.", user_id="u",
               role="assistant", session_id="s1", now=t0)
    r = engine.add("Porto, mostly", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    engine.add("I want the trip to be in October", user_id="u", session_id="s1", now=t0 + timedelta(minutes=2))
    hits = engine.retrieve("where did I grow up?", user_id="u", session_id="s2", now=t0 + timedelta(days=5)).hits
    assert hits and hits[0].memory_id == r.memory_id


@pytest.mark.integration
def test_two_yes_answers_are_two_memories(engine, t0):
    """Data safety: 'yes' to one question never merges into 'yes' to another (each is its own answer)."""
    engine.add("Do you have a cat?", user_id="u", role="assistant", session_id="s1", now=t0)
    a = engine.add("yes", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    engine.add("And are you allergic to penicillin?", user_id="u", role="assistant", session_id="s1",
               now=t0 + timedelta(minutes=2))
    b = engine.add("yes", user_id="u", session_id="s1", now=t0 + timedelta(minutes=3))
    assert a.outcome == b.outcome == "stored" and a.memory_id != b.memory_id, (a, b)
    assert engine.memory(b.memory_id, user_id="u").metadata[REPLY_TO_KEY]["text"] == "And are you allergic to penicillin?"


@pytest.mark.integration
@pytest.mark.parametrize("turn,reply", [
    ("You might enjoy the night market near the station.", "sure"),
    ("要不要换成靠窗的座位？", "好呀"),
    ("还有其他需要帮忙的吗？", "没有了，谢谢"),
    ("Is there anything else I can help you with?", "no thanks"),
])
def test_replies_to_suggestions_offers_and_closings_stay_noise(engine, t0, turn, reply):
    """'没有了，谢谢' after a closing question was stored on 2c7bdc7; the others must not change."""
    engine.add(turn, user_id="u", role="assistant", session_id="s1", now=t0)
    r = engine.add(reply, user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    assert r.outcome == "rejected", r


@pytest.mark.integration
def test_reply_window_is_read(make_engine, t0):
    """A 'yes' past write.reply_window_s (or with it 0) answers nothing: dropped as before."""
    for overrides, gap in (({}, timedelta(hours=2)), ({"write.reply_window_s": 0.0}, timedelta(minutes=1))):
        eng = make_engine(overrides=overrides)
        eng.add("Do you have a cat?", user_id="u", role="assistant", session_id="s1", now=t0)
        r = eng.add("yes", user_id="u", session_id="s1", now=t0 + gap)
        assert r.outcome == "rejected", (overrides, r)


@pytest.mark.integration
def test_long_reply_stands_on_its_own(make_engine, t0):
    """A reply with more than write.reply_max_terms content terms is stored as said, without the question."""
    eng = make_engine(overrides={"write.reply_max_terms": 2})
    eng.add("Do you have any pets?", user_id="u", role="assistant", session_id="s1", now=t0)
    r = eng.add("two cats and an old beagle named Biscuit", user_id="u", session_id="s1",
                now=t0 + timedelta(minutes=1))
    assert r.outcome == "stored" and REPLY_TO_KEY not in eng.memory(r.memory_id, user_id="u").metadata


@pytest.mark.integration
def test_a_question_back_is_no_answer(engine, t0):
    """'why do you ask?' after 'Do you smoke?' is stored as said, not as the question's answer."""
    engine.add("Do you smoke?", user_id="u", role="assistant", session_id="s1", now=t0)
    r = engine.add("why do you ask?", user_id="u", session_id="s1", now=t0 + timedelta(minutes=1))
    assert r.outcome == "stored" and REPLY_TO_KEY not in engine.memory(r.memory_id, user_id="u").metadata


# --- a reply that denies the assistant's guess (write/roles.py, denied guesses) -----------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("text,denies", [
    ("nope, days only, 7 to 3", True), ("nah, Portland", True), ("no", True), ("Not really, I work from home", True),
    ("没有，才上幼儿园中班", True), ("不是，在苏州", True), ("不，在苏州", True), ("错了，我是做会计的", True),
    ("yep", False), ("对的", False), ("correct", False), ("not sure, why?", False), ("不太清楚", False),
    ("no idea", False), ("", False),
])
def test_denials(text, denies):
    from memory_engine.write.roles import is_denial

    assert is_denial(text) is denies


@pytest.mark.integration
@pytest.mark.parametrize("guess,reply,plain,about_assistant", [
    ("You work night shifts at the hospital, right? Blackout curtains help a lot with day sleep.",
     "nope, days only, 7 to 3", "night shifts at the hospital", "what did you guess about my shifts?"),
    ("你家孩子应该上小学了吧？", "没有，才上幼儿园中班", "孩子上小学", "你之前猜我家孩子上几年级"),
])
def test_a_denied_guess_answers_only_a_query_about_the_assistant(quiet_engine_factory, t0, guess, reply, plain,
                                                                   about_assistant):
    for on in (True, False):
        eng = quiet_engine_factory({"write.denied_guesses": on})
        g = eng.add(guess, user_id="u", role="assistant", session_id="s1", now=t0).memory_id
        r = eng.add(reply, user_id="u", session_id="s1", now=t0 + timedelta(minutes=2))
        assert r.outcome == "stored" and eng.memory(g, user_id="u").status.value == "current"  # nothing archived
        assert ("_declined_by_user" in eng.memory(g, user_id="u").metadata) is on
        at = t0 + timedelta(days=2)
        res = eng.retrieve(plain, user_id="u", now=at)
        assert r.memory_id in res.ids and (g in res.ids) is (not on)
        assert g in eng.retrieve(about_assistant, user_id="u", now=at).ids


@pytest.mark.integration
def test_a_confirmed_guess_is_not_declined(quiet_engine_factory, t0):
    eng = quiet_engine_factory()
    g = eng.add("你是在杭州上班吧？", user_id="u", role="assistant", session_id="s1", now=t0).memory_id
    eng.add("对", user_id="u", session_id="s1", now=t0 + timedelta(minutes=2))
    assert "_declined_by_user" not in eng.memory(g, user_id="u").metadata
    assert g in eng.retrieve("杭州上班", user_id="u", now=t0 + timedelta(days=2)).ids


@pytest.mark.unit
@pytest.mark.parametrize("question,guess", [
    ("You're in Seattle, right?", True), ("So you live in Seattle?", True), ("You work night shifts at the hospital, right?", True),
    ("From earlier it sounds like you don't eat meat, is that right?", True), ("你是当老师的，对吧？", True),
    ("你家孩子应该上小学了吧？", True), ("你是不是在杭州上班？", True),
    ("Do you have a car?", False), ("So do you have a car?", False), ("Where did you grow up?", False),
    ("May I ask how old you are?", False), ("你平时抽烟吗？", False), ("您是一个人住吗", False), ("", False),
])
def test_guesses(question, guess):
    from memory_engine.write.roles import is_guess

    assert is_guess(question) is guess
