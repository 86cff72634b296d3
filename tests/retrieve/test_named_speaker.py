"""A question that names a participant of a stored conversation ("Where did Priya go
hiking?") is answered by that participant's own turns, not by the other speakers' turns
that address them by name: the name counts as a covered query word (``retrieval.speaker_coverage``), as a date
the query names is matched by the memory's time, and the fused score can gain
``retrieval.speaker_weight`` (off by default; issue 16, LoCoMo dev: 83% of the
evidence turns vs 56% of the other top-10 turns are the named speaker's)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.config import RetrievalSection
from memory_engine.retrieve.candidates import names_speaker
from memory_engine.retrieve.fusers import fuser_for
from memory_engine.retrieve.fusion import Candidate

T0 = datetime(2026, 4, 6, 12, tzinfo=UTC)


def test_names_speaker_whole_words_and_cjk_names():
    assert names_speaker("Where did Priya go hiking?", "priya")
    assert names_speaker("what did PRIYA say", "Priya")
    assert names_speaker("Mary Ann's new job?", "mary ann")
    assert not names_speaker("Where did Priyanka go hiking?", "priya")
    assert not names_speaker("Where did Priya go hiking?", "")
    assert names_speaker("小林上周末去哪儿爬山了", "小林")
    assert not names_speaker("老王以前爬过哪座山？", "小林")


@pytest.mark.parametrize("fusion", ["hybrid", "weighted", "five_term", "rrf"])
def test_fusion_adds_the_speaker_bonus(fusion):
    rcfg = RetrievalSection(fusion=fusion, speaker_weight=0.1)
    base = Candidate("b" * 16, similarity=0.6, coverage=0.5, keyword=0.5, route_ranks={"vector": 1})
    named = Candidate("a" * 16, similarity=0.6, coverage=0.5, keyword=0.5, route_ranks={"vector": 1},
                      speaker_match=1.0)
    fused = {c.memory_id: c.fused for c in fuser_for(rcfg)([base, named])}
    bonus = 0.1 / rcfg.rrf_k if fusion == "rrf" else 0.1
    assert fused[named.memory_id] - fused[base.memory_id] == pytest.approx(bonus)
    off = {c.memory_id: c.fused for c in fuser_for(RetrievalSection(fusion=fusion, speaker_weight=0.0))([base, named])}
    assert off[named.memory_id] == pytest.approx(off[base.memory_id])


def _chat(eng) -> dict[str, str]:
    turns = [
        ("tom_asks", "Tom", "s1", "Priya how was your long weekend? did you end up doing the hike you were planning"),
        ("priya_hike", "Priya", "s1", "We did the coastal trail near Big Sur and camped two nights on the bluffs, my legs are still sore"),
        ("tom_hike", "Tom", "s2", "Nice! I hiked Half Dome in Yosemite with my brother last spring, Priya you should try it someday"),
        ("priya_job", "Priya", "s3", "Started the new job at the clinic on Monday, the commute is only fifteen minutes"),
    ]
    ids = {}
    for i, (label, who, session, text) in enumerate(turns):
        wr = eng.add(text, user_id="u", tenant_id="t", session_id=session, metadata={"speaker": who},
                     now=T0 + timedelta(days=i))
        assert wr.memory_id and wr.outcome == "stored", (text, wr.outcome)
        ids[label] = wr.memory_id
    return ids


def test_named_speaker_turn_passes_the_floor_by_who_said_it(make_engine):
    # her turn does not repeat her name: without the speaker it covers none of the query's words
    ids = _chat(eng := make_engine())
    res = eng.retrieve("Where did Priya go hiking?", user_id="u", tenant_id="t", top_k=5, now=T0 + timedelta(days=9))
    assert ids["priya_hike"] in [h.memory_id for h in res.hits]
    off = make_engine({"retrieval.speaker_coverage": False, "retrieval.speaker_weight": 0.0})
    ids_off = _chat(off)
    res_off = off.retrieve("Where did Priya go hiking?", user_id="u", tenant_id="t", top_k=5,
                           now=T0 + timedelta(days=9))
    assert ids_off["priya_hike"] not in [h.memory_id for h in res_off.hits]


def test_named_speaker_outranks_the_other_speakers_story(make_engine):
    ids = _chat(eng := make_engine({"retrieval.speaker_weight": 0.2}))
    res = eng.retrieve("Which trail did Priya hike?", user_id="u", tenant_id="t", top_k=5, now=T0 + timedelta(days=9))
    ranked = [h.memory_id for h in res.hits]
    assert ids["priya_hike"] in ranked
    assert ids["tom_hike"] not in ranked or ranked.index(ids["priya_hike"]) < ranked.index(ids["tom_hike"])
