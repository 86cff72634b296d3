"""Two corrections that left the stale value first (issue 16, failure class 6; session 19 red-team):

* an uncurated correction ('Tom works at Airbus, not Boeing' scores under the write threshold) retired nothing and
  linked nothing, so 'Tom works at Boeing' answered 'where does Tom work?' first; it now links what it would retire
  (``corrects``, archived False) and ranks above it;
* a correction of whom a value belongs to ('Sorry, I meant my sister's birthday is March 3rd, not my mom's') was
  refused as being about someone the memory does not name, though the replaced words name the memory's person.
Nothing else of the user's is touched; a correction of another person's value still refuses."""

from datetime import timedelta

import pytest


def _told(engine, t0, olds, new):
    ids = [engine.add(o, user_id="u", session_id="s1", now=t0 + timedelta(minutes=i)).memory_id
           for i, o in enumerate(olds)]
    return ids, engine.add(new, user_id="u", session_id="s2", now=t0 + timedelta(days=5))


def _status(engine, mid):
    return engine.memory(mid, user_id="u").status.value


@pytest.mark.integration
def test_an_uncurated_correction_links_and_ranks_first(engine, t0):
    ids, r = _told(engine, t0, ["Tom works at Boeing", "I play tennis on Sundays"], "Tom works at Airbus, not Boeing")
    assert r.superseded_ids == ()
    assert [(e["id"], e["rule"], e["archived"]) for e in r.evidence] == [(ids[0], "corrects", False)]
    assert all(_status(engine, i) == "current" for i in ids)
    hits = engine.retrieve("Where does Tom work?", user_id="u", now=t0 + timedelta(days=6)).hits
    order = [h.memory_id for h in hits]
    assert order[0] == r.memory_id and (ids[0] not in order or order.index(ids[0]) > 0)


@pytest.mark.integration
def test_whose_value_a_correction_names_retires_that_memory_only(engine, t0):
    ids, r = _told(engine, t0, ["My mom's birthday is on March 3rd", "My sister lives in Denver"],
                   "Sorry, I meant my sister's birthday is March 3rd, not my mom's")
    assert r.superseded_ids == (ids[0],)
    assert _status(engine, ids[1]) == "current"


@pytest.mark.integration
def test_a_swap_keeps_a_memory_that_holds_more(engine, t0):
    ids, r = _told(engine, t0, ["My mom lives in Ohio and works at Kroger"], "Sorry, my sister lives in Ohio, not my mom")
    assert r.superseded_ids == () and _status(engine, ids[0]) == "current"


@pytest.mark.integration
def test_another_persons_value_still_refuses(engine, t0):
    ids, r = _told(engine, t0, ["My mom's birthday is on March 3rd"], "Actually my sister's birthday is May 5, not March 3rd")
    assert r.superseded_ids == () and _status(engine, ids[0]) == "current"
