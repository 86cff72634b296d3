"""Issue 16: an explicit correction that names the replaced value ('X, not Y', 'X，不是Y') of an
older memory it does not archive links it, so the old value never ranks first; a contrast
retires an older memory only when it said nothing beyond the subject and the replaced value.
Real engine (qdrant-edge, bundled e5), through the public API."""

from datetime import timedelta

import pytest

from memory_engine.retrieve.fusion import Candidate
from memory_engine.retrieve.stale import demote_corrected
from memory_engine.write.supersede import number_terms

pytestmark = pytest.mark.integration


def _first(engine, query, user, now):
    hits = engine.retrieve(query, user_id=user, now=now).hits
    assert hits, query
    return hits[0].content


def _link(r, old_id):
    return [e for e in r.evidence if e.get("id") == old_id and e.get("rule") == "corrects"]


@pytest.mark.parametrize("session_new", ["s1", "s2"])
def test_a_pronoun_correction_outranks_the_value_it_names_zh_and_en(engine, t0, session_new):
    cases = [
        ("zh", "我儿子豆豆今年八岁，在学游泳", "其实豆豆已经九岁了，不是八岁", "我儿子多大了？", "九岁"),
        ("en", "My niece Ada is twelve and loves chess", "Actually Ada is 13, not 12", "How old is Ada?", "13"),
        ("en2", "My son is 4 years old", "Sorry, he is five years old, not four", "How old is my son?", "five"),
    ]
    for user, old_text, new_text, query, new_value in cases:
        old = engine.add(old_text, user_id=user, session_id="s1", now=t0).memory_id
        engine.add("I like jazz on rainy evenings", user_id=user, session_id="s1", now=t0 + timedelta(minutes=1))
        r = engine.add(new_text, user_id=user, session_id=session_new, now=t0 + timedelta(minutes=5))
        # nothing archived (no subject term shared), the link is on the record with its evidence
        assert r.superseded_ids == () and engine.memory(old, user_id=user).status.value == "current"
        (ev,) = _link(r, old)
        assert ev["archived"] is False and ev["replaced_terms"]
        assert new_value in _first(engine, query, user, t0 + timedelta(days=1)), (user, session_new)


def test_a_contrast_keeps_the_details_it_does_not_restate(engine, t0):
    cases = [
        ("en", "The plumber is coming on Friday at 10am to fix the kitchen sink",
         "Actually the plumber comes at 11am, not 10am", "What is happening on Friday?", "When is the plumber coming?",
         "11am"),
        ("zh", "周六上午九点带妈妈去医院做复查", "其实复查是十点，不是九点", "周六要带妈妈去哪里？", "复查几点？", "十点"),
    ]
    for user, old_text, new_text, q_other, q_value, new_value in cases:
        old = engine.add(old_text, user_id=user, now=t0).memory_id
        r = engine.add(new_text, user_id=user, now=t0 + timedelta(hours=1))
        # "Friday" / "周六 医院 妈妈" were not restated: archiving would lose them
        assert old not in r.superseded_ids and engine.memory(old, user_id=user).status.value == "current"
        assert _link(r, old)
        later = t0 + timedelta(days=1)
        assert old in [h.memory_id for h in engine.retrieve(q_other, user_id=user, now=later).hits]
        assert new_value in _first(engine, q_value, user, later)


def test_a_contrast_still_retires_a_memory_it_restates_whole(engine, t0):
    old = engine.add("My gym membership costs 300 a month", user_id="u", now=t0).memory_id
    r = engine.add("Actually my gym membership costs 350 a month, not 300", user_id="u", now=t0 + timedelta(days=1))
    assert old in r.superseded_ids


def test_a_correction_links_only_its_own_speakers_memories(engine, t0):
    other = engine.add("My daughter is eight", user_id="v", now=t0).memory_id
    mine = engine.add("I have two cats", user_id="u", now=t0).memory_id
    r = engine.add("Actually she's nine, not eight", user_id="u", now=t0 + timedelta(hours=1))
    assert not _link(r, other) and not _link(r, mine) and r.superseded_ids == ()


def test_numbers_match_across_spellings():
    assert number_terms({"six"}) == {"6"}
    assert number_terms({"六岁"}) == {"6岁", "6"}
    assert number_terms({"十二岁"}) == {"12岁", "12"} and "23" in number_terms({"二十三"})
    assert number_terms({"3pm", "dentist"}) == {"3pm", "dentist"}


def test_demote_corrected_caps_only_linked_candidates():
    def cand(mid, fused):
        return Candidate(memory_id=mid, fused=fused)
    ranked = [cand("old", 0.9), cand("new", 0.5), cand("x", 0.4)]
    out, capped = demote_corrected(ranked, {"new": ("old",)}, 0.8)
    assert [c.memory_id for c in out] == ["new", "old", "x"] and capped == {"old": "new"}
    assert abs(out[1].fused - 0.4) < 1e-9
    # the correction not among the candidates: nothing moves
    assert demote_corrected(ranked[:1] + ranked[2:], {"new": ("old",)}, 0.8)[1] == {}
