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
