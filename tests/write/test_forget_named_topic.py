"""A forget request that names a topic forgets that topic, never the newest memory, and one
that names nothing it can find says so (fresh-user trial). Real write path (qdrant-edge, e5).

Old code: 'never mind the X thing, forget it' archived the memory written just before it (the
pronoun won over the named topic, shared_terms=[]), and 'forget what I said about the train'
archived nothing (a one-word target scores under forget_similarity against a longer memory)
while reporting outcome 'forgotten'."""

from datetime import timedelta

import pytest

from memory_engine.write.intents import forget_target


@pytest.mark.unit
@pytest.mark.parametrize("text,target", [
    ("Never mind the gym thing, forget it", "gym"),
    ("forget it, the piano stuff", "piano"),
    ("About my landlord - just forget it", "my landlord"),
    ("nvm the sushi thing, don't keep it", "sushi"),
    ("钢琴那个事，忘了吧", "钢琴"),
    ("我说的房东，别记了", "房东"),
    ("健身那事，删了吧", "健身"),
])
def test_a_named_topic_wins_over_the_pronoun(text, target):
    assert forget_target(text) == target


@pytest.mark.unit
@pytest.mark.parametrize("text", ["never mind, forget it", "pls don't keep that", "算了，那条别记了"])
def test_a_bare_pronoun_still_names_nothing(text):
    assert forget_target(text) == ""


@pytest.mark.integration
@pytest.mark.parametrize("memory,other,ask", [
    ("I go to the climbing gym on Tuesdays and Thursdays", "My daughter just turned seven",
     "Never mind the gym thing, forget it"),
    ("I take piano lessons every Saturday morning", "Actually my rent is 1800, not 1600",
     "the piano stuff, forget it please"),
    ("我每周六上午去上钢琴课", "我女儿刚满七岁", "钢琴那个事，忘了吧"),
])
def test_a_named_topic_is_forgotten_not_the_newest_memory(forget_scene, memory, other, ask):
    _, r = forget_scene([memory, other], ask, target=0, session_id="s")  # the newest memory stays current
    assert all(e["shared_terms"] for e in r.evidence)  # it names what it forgets


@pytest.mark.integration
@pytest.mark.parametrize("memory,ask", [
    ("I ride the 8:05 tram to campus", "Forget what I said about the tram"),
    ("I catch the 6:50 bus to the plant most days", "forget everything about the bus"),
    ("Our book club meets at the Maple Street library on the first Monday", "Forget the book club thing"),
    ("我每天早上七点四十坐轮渡去公司", "关于轮渡的那条删了吧"),
])
def test_what_i_said_about_x_forgets_x(engine, t0, forget_scene, memory, ask):
    (mid, _), _ = forget_scene([memory, "My wife is vegetarian"], ask, target=0)
    assert mid not in engine.retrieve(memory, user_id="u", now=t0 + timedelta(minutes=3)).ids


@pytest.mark.integration
@pytest.mark.parametrize("ask", ["Forget what I said about my dentist", "忘掉关于牙医的那条"])
def test_a_request_naming_nothing_found_says_so(engine, t0, ask):
    mid = engine.add("I take the 7:40 ferry to the office", user_id="u", now=t0).memory_id
    r = engine.add(ask, user_id="u", now=t0 + timedelta(minutes=1))
    assert r.outcome == "rejected" and r.reason == "forget_intent:no_match" and r.superseded_ids == ()
    assert r.memory_id is None  # the request itself is not stored as a fact
    assert [m.id for m in engine.list_memories(user_id="u")] == [mid]
    assert engine.memory(mid, user_id="u").status.value == "current"


@pytest.mark.integration
def test_a_bare_pronoun_never_reaches_into_another_session(engine, t0):
    old = engine.add("My cat Mochi is allergic to chicken", user_id="u", session_id="s1", now=t0).memory_id
    r = engine.add("never mind, forget it", user_id="u", session_id="s2", now=t0 + timedelta(days=1))
    assert r.superseded_ids == () and r.outcome == "rejected"
    assert engine.memory(old, user_id="u").status.value == "current"


@pytest.mark.integration
@pytest.mark.parametrize("said,ask", [
    ("太贵了，我还是订了楼下那家云南菜「一坐一忘」吧", "我今晚在哪吃饭"),
    ("今晚去一坐一忘吧", "今晚去哪"),
    ("I'm eating at Forget-Me-Not tonight, forget the fancy place", "where am I eating tonight?"),
])
def test_a_statement_that_only_uses_the_forget_verb_is_kept(engine, t0, said, ask):
    """Fresh-user trial, session 6: these were rejected as 'forget_intent:no_match' and lost."""
    r = engine.add(said, user_id="u-verb", now=t0)
    assert r.outcome == "stored" and r.memory_id is not None, r
    assert r.memory_id in engine.retrieve(ask, user_id="u-verb", now=t0 + timedelta(minutes=1)).ids
