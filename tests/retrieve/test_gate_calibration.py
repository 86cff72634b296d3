"""The floor's gate on a per-query calibrated dense similarity (retrieval.gate_calibration,
retrieve/calibration.py): a candidate's cosine in standard deviations above the query's cosines to a shipped
background of neutral everyday sentences. Pure pieces first, then the real bundled e5 embedder and a real
in-memory engine."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_engine.config import EngineConfig, RetrievalSection, WriteSection
from memory_engine.errors import ConfigError
from memory_engine.retrieve.calibration import (
    DenseBackground,
    QueryBackground,
    background_sentences,
    gate_similarity,
)
from memory_engine.retrieve.candidates import CandidateBuilder
from memory_engine.retrieve.cutoffs import RelevanceFloor
from memory_engine.retrieve.fusion import Candidate


def test_gate_similarity_is_zero_at_z_zero_the_floor_at_z_floor_and_capped():
    assert gate_similarity(1.0, 1.0, 3.0, 0.25) == 0.0
    assert gate_similarity(-2.0, 1.0, 3.0, 0.25) == 0.0
    assert gate_similarity(3.0, 1.0, 3.0, 0.25) == pytest.approx(0.25)
    assert gate_similarity(2.0, 1.0, 3.0, 0.25) == pytest.approx(0.125)
    assert gate_similarity(50.0, 1.0, 3.0, 0.25) == 1.0
    bg = QueryBackground(latin_mean=0.75, latin_sd=0.02, cjk_mean=0.84, cjk_sd=0.01)
    assert bg.z(0.81, cjk_memory=False) == pytest.approx(3.0)
    assert bg.z(0.81, cjk_memory=True) == pytest.approx(-3.0)  # a Chinese memory against the Chinese sentences


def test_the_calibrated_similarity_opens_a_shut_gate_and_leaves_an_open_one_alone():
    floor = RelevanceFloor(RetrievalSection(dense_keep=0))
    # fixed-baseline gate relevance 0.1; calibrated on the query's background 0.3: it opens the gate and is kept
    x = Candidate("x", similarity=0.1, calibrated_similarity_share=3.0, fused=0.3)
    assert x.gate_relevance < 0.25 <= x.calibrated_gate_relevance
    assert floor.split([x]) == ([x], [])
    # off (None): the gate stays shut
    off = Candidate("x", similarity=0.1, fused=0.3)
    assert off.calibrated_gate_relevance == off.gate_relevance and floor.split([off]) == ([], [off])
    # a gate already open on the fixed evidence is left as it is: the calibrated one keeps no extra candidate
    hit = Candidate("hit", similarity=0.5, coverage=1.0, fused=0.9)
    assert floor.split([hit, x]) == ([hit], [x])


def test_the_background_is_shipped_in_both_scripts_and_embedded_once(embedder):
    en, zh = background_sentences()
    assert len(en) >= 50 and len(zh) >= 50
    bg = DenseBackground(embedder)
    first = bg.vectors()
    assert first[0].shape == (len(en), embedder.dim) and first[1].shape == (len(zh), embedder.dim)
    assert DenseBackground(embedder).vectors()[0] is first[0]  # one embedding per embedder version and process
    # the memory side: each memory's cosines to the sentences read as queries, in the query's script
    mean, sd = bg.memory_side(embedder.embed_documents(["I walk the dog before work", "我每天早上遛狗"]), False)
    assert mean.shape == sd.shape == (2,) and (sd > 0).all()


def test_z_floor_must_lie_above_z_zero(make_engine, embedder):
    store = make_engine().store
    bad = RetrievalSection(gate_calibration=True, gate_calibration_z_zero=3.0, gate_calibration_z_floor=2.0)
    with pytest.raises(ConfigError):
        CandidateBuilder(store, embedder, bad, WriteSection())
    off = RetrievalSection(gate_calibration=False)
    assert CandidateBuilder(store, embedder, off, WriteSection()).background is None
    # ships off (no gain on top of the answer types); its memory side is on whenever it is switched on
    assert not EngineConfig().retrieval.gate_calibration and EngineConfig().retrieval.gate_calibration_memory_side


STORE = [
    "My job is teaching maths at a secondary school",
    "We repainted the hallway a light grey last month",
    "I had a bowl of ramen for lunch near the station",
]


def test_a_generic_question_opens_the_gate_on_its_own_background_and_a_never_stored_one_stays_empty(
        make_engine, embedder, t0):
    # on e5 the job memory is at cosine ~0.80 to 'Where do I work?': 0.10 on the fixed baseline 0.78, under the
    # floor; on the query's own background it stands ~2.8 standard deviations above an unrelated sentence
    bg = DenseBackground(embedder).of(embedder.embed_query("Where do I work?"))
    vecs = embedder.embed_documents(STORE)
    q = embedder.embed_query("Where do I work?")
    zs = [bg.z(float(v @ q), cjk_memory=False) for v in vecs]
    assert zs[0] > 2.5 and max(zs[1:]) < 1.5
    later = t0 + timedelta(days=9)
    got = {}
    for on in (False, True):
        # the query side alone, at a low z_floor, so that one question shows the mechanism
        # answer types off: they open this gate by meaning on their own (intent.answer_types)
        eng = make_engine({"retrieval.gate_calibration": on, "retrieval.gate_calibration_memory_side": False,
                           "intent.answer_types": False,
                           "retrieval.gate_calibration_z_zero": 1.0, "retrieval.gate_calibration_z_floor": 2.5})
        ids = [eng.add(t, user_id="u", now=t0 + timedelta(days=i)).memory_id for i, t in enumerate(STORE)]
        got[on] = [ids.index(h.memory_id) for h in eng.retrieve("Where do I work?", user_id="u", now=later).hits]
        # a topic never told stays empty either way
        assert eng.retrieve("what's my cat called?", user_id="u", now=later).hits == []
    assert got[False] == []
    assert got[True] == [0]


def test_both_sides_at_their_defaults_keep_never_stored_questions_empty(make_engine, embedder, t0):
    # the memory side: each memory's own cosines to the background read as queries; the default z is the mean of
    # both sides, and a topic never told (in either script) stands nowhere near z_floor (the mechanism ships off)
    eng = make_engine({"retrieval.gate_calibration": True})
    mixed = STORE + ["我在一家做跨境电商的公司当会计", "周末去山里露营了两天"]
    for i, t in enumerate(mixed):
        eng.add(t, user_id="u", now=t0 + timedelta(days=i))
    later = t0 + timedelta(days=9)
    for q in ("what's my cat called?", "我家猫叫什么？", "when is my dentist appointment?"):
        assert eng.retrieve(q, user_id="u", now=later).hits == []
