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
    # the adjacency pair (Tom asks about the hike, Priya answers) would lift it too: off here, to see the speaker
    off = make_engine({"retrieval.speaker_coverage": False, "retrieval.speaker_weight": 0.0,
                       "retrieval.context_answer_weight": None, "retrieval.context_answer_min_relevance": None})
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


def _c(mid: str, rel: float, fused: float) -> Candidate:
    return Candidate(mid * 16, similarity=rel, fused=fused)


def test_addresses_is_a_name_with_the_second_person():
    from memory_engine.retrieve.speakers import addresses
    assert addresses("Priya how was your long weekend?", "priya")
    assert addresses("小林，你上周末去哪儿爬山了？", "小林") and addresses("下次带上阿杰，您看行吗", "阿杰")
    assert not addresses("Amy 之前遇到过类似的 migration 问题，回头请教一下她", "amy")  # reports on her
    assert not addresses("how was your weekend?", "priya")  # nobody named


def test_speaker_demotions_order_the_named_speakers_turn_first():
    from memory_engine.retrieve.speakers import speaker_demotions
    pls = {"a" * 16: {"content": "Marco did you ever get the bike fixed?", "metadata": {"speaker": "Jun"}},
           "b" * 16: {"content": "yes, new chain and brakes, 80 bucks at the shop on Elm", "metadata": {"speaker": "Marco"}},
           "c" * 16: {"content": "I finally sold my old road bike", "metadata": {"speaker": "Jun"}},
           "d" * 16: {"content": "Marco told me the shop on Elm is cheap", "metadata": {"speaker": "Lea"}},
           "e" * 16: {"content": "bike shop list for the club newsletter", "metadata": {}}}
    kept = [_c("a", 0.8, 0.9), _c("c", 0.7, 0.8), _c("b", 0.6, 0.7), _c("d", 0.6, 0.6), _c("e", 0.5, 0.5)]
    out = speaker_demotions("what did Marco do about his bike?", kept, pls, 0.5)
    # spoken to Marco and Jun's own story go below; Lea reporting on Marco and a memory with no speaker stay
    assert out == {"b" * 16: ("a" * 16, "c" * 16)}
    # his turn must answer on its own: 0.6 < 0.8 x 0.8
    assert speaker_demotions("what did Marco do about his bike?", kept, pls, 0.8) == {"b" * 16: ("c" * 16,)}
    # unnamed off: only the turn spoken to him
    assert speaker_demotions("what did Marco do about his bike?", kept, pls, 0.5, unnamed=False) == {"b" * 16: ("a" * 16,)}
    assert speaker_demotions("did Jun and Marco talk about bikes?", kept, pls, 0.5) == {}  # two people named
    assert speaker_demotions("what did Kim say?", kept, pls, 0.5) == {}  # no speaker named


def _standup(eng) -> dict[str, str]:
    turns = [
        ("ivan_asks", "Ivan", "Sofia are you still waiting on the vendor contract? legal pinged me about it"),
        ("sofia_contract", "Sofia", "Procurement sent it back with redlines on the liability cap, I am rewriting clause 7"),
        ("ivan_own", "Ivan", "My contract review for the cloud vendor wrapped up yesterday, signed and filed"),
    ]
    ids = {}
    for i, (label, who, text) in enumerate(turns):
        wr = eng.add(text, user_id="u", tenant_id="t", session_id="st", metadata={"speaker": who},
                     now=T0 + timedelta(minutes=3 * i))
        assert wr.memory_id and wr.outcome == "stored", (text, wr.outcome)
        ids[label] = wr.memory_id
    return ids


@pytest.mark.parametrize("query,answer", [
    ("what is Sofia doing with the vendor contract?", "sofia_contract"),
    ("Where is Ivan's contract review at?", "ivan_own"),
])
def test_the_named_person_answers_at_rank_one(make_engine, query, answer):
    """The Sofia query fails on afc12fa (retrieval.speaker_order off): Ivan's turn spoken to her ranks first."""
    ids = _standup(eng := make_engine())
    hits = eng.retrieve(query, user_id="u", tenant_id="t", top_k=1, now=T0 + timedelta(days=2)).hits
    assert [h.memory_id for h in hits] == [ids[answer]]


def test_a_speaker_label_in_the_text_counts_as_the_speaker(make_engine):
    """A conversation stored without metadata ('Priya: ...'): the label is the speaker (write/correction.speaker_of,
    note headers excluded). Fails on afc12fa: Tom's 'Tom: Priya how was your long weekend? ...' ranked first."""
    from memory_engine.retrieve.speakers import speaker_of
    assert speaker_of({"content": "Priya: We did the coastal trail"}) == "priya"
    assert speaker_of({"content": "Update: the flight moved to 5pm"}) == ""
    assert speaker_of({"content": "Tom: hi", "metadata": {"speaker": "Thomas"}}) == "thomas"
    eng = make_engine()
    ids = [eng.add(text, user_id="u", tenant_id="t", session_id="s1", now=T0 + timedelta(minutes=3 * i)).memory_id
           for i, text in enumerate([
               "Tom: Priya how was your long weekend? did you end up doing the hike you were planning",
               "Priya: We did the coastal trail near Big Sur and camped two nights on the bluffs, my legs are still sore",
               "Tom: Nice! I hiked Half Dome in Yosemite with my brother last spring, Priya you should try it someday"])]
    hits = eng.retrieve("Where did Priya go hiking?", user_id="u", tenant_id="t", top_k=1, now=T0 + timedelta(days=3)).hits
    assert [h.memory_id for h in hits] == [ids[1]]
