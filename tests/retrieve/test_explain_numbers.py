"""What `retrieve(explain=True)` says about each candidate and which routes a hit names.

A floor drop names the check it missed, the floor's gate (no candidate of the question reached
``retrieval.floor``) or the candidate floor (the gate was open), with the value it read, the threshold and
the margin; a memory the hop's chain focus moved below is ``hop_focus``, not a floor drop. A hit's
``sources`` name every channel that found it, ``hop`` and ``intent`` included, in the one order of
:data:`memory_engine.retrieve.routes.CHANNELS`. Real in-memory engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import MemoryEngine
from memory_engine.retrieve.routes import CHANNELS, HOP_CHANNEL, ROUTES, channels_of

T0 = datetime(2026, 5, 4, 9, tzinfo=UTC)


def _add(engine: MemoryEngine, user: str, texts: list[str]) -> dict[str, str]:
    return {t: engine.add(t, user_id=user, session_id=f"s{i}", now=T0 + timedelta(days=i)).memory_id
            for i, t in enumerate(texts)}


def test_every_registered_route_and_the_hop_have_a_place_in_the_one_list():
    for name, cls in ROUTES.items():
        assert getattr(cls, "channel") in CHANNELS, name  # noqa: B009 - a Route's class attribute
    assert HOP_CHANNEL in CHANNELS and len(set(CHANNELS)) == len(CHANNELS)
    assert channels_of({"hop": 2, "vector": 1, "intent": 3}) == ("vector", "intent", "hop")
    assert channels_of(["new_route", "keyword"]) == ("keyword", "new_route")  # an unlisted route is never left out


def test_a_never_stored_question_names_the_gate_with_its_numbers(make_engine):
    eng = make_engine()
    floor = eng.config.retrieval.floor
    _add(eng, "gate", ["I keep my bike in the basement storage room", "My dentist appointment moved to Friday"])
    res = eng.retrieve("what's my favourite board game?", user_id="gate", now=T0 + timedelta(days=3), explain=True)
    assert res.hits == [] and res.explanations
    for e in res.explanations:
        assert (e.dropped_at, e.floor_check, e.threshold) == ("floor", "gate", floor)
        assert e.compared is not None and e.compared < floor
        assert e.margin == pytest.approx(e.compared - floor) and e.margin < 0
        assert f"retrieval.floor {floor:.3f}" in e.why() and f"margin {e.margin:+.3f}" in e.why()


def test_an_answerable_question_names_the_candidate_floor_for_the_weak_ones(make_engine):
    eng = make_engine({"retrieval.candidate_floor": 0.2, "retrieval.dense_keep": 0})
    _add(eng, "cand", ["My daughter's piano lesson is on Wednesday afternoons",
                       "We bought a new sofa for the living room", "The car needs new winter tyres"])
    res = eng.retrieve("when is my daughter's piano lesson?", user_id="cand", now=T0 + timedelta(days=4),
                       explain=True)
    assert res.hits and "piano" in res.hits[0].content
    dropped = [e for e in res.explanations if e.dropped_at == "floor"]
    assert dropped
    for e in dropped:
        assert (e.floor_check, e.threshold, e.compared) == ("candidate_floor", 0.2, e.relevance)
        assert e.threshold_key == "retrieval.candidate_floor" and "< retrieval.candidate_floor 0.200" in e.why()
        assert e.margin is not None and e.margin < 0 and "the gate was open" in e.why()
    returned = [e for e in res.explanations if e.dropped_at is None]
    assert returned and all(e.floor_check is None and e.margin is None and e.why() == "" for e in returned)


@pytest.mark.parametrize("candidate_floor", [None, 0.9])  # unset, or set above the floor (min() takes the floor)
def test_a_candidate_floor_that_is_the_floor_names_retrieval_floor(make_engine, candidate_floor):
    floor = 0.35
    eng = make_engine({"retrieval.floor": floor, "retrieval.candidate_floor": candidate_floor,
                       "retrieval.dense_keep": 0})
    _add(eng, "cand-none", ["My daughter's piano lesson is on Wednesday afternoons",
                            "We bought a new sofa for the living room", "The car needs new winter tyres"])
    res = eng.retrieve("when is my daughter's piano lesson?", user_id="cand-none", now=T0 + timedelta(days=4),
                       explain=True)
    dropped = [e for e in res.explanations if e.floor_check == "candidate_floor"]
    assert res.hits and dropped
    for e in dropped:
        assert (e.threshold, e.threshold_key) == (floor, "retrieval.floor")
        assert f"< retrieval.floor {floor:.3f}" in e.why() and "retrieval.candidate_floor" not in e.why()


def test_a_hop_hit_names_the_hop_among_its_sources(engine):
    user = "src-hop"
    ids = _add(engine, user, [
        "Nadia leads the mobile onboarding revamp",
        "The mobile onboarding revamp relies on the new identity API",
        "The identity API launch is on hold until legal approves the consent text",
    ])
    res = engine.retrieve("Is Nadia's work going to slip?", user_id=user, now=T0 + timedelta(days=6), explain=True)
    routes = {e.memory_id: e.route_ranks for e in res.explanations}
    for h in res.hits:  # every channel of the candidate, in the one order
        assert h.sources == channels_of(routes[h.memory_id])
    blocker = next(h for h in res.hits if h.memory_id == list(ids.values())[2])
    assert HOP_CHANNEL in blocker.sources


def test_a_memory_off_the_hops_chain_is_dropped_by_the_focus_not_the_floor(make_engine):
    eng = make_engine({"retrieval.hop_chain_focus": True})
    ids = _add(eng, "focus", ["Pepper has always gone to Dr. Alvarez",
                              "Dr. Alvarez's clinic is now at 9 Birch Lane",
                              "my orthodontist Dr. Kim is on Maple Avenue"])
    res = eng.retrieve("where do I take Pepper for her vaccinations?", user_id="focus", now=T0 + timedelta(days=5),
                       explain=True)
    off = next(e for e in res.explanations if e.memory_id == ids["my orthodontist Dr. Kim is on Maple Avenue"])
    assert off.dropped_at == "hop_focus" and off.floor_check is None
    assert off.why().startswith("hop focus:")
