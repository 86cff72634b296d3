"""Defects found in the session-11 fresh-user trial of main (s11h8), each reproduced on the real engine."""

from datetime import timedelta

import pytest


@pytest.mark.integration
@pytest.mark.parametrize("new", [
    "I wish I had moved to Beijing",
    "If I moved to Beijing I would rent near the office",
    "要是搬到了杭州，我就天天去西湖",
    "如果我搬到深圳的话，房租会贵很多",
])
def test_a_hypothetical_move_links_no_replacement(engine, t0, new):
    """A move the user only imagines ('I wish I had moved to Beijing') is no change of where they live: on 5c702b8
    it linked 'I live in Chengdu' as replaced and 'where do I live now?' answered Beijing first."""
    old = "我住在成都" if any("\u4e00" <= c <= "\u9fff" for c in new) else "I live in Chengdu"
    a = engine.add(old, user_id="u", session_id="s1", now=t0).memory_id
    r = engine.add(new, user_id="u", session_id="s2", now=t0 + timedelta(days=40))
    assert r.superseded_ids == ()
    assert [e for e in r.evidence if e.get("rule") in ("reported_change", "started_state")] == []
    assert engine.memory(a, user_id="u").status.value == "current"
    q = "我现在住在哪" if old.startswith("我") else "where do I live now?"
    hits = engine.retrieve(q, user_id="u", now=t0 + timedelta(days=42), top_k=1).hits
    assert [h.memory_id for h in hits] == [a]


@pytest.mark.integration
@pytest.mark.parametrize("fact_text,key,value,said", [
    ("I work at Acme Corp", "work.company", "Acme Corp",
     "Correction: the meeting is not at Acme Corp, it's at the café"),
    ("我住在成都", "home.city", "成都", "我已经不住在成都的酒店了，换到了另一家"),
])
def test_a_negated_value_of_another_thing_retires_no_fact(engine, fact_text, key, value, said):
    """The value negated as the place of a meeting or as a hotel's city is no correction of the user's employer or
    home: on 5c702b8 both statements retired the fact (get_fact None), a fact the user never named."""
    fid = engine.add(fact_text, user_id="u", fact={"key": key, "value": value}).memory_id
    r = engine.add(said, user_id="u")
    assert fid not in r.superseded_ids
    assert engine.get_fact(key, user_id="u") == value
    assert engine.memory(fid, user_id="u").status.value == "current"


@pytest.mark.integration
@pytest.mark.parametrize("fact_text,key,value,said", [
    ("I work at Acme Corp", "work.company", "Acme Corp", "Correction: I'm not at Acme Corp anymore, I joined Initech"),
    ("我住在成都", "home.city", "成都", "不对，我已经搬到重庆了，不在成都了"),
])
def test_the_users_own_negated_value_still_retires_it(engine, fact_text, key, value, said):
    fid = engine.add(fact_text, user_id="u", fact={"key": key, "value": value}).memory_id
    r = engine.add(said, user_id="u")
    assert r.superseded_ids == (fid,)
    assert engine.get_fact(key, user_id="u") is None


@pytest.mark.integration
def test_undo_of_a_fact_correction_keeps_one_current_value_per_key(engine):
    """Undo after the user already wrote the new value as a fact: on 5c702b8 the corrected fact came back current
    beside the newer one (two current values of home.city). The restored fact is now superseded by the newer
    fact of its key (as a fact write would have left it), and stays in the history."""
    old = engine.add("我住在成都", user_id="u", fact={"key": "home.city", "value": "成都"}).memory_id
    assert engine.add("不对，我已经不在成都了", user_id="u").superseded_ids == (old,)
    new = engine.add("我现在住在重庆", user_id="u", fact={"key": "home.city", "value": "重庆"}).memory_id
    assert engine.undo_forget(user_id="u") == [old]
    assert engine.get_fact("home.city", user_id="u") == "重庆"
    states = {m.id: (m.status.value, m.superseded_by) for m in engine.fact_history("home.city", user_id="u")}
    assert states == {old: ("deprecated", new), new: ("current", None)}


@pytest.mark.integration
def test_undo_of_a_fact_correction_without_a_newer_value_restores_it(engine):
    old = engine.add("我住在成都", user_id="u", fact={"key": "home.city", "value": "成都"}).memory_id
    engine.add("不对，我已经不在成都了", user_id="u")
    assert engine.get_fact("home.city", user_id="u") is None
    assert engine.undo_forget(user_id="u") == [old]
    assert engine.get_fact("home.city", user_id="u") == "成都"


@pytest.mark.integration
@pytest.mark.parametrize("said", ["For this one order, don't use SF Express, use JD instead",
                                  "这次别用顺丰了，用京东吧，不用顺丰"])
def test_a_one_off_instruction_keeps_the_default_fact(engine, said):
    """'For this one order' changes one order, not the default courier: on 5c702b8 it retired shipping.courier."""
    fid = engine.add("My default courier is SF Express (顺丰)", user_id="u",
                     fact={"key": "shipping.courier", "value": "SF Express 顺丰"}).memory_id
    r = engine.add(said, user_id="u")
    assert fid not in r.superseded_ids
    assert engine.get_fact("shipping.courier", user_id="u") == "SF Express 顺丰"


@pytest.mark.integration
def test_one_off_words_off_lets_the_instruction_retire_the_fact(make_engine):
    eng = make_engine({"write.fact_correction_one_off": []})
    fid = eng.add("My default courier is SF Express", user_id="u",
                  fact={"key": "shipping.courier", "value": "SF Express"}).memory_id
    r = eng.add("For this one order, don't use SF Express, use JD instead", user_id="u")
    assert r.superseded_ids == (fid,)
