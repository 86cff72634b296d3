"""Live stale@k: retrievals that returned a memory an earlier write had superseded."""

from __future__ import annotations

import pytest

from memory_engine.observability import metrics as m
from memory_engine.observability.synthetic import emit_retrieve, emit_write

pytestmark = pytest.mark.integration
DAY_NS = 86_400 * 10**9
T0 = 1_750_000_000 * 10**9


def test_stale_served_counts_retrievals_after_the_superseding_write(wh, tracer):
    emit_write(tracer, at_ns=T0, user_id="u1", memory_id="old", content="lives in Berlin")
    # before the correction, returning "old" is not stale
    emit_retrieve(tracer, at_ns=T0 + DAY_NS, user_id="u1", ids=["old"])
    emit_write(tracer, at_ns=T0 + 2 * DAY_NS, user_id="u1", memory_id="new", content="lives in Munich",
               superseded_ids=["old"])
    emit_retrieve(tracer, at_ns=T0 + 3 * DAY_NS, user_id="u1", ids=["new", "old"])  # stale at rank 2
    emit_retrieve(tracer, at_ns=T0 + 3 * DAY_NS + 10**9, user_id="u1", ids=["new"])
    emit_retrieve(tracer, at_ns=T0 + 4 * DAY_NS, user_id="u1", ids=["old", "x"])  # stale at rank 1
    v = m.stale_served(wh)
    assert (v.numerator, v.denominator) == (2, 4) and v.value == 0.5
    assert v.extra["mean_first_rank"] == 1.5
    days = m.stale_served_series(wh, bucket="day")
    assert [(d.numerator, d.denominator) for d in days] == [(0, 1), (1, 2), (1, 1)]
    assert m.stale_served(wh, m.Filters(user_id="nobody")).value is None
