"""Reworded duplicates merge, statements about someone else or about a past state never do
(issue 16, failure class 7; write/dedup.py, write/hygiene.py). Real engine, bundled model."""

from datetime import timedelta

import pytest

from memory_engine.write.dedup import identity
from memory_engine.write.hygiene import FILLERS, align_stems, informative, same_meaning
from memory_engine.write.rules import past_aspect


@pytest.mark.integration
@pytest.mark.parametrize("first,again", [
    ("I'm allergic to penicillin", "penicillin allergy here, just so you know"),
    ("我对花生过敏", "花生过敏哈，记一下"),
    ("I swim every Tuesday night", "every Tuesday night I go swimming"),
    ("I'm vegetarian", "just a reminder, I'm vegetarian"),
])
def test_a_wrapped_restatement_merges(engine, t0, first, again):
    a = engine.add(first, user_id="u", now=t0)
    b = engine.add(again, user_id="u", now=t0 + timedelta(days=3))
    assert a.outcome == "stored" and b.outcome == "merged" and b.memory_id == a.memory_id, (first, again, b)
    kept = engine.memory(a.memory_id, user_id="u")
    assert kept.updated_at >= (t0 + timedelta(days=3)).timestamp()  # the merge carries the newer time
    assert kept.recurrence == 2  # the restatement is counted


@pytest.mark.integration
@pytest.mark.parametrize("other,mine", [
    ("我老公对猫毛过敏", "我也对猫毛过敏"),               # the husband's allergy is not the user's
    ("我妈妈每天早上喝一杯豆浆", "我每天早上喝一杯豆浆"),
    ("my wife is allergic to cats", "I'm allergic to cats"),
])
def test_the_same_statement_about_another_person_is_kept(engine, t0, other, mine):
    a = engine.add(other, user_id="u", now=t0)
    b = engine.add(mine, user_id="u", now=t0 + timedelta(days=3))
    assert a.outcome == "stored" and b.outcome == "stored" and b.memory_id != a.memory_id, (other, mine, b)
    assert engine.memory(a.memory_id, user_id="u").status.value == "current"


@pytest.mark.integration
@pytest.mark.parametrize("past,now", [
    ("I used to work at Google", "I work at Google"),
    ("我以前在上海住过三年", "我现在住在上海"),
])
def test_a_present_state_never_merges_into_a_past_one(engine, t0, past, now):
    a = engine.add(past, user_id="u", now=t0)
    b = engine.add(now, user_id="u", now=t0 + timedelta(days=20))
    assert b.outcome == "stored" and b.memory_id != a.memory_id, (past, now, b)


@pytest.mark.integration
@pytest.mark.parametrize("first,second", [
    ("我对花生过敏", "我对花生不过敏"),
    ("I'm allergic to cats", "actually I'm allergic to cats and dogs"),  # a filler never hides added content
])
def test_opposites_and_added_content_are_kept(engine, t0, first, second):
    engine.add(first, user_id="u", now=t0)
    assert engine.add(second, user_id="u", now=t0 + timedelta(days=2)).outcome == "stored"


@pytest.mark.integration
def test_fillers_and_stems_are_configuration(make_engine, t0):
    eng = make_engine({"write.dedup_ignore_fillers": False, "write.dedup_stem_prefix": 0})
    eng.add("我对花生过敏", user_id="u", now=t0)
    assert eng.add("花生过敏哈，记一下", user_id="u", now=t0 + timedelta(days=1)).outcome == "stored"
    eng.add("I'm allergic to penicillin", user_id="u", now=t0)
    assert eng.add("penicillin allergy here", user_id="u", now=t0 + timedelta(days=1)).outcome == "stored"


@pytest.mark.unit
def test_identity_names_people_and_aspect():
    assert identity("我老公对猫毛过敏").people == frozenset({"husband"})
    assert identity("我也对猫毛过敏").people == frozenset()
    assert not identity("我老公对猫毛过敏").agrees(identity("我也对猫毛过敏"))
    assert past_aspect("I used to work at Google") and past_aspect("我以前在上海住过三年")
    assert not past_aspect("I work at Google") and not past_aspect("我现在住在上海")


@pytest.mark.unit
def test_fillers_stems_and_same_terms():
    assert informative({"哈", "花生", "记", "过敏"}) == {"花生", "过敏"}
    assert informative({"哈", "花生"}, ignore_fillers=False) == {"哈", "花生"}
    assert not FILLERS & {"like", "love", "hate", "not", "never", "wife", "以前", "现在", "不"}
    assert align_stems({"allergi", "penicillin"}, {"allerg", "penicillin"}, 5) == {"allerg", "penicillin"}
    assert align_stems({"cats"}, {"cat"}, 5) == {"cats"}  # shorter than the prefix: left alone
    assert align_stems({"allergi"}, {"allerg"}, 0) == {"allergi"}
    kw = dict(repeat_similarity=0.92, reworded_similarity=0.85, term_overlap=0.3)
    assert same_meaning(0.56, {"allerg", "penicillin"}, {"allerg", "penicillin"}, same_terms_similarity=0.5, **kw)
    assert not same_meaning(0.56, {"allerg", "penicillin"}, {"allerg", "penicillin"}, **kw)  # off by default
    assert not same_meaning(0.45, {"allerg", "penicillin"}, {"allerg", "penicillin"}, same_terms_similarity=0.5, **kw)
