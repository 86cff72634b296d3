"""Forget requests naming one of the speaker's own details (issue 16, failure class 6):
"please stop remembering where I work", "scratch the part about my ex", "don't want that
saved", "把我住址删掉" are requests (on 2cc49ae all four were stored as ordinary memories),
and a forget archives only the speaker's own detail, never a relative's on the same
subject (on 2cc49ae "forget my address" also archived "My parents' address is ..." and
"where I work" archived "my sister works at Google")."""

from datetime import timedelta

import pytest

from memory_engine.write.intents import forget_target


@pytest.mark.unit
@pytest.mark.parametrize("text,target", [
    ("please stop remembering where I work", "where I work"),
    ("could you stop keeping track of when I go to bed", "when I go to bed"),
    ("quit storing how much I earn", "how much I earn"),
    ("can you scratch the part about my ex? don't want that saved", "my ex"),
    ("scratch what I said about my salary", "my salary"),
    ("I don't want my address stored", "my address"),
    ("I don't want that remembered", ""),
    ("don't want you saving my address", "my address"),
    ("把我住址删掉吧", "我住址"),
    ("把我手机号删了", "我手机号"),
    # a topic clause ending in a particle, then '忘了吧' (session 19 red-team 2: stored as a memory)
    ("以后别再提我儿子高考的事了，忘了吧", "我儿子高考"),
    ("Please forget the therapist part", "therapist"),  # 'part' is a pointer word, not the topic (red-team 2)
    ("forget the spare parts", "spare parts"),  # a plural is a thing named
])
def test_requests_naming_own_details(text, target):
    assert forget_target(text) == target


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "don't remember where I parked, ugh",  # a report: not addressed, not asked to stop
    "I don't want the cake saved",  # a wish about a thing, not about what was said
    "Scratch my name off the list",
    "把我电脑里的游戏删了",  # a place on a device, not a detail of the speaker
    "我把文件删了",
    "别提了，今天堵车堵死了",  # 'don't even mention it': no request
    "以后别提备孕了",  # no forget verb: the assistant is asked not to bring it up, nothing is named to forget
])
def test_statements_stay_statements(text):
    assert forget_target(text) is None


@pytest.mark.integration
@pytest.mark.parametrize("own,relative,ask", [
    ("I work at Stripe on the payments risk team", "my sister works at Google as a product designer",
     "please stop remembering where I work"),
    ("My address is 12 Elm Street, Apt 4", "My parents' address is 88 Oak Road", "forget my address"),
    ("我住在朝阳区望京西园三区", "我妈住在杭州西湖区", "把我住址删掉吧"),
])
def test_forget_keeps_a_relatives_detail(forget_scene, own, relative, ask):
    forget_scene([own, relative], ask, target=0, ask_at=timedelta(days=1))


@pytest.mark.integration
def test_forget_naming_a_relative_archives_only_that_relatives_detail(forget_scene):
    forget_scene(["My address is 12 Elm Street, Apt 4", "My parents' address is 88 Oak Road"],
                 "forget my parents' address", target=1, ask_at=timedelta(days=1))


@pytest.mark.integration
@pytest.mark.parametrize("own,ask", [
    ("我和老公在备孕", "别再记我备孕的事了"),
    ("My wife and I are trying for a baby", "Forget that I'm trying for a baby"),
])
def test_a_matter_shared_with_a_relative_is_the_speakers_own(forget_scene, own, ask):
    """Issue 16 session 19 (red-team): a relative coordinated with the speaker ('我和老公', 'my wife and I') made the
    memory 'about the husband', so the forget named nothing (forget_intent:no_match) and the memory stayed."""
    forget_scene(["我每天骑车上班" if own.startswith("我") else "I ride my bike to work", own], ask, target=1,
                 ask_at=timedelta(days=1))


@pytest.mark.integration
@pytest.mark.parametrize("memories,ask", [
    (["我每天骑车上班", "我妹妹在备孕"], "别再记我备孕的事了"),  # the relative's memory was the nearest
    (["我每天骑车上班"], "别再记我备孕的事了"),  # a store of one: nothing to stand out from
])
def test_a_topic_forget_never_archives_an_unrelated_memory(engine, t0, memories, ask):
    """Data loss (issue 16 session 19): with the sister's memory set aside as someone else's, the topic rule named
    the runner-up, '我每天骑车上班' (rescaled 0.38, e5 packs Chinese pairs tightly), and archived it. The topic must
    stand out from every memory of the owner's and from unrelated background sentences (write.forget_topic_min_z)."""
    ids = [engine.add(m, user_id="u", now=t0 + timedelta(minutes=i)).memory_id for i, m in enumerate(memories)]
    r = engine.add(ask, user_id="u", now=t0 + timedelta(days=1))
    assert r.outcome == "rejected" and r.reason == "forget_intent:no_match", r
    assert all(engine.memory(m, user_id="u").status.value == "current" for m in ids)


@pytest.mark.integration
def test_a_topic_then_forget_it_archives_the_topic(forget_scene):
    forget_scene(["我每天骑车上班", "我儿子明年高考，压力挺大"], "以后别再提我儿子高考的事了，忘了吧", target=1,
                 ask_at=timedelta(days=1))
