"""Stale values beyond plain updates (issue 16, failure class 6): an A -> B -> A flip whose
second A merged into the first (the memory's time is when it was last stated), and a
provisional value followed by the final one, which reads differently. Nothing is archived."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory_engine.retrieve.fusion import Candidate
from memory_engine.retrieve.stale import demote_stale
from memory_engine.write.intents import provisional

T0 = datetime(2026, 2, 1, 9, tzinfo=UTC)


@pytest.mark.parametrize("text,tentative", [
    ("The team offsite is tentatively on May 12, venue still TBD", True), ("公司年会暂定在12月20号", True),
    ("装修预算先按 15 万算，等设计师报价再说", True), ("The offsite is confirmed for May 19", False),
    ("公司年会最后定在12月27号", False),
])
def test_provisional_statements(text, tentative):
    assert provisional(text) is tentative


def test_a_provisional_older_value_needs_less_similarity():
    old = Candidate("old", fused=0.9, similarity=0.8, coverage=1.0)
    new = Candidate("new", fused=0.8, similarity=0.8, coverage=1.0)
    a, b = np.array([1.0, 0.0], dtype=np.float32), np.array([0.6, 0.8], dtype=np.float32)  # cosine 0.6
    args = ([old, new], {"old": a, "new": b}, {"old": 1.0, "new": 2.0}, lambda c: c, 0.7, 0.8, 0.9, None)
    assert demote_stale(*args)[1] == {}
    assert demote_stale(*args, frozenset({"old"}), 0.5)[1] == {"old": "new"}
    assert demote_stale(*args, frozenset({"new"}), 0.5)[1] == {}  # only the older one's wording counts


def test_flip_back_to_a_merged_value_ranks_above_the_middle_one(quiet_engine):
    u = "flip"
    a = quiet_engine.add("坐高铁我喜欢靠窗的座位", user_id=u, session_id="s1", now=T0)
    b = quiet_engine.add("坐高铁我现在喜欢靠过道的座位，方便起身", user_id=u, session_id="s2", now=T0 + timedelta(days=15))
    again = quiet_engine.add("坐高铁我喜欢靠窗的座位", user_id=u, session_id="s3", now=T0 + timedelta(days=40))
    assert again.memory_id == a.memory_id and b.memory_id != a.memory_id
    hits = quiet_engine.retrieve("坐高铁我喜欢哪种座位", user_id=u, now=T0 + timedelta(days=45)).hits
    assert hits[0].memory_id == a.memory_id
    assert quiet_engine.memory(b.memory_id, user_id=u).status.value == "current"  # ranked lower, never archived


def test_final_value_outranks_the_provisional_one(quiet_engine):
    u = "provisional"
    t = quiet_engine.add("The team offsite is tentatively on May 12, venue still TBD", user_id=u, session_id="s1", now=T0)
    f = quiet_engine.add("The team offsite is confirmed for May 19 at the lake house", user_id=u, session_id="s2",
                   now=T0 + timedelta(days=7))
    hits = quiet_engine.retrieve("when is the team offsite?", user_id=u, now=T0 + timedelta(days=10)).hits
    assert hits[0].memory_id == f.memory_id
    assert quiet_engine.memory(t.memory_id, user_id=u).status.value == "current"
