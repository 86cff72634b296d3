"""Fixtures of the write-path tests."""

from __future__ import annotations

from datetime import timedelta

import pytest


@pytest.fixture
def forget_scene(engine, t0):
    """``forget_scene(memories, ask, target, ask_at=..., session_id=None) -> (ids, result)``: writes
    ``memories`` one minute apart from ``t0``, then the forget request ``ask`` at ``t0 + ask_at``
    (default: a minute after the last memory), and checks it archived exactly ``memories[target]``
    while every other memory stays current. The forget tests' one way of building that scene."""

    def _scene(memories, ask, target, ask_at=None, session_id=None):
        ids = [engine.add(m, user_id="u", session_id=session_id, now=t0 + timedelta(minutes=i)).memory_id
               for i, m in enumerate(memories)]
        at = t0 + (ask_at if ask_at is not None else timedelta(minutes=len(memories)))
        r = engine.add(ask, user_id="u", session_id=session_id, now=at)
        assert r.outcome == "forgotten" and r.superseded_ids == (ids[target],), (ask, r)
        for i, mid in enumerate(ids):
            if i != target:
                assert engine.memory(mid, user_id="u").status.value == "current", (memories[i], r)
        return ids, r

    return _scene


@pytest.fixture
def forget_next_day(engine, t0):
    """``forget_next_day(memory, ask, user="u") -> (write, result)``: writes ``memory`` in session s1 at ``t0``,
    then the forget request ``ask`` in session s2 a day later (the partial-forget tests' one scene)."""

    def _forget(memory, ask, user="u"):
        w = engine.add(memory, user_id=user, session_id="s1", now=t0)
        r = engine.add(ask, user_id=user, session_id="s2", now=t0 + timedelta(days=1))
        return w, r

    return _forget
