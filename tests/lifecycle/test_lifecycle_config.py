"""Lifecycle settings that were never read are wired (profile_min_sources,
extract_min_confidence, reactivate_on_keyword, retrieval.keyword_min_coverage), and
consolidation merges by the write pipeline's dedup rule (numbers must agree)."""

from __future__ import annotations

import pytest

from memory_engine.lifecycle.consolidate import consolidate
from memory_engine.lifecycle.runner import reactivate_on_hit, run_lifecycle

pytestmark = pytest.mark.integration


def test_consolidation_never_merges_different_numbers(eng, day):
    a = eng.add("My weight this morning was 82 kg on the bathroom scale", user_id="u1", memory_type="semantic",
                now=day(0))
    b = eng.add("My weight this morning was 78 kg on the bathroom scale", user_id="u1", memory_type="semantic",
                now=day(1))
    assert a.outcome == b.outcome == "stored"
    rep = consolidate(eng, user_id="u1", now=day(2))
    assert [x for x in rep.actions if x.kind == "merge"] == []
    assert {a.memory_id, b.memory_id} <= {r.id for r in eng.list_memories(user_id="u1", include_archived=False)}


def test_the_same_words_for_two_dates_stay_two_memories(eng, day):
    """Red-team 2 (session 19): 'Dentist on Monday' said in two weeks merged into the first, so the second
    appointment kept the first one's date. Neither the write's dedup nor consolidation merges two dated occurrences;
    the same sentence again the same day still merges."""
    first = eng.add("Dentist on Monday", user_id="u1", now=day(0))
    second = eng.add("Dentist on Monday", user_id="u1", now=day(7))
    again = eng.add("Dentist on Monday", user_id="u1", now=day(7))
    assert (first.outcome, second.outcome, again.outcome) == ("stored", "stored", "merged")
    assert again.memory_id == second.memory_id
    a, b = eng.memory(first.memory_id, user_id="u1"), eng.memory(second.memory_id, user_id="u1")
    assert a.event_start is not None and b.event_start is not None and b.event_start - a.event_start == 7 * 86400
    rep = consolidate(eng, user_id="u1", now=day(8))
    assert [x for x in rep.actions if x.kind == "merge"] == []


def test_profile_min_sources_comes_from_the_config(make_engine, day):
    def fill(e):
        for text in ("I love hiking in the Alps", "I prefer trail running shoes from Salomon",
                     "My favourite mountain hut is on the Matterhorn"):
            e.add(text, user_id="u1", memory_type="semantic", metadata={"topic": "outdoors"}, now=day(0))

    four = make_engine(**{"lifecycle.profile_min_sources": 4})
    fill(four)
    assert [x.kind for x in four.consolidate(user_id="u1", now=day(1), dry_run=True).actions] == []
    three = make_engine(**{"lifecycle.profile_min_sources": 3})
    fill(three)
    assert [x.kind for x in three.consolidate(user_id="u1", now=day(1), dry_run=True).actions] == ["profile"]


def test_reactivate_on_keyword_can_be_switched_off(make_engine, day):
    for flag, expected in ((False, 0), (True, 1)):
        eng = make_engine(**{"lifecycle.reactivate_on_keyword": flag})
        eng.add("Visited the Louvre museum in Paris with my sister", user_id="u1", memory_type="episodic", now=day(0))
        assert run_lifecycle(eng, now=day(91)).counts.get("archive") == 1
        assert len(reactivate_on_hit(eng, "Louvre museum Paris", user_id="u1", now=day(100))) == expected


def test_keyword_min_coverage_drops_weak_keyword_rows(make_engine, day):
    texts = ("The Louvre museum in Paris opens at nine", "Paris trip budget is 2000 euros")

    def keyword_ids(eng):
        res = eng.retrieve("Louvre museum Paris", user_id="u1", now=day(1), explain=True)
        return {e.memory_id for e in res.explanations if "keyword" in e.route_ranks}

    loose, strict = make_engine(), make_engine(**{"retrieval.keyword_min_coverage": 0.9})
    for e in (loose, strict):
        for t in texts:
            e.add(t, user_id="u1", memory_type="episodic", now=day(0))
    assert len(keyword_ids(loose)) == 2 and len(keyword_ids(strict)) == 1
