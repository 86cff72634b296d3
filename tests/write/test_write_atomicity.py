"""Failure paths of a write and a read (issue 15): a correction whose supersession fails used to leave
old and new both current; a failed access-count update discarded a successful retrieval; a raw
TimeoutError/OSError from the store escaped ``add``. The store below is the real qdrant-edge store with
one operation made to fail, as a full disk or a timeout would."""

from __future__ import annotations

import pytest

from memory_engine.errors import MemoryEngineError, StoreError
from memory_engine.models import MemoryStatus

pytestmark = pytest.mark.integration


class _Failing:
    """Delegates to the real store; ``fail[op]`` is raised by operation ``op`` while set."""

    def __init__(self, real) -> None:
        self._real = real
        self.fail: dict[str, BaseException] = {}

    def __getattr__(self, name):
        attr = getattr(self._real, name)
        if not callable(attr):
            return attr

        def call(*a, **kw):
            if name in self.fail:
                raise self.fail[name]
            return attr(*a, **kw)

        return call


def _faulty(eng) -> _Failing:
    st = _Failing(eng.store)
    eng.store = st
    return st


def test_a_failed_supersede_drops_the_correction(make_engine):
    eng = make_engine()
    first = eng.add("my city", user_id="u", fact={"key": "city", "value": "Shanghai"})
    st = _faulty(eng)
    st.fail["set_payload"] = StoreError("disk full")
    with pytest.raises(StoreError, match="correction not applied"):
        eng.add("my city", user_id="u", fact={"key": "city", "value": "Beijing"})
    st.fail.clear()
    assert eng.get_fact("city", user_id="u") == "Shanghai"
    recs = eng.list_memories(user_id="u")
    assert [(r.id, r.status) for r in recs] == [(first.memory_id, MemoryStatus.CURRENT)]  # no half-applied pair
    ok = eng.add("my city", user_id="u", fact={"key": "city", "value": "Beijing"})  # and it works once healthy
    assert eng.get_fact("city", user_id="u") == "Beijing" and ok.superseded_ids == (first.memory_id,)


def test_a_failed_access_count_update_keeps_the_hits(make_engine):
    eng = make_engine()
    eng.add("I always order oat milk lattes at the cafe", user_id="u")
    st = _faulty(eng)
    st.fail["set_payload"] = TimeoutError("store timed out")
    res = eng.retrieve("oat milk latte", user_id="u")
    assert not res.degraded and len(res.hits) == 1


@pytest.mark.parametrize("exc", [TimeoutError("timed out"), OSError(28, "No space left on device")])
def test_raw_store_errors_are_wrapped(make_engine, exc):
    eng = make_engine()
    st = _faulty(eng)
    st.fail["upsert"] = exc
    with pytest.raises(MemoryEngineError) as e:
        eng.add("I prefer aisle seats on long flights", user_id="u")
    assert isinstance(e.value, StoreError) and e.value.__cause__ is exc
