"""A newer statement that reports a change ("Marcus quit, he's at a startup these days", "最近午饭都自己带饭")
ranks above the older value of the same subject although it shares fewer of the query's words
(issue 16, failure class 6; retrieval.stale_update_*). Nothing is archived: the older one loses one place."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory_engine.retrieve.fusion import Candidate
from memory_engine.retrieve.stale import demote_stale
from memory_engine.write.intents import reports_change, subject_terms

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)


@pytest.mark.parametrize("text,change", [
    ("Marcus quit, he's doing finance at a startup these days", True),
    ("ok going back to short answers with bullet points", True),
    ("续约了，涨到4300一个月", True), ("还是回到吃素了，吃肉胃不舒服", True), ("聚会最后定在七月十九号", True),
    ("my brother Sam works as a nurse at St. Mary's", False), ("我房租一个月3800，押一付三", False),
    # a story's sequence words order past events; a time of the statement is an event, not a new state
    ("高三那年一模数学只考了七十多分，后来每天多刷一套卷子", False), ("I finally passed my driving test", False),
    ("今天去献血了，献了400毫升", False), ("do you still drink coffee now?", False),
])
def test_reports_change(text, change):
    assert reports_change(text) is change


def test_subject_terms_leave_out_the_change_markers():
    assert "最近" not in subject_terms("最近午饭都自己带饭") and "午饭" in subject_terms("最近午饭都自己带饭")


def _pair(new_rel: float, new_cov: float) -> tuple[list[Candidate], dict[str, np.ndarray], dict[str, float]]:
    """An older candidate of relevance 0.8 (coverage 0.5) and a newer one of ``new_rel`` / ``new_cov``
    (relevance = 1 - (1 - similarity)(1 - coverage), retrieve/fusion.Candidate)."""
    old = Candidate("old", fused=0.9, similarity=0.6, coverage=0.5)
    new = Candidate("new", fused=0.4, similarity=1.0 - (1.0 - new_rel) / (1.0 - new_cov), coverage=new_cov)
    a, b = np.array([1.0, 0.0], dtype=np.float32), np.array([0.5, np.sqrt(0.75)], dtype=np.float32)  # cosine 0.5
    return [old, new], {"old": a, "new": b}, {"old": 1.0, "new": 2.0}


def _run(ranked, vecs, written, changes=frozenset({"new"}), shares=None):
    # stale_similarity 0.55 (the pair's 0.5 is below it), update bar 0.45, relevance 0.5, coverage 0.3
    return demote_stale(ranked, vecs, written, lambda c: c, 0.55, 0.95, 0.9, None, takes_rank=True,
                        changes=changes, update_similarity=0.45, update_relevance_share=0.5,
                        update_coverage_share=0.3, shares_subject=shares)


def test_a_reported_change_takes_the_older_value_s_place():
    out, demoted = _run(*_pair(0.45, 0.25))
    assert demoted == {"old": "new"}
    assert [c.memory_id for c in out] == ["new", "old"]
    assert out[0].fused == pytest.approx(0.9) and out[1].fused == pytest.approx(0.95 * 0.9)  # one place, not the top k


def test_a_reported_change_needs_the_marker_the_subject_some_query_word_and_relevance():
    assert _run(*_pair(0.45, 0.25), changes=frozenset())[1] == {}  # no change reported: the old rules (refused)
    assert _run(*_pair(0.45, 0.25), changes=frozenset({"old"}))[1] == {}  # the older one's wording does not count
    assert _run(*_pair(0.45, 0.0))[1] == {}  # names none of the query's words: another subject
    assert _run(*_pair(0.3, 0.25))[1] == {}  # far less relevant
    assert _run(*_pair(0.45, 0.25), shares=lambda a, b: False)[1] == {}  # shares no subject term


def test_a_demoted_middle_value_never_climbs_back_above_the_current_one():
    # A (old, best score) -> B (reports a change) -> A' (the return, lowest score): A yields to A', not to B
    # relevance a 0.87, b 0.72, c 0.69 (the gym-time flip of eval_sets/updates_outside.yaml)
    cands = [Candidate("a", fused=0.74, similarity=0.48, coverage=0.75),
             Candidate("b", fused=0.49, similarity=0.44, coverage=0.5),
             Candidate("c", fused=0.48, similarity=0.38, coverage=0.5)]
    v = np.array([1.0, 0.0], dtype=np.float32)
    out, demoted = demote_stale(cands, {"a": v, "b": v, "c": v}, {"a": 1.0, "b": 2.0, "c": 3.0}, lambda x: x,
                                0.55, 0.95, 0.9, None, takes_rank=True, changes=frozenset({"b"}),
                                update_similarity=0.45, update_relevance_share=0.5, update_coverage_share=0.3)
    assert out[0].memory_id == "c" and demoted["a"] == "c" and demoted["b"] == "c"


def test_a_friend_s_new_job_ranks_first_and_the_old_one_stays(quiet_engine):
    u = "job"
    old = quiet_engine.add("my buddy Marcus is an accountant at KPMG, he helps me with my taxes every spring",
                     user_id=u, session_id="s1", now=T0)
    quiet_engine.add("Marcus and I play pickup basketball on Sunday mornings", user_id=u, session_id="s1",
               now=T0 + timedelta(hours=1))
    new = quiet_engine.add("Marcus quit, he's doing finance at a small climbing-gear startup these days",
                     user_id=u, session_id="s2", now=T0 + timedelta(days=40))
    hits = quiet_engine.retrieve("where does Marcus work?", user_id=u, now=T0 + timedelta(days=45)).hits
    assert hits[0].memory_id == new.memory_id
    assert old.memory_id in [h.memory_id for h in hits]  # ranked lower, never archived


def test_two_people_s_jobs_both_stay_first_for_their_own_question(quiet_engine):
    u = "two"
    sam = quiet_engine.add("my brother Sam works as a nurse at St. Mary's hospital, night shifts mostly",
                     user_id=u, session_id="s1", now=T0)
    dana = quiet_engine.add("my wife Dana just started as a pharmacist at the Walgreens downtown, she's there now",
                      user_id=u, session_id="s2", now=T0 + timedelta(days=30))
    later = T0 + timedelta(days=35)
    assert quiet_engine.retrieve("where does Sam work?", user_id=u, now=later).hits[0].memory_id == sam.memory_id
    assert quiet_engine.retrieve("what's Dana's job?", user_id=u, now=later).hits[0].memory_id == dana.memory_id


def test_a_silent_lunch_habit_change_ranks_first_zh(quiet_engine):
    u = "lunch"
    quiet_engine.add("我午饭基本都点外卖，一般点黄焖鸡", user_id=u, session_id="s1", now=T0)
    quiet_engine.add("我工位在九楼靠窗", user_id=u, session_id="s1", now=T0 + timedelta(hours=1))
    new = quiet_engine.add("最近午饭都自己带饭，外卖太油了，吃了一个月瘦了三斤", user_id=u, session_id="s2",
                     now=T0 + timedelta(days=30))
    hits = quiet_engine.retrieve("我中午一般吃什么？", user_id=u, top_k=1, now=T0 + timedelta(days=35)).hits
    assert [h.memory_id for h in hits] == [new.memory_id]
