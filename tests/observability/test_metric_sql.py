"""Engine-shaped spans -> real exporter -> warehouse -> metrics, against hand-computed values."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_engine.errors import ValidationError
from memory_engine.observability import metrics as m
from memory_engine.observability.synthetic import emit_answer, emit_retrieve, emit_write

DAY_NS = 86_400 * 10**9
T0 = 1_750_000_000 * 10**9  # fixed origin (2025-06-15T15:06:40Z): no wall clock in tests

pytestmark = pytest.mark.integration
HOUR_NS = 3600 * 10**9


def _sec(ns: int) -> float:
    return ns / 1e9


@pytest.fixture
def fixture_spans(wh, tracer):
    """u1 writes m1, m2 (+ one rejected), u2 writes m3; four retrievals, two answered."""
    emit_write(tracer, at_ns=T0, user_id="u1", memory_id="m1", content="likes tea", config_hash="cfgA")
    emit_write(tracer, at_ns=T0 + HOUR_NS, user_id="u1", memory_id="m2", content="lives in Lyon", config_hash="cfgA")
    emit_write(tracer, at_ns=T0 + 2 * HOUR_NS, user_id="u1", memory_id=None, outcome="rejected",
               reject_reason="chit_chat", importance=0.1)  # fmt: skip
    emit_write(tracer, at_ns=T0 + DAY_NS, user_id="u2", memory_id="m3", tenant_id="t2", config_hash="cfgB")
    r1 = emit_retrieve(tracer, at_ns=T0 + 2 * DAY_NS, user_id="u1", ids=["m1", "m2", "mX"], latency_ms=10,
                       config_hash="cfgA")  # fmt: skip
    emit_answer(tracer, at_ns=T0 + 2 * DAY_NS + 10**8, user_id="u1", retrieve_span_id=r1, cited_ids=["m1"])
    r2 = emit_retrieve(tracer, at_ns=T0 + 3 * DAY_NS, user_id="u1", ids=["m2", "m1"], latency_ms=20, config_hash="cfgA")
    emit_answer(tracer, at_ns=T0 + 3 * DAY_NS + 10**8, user_id="u1", retrieve_span_id=r2, cited_ids=["m2", "m1"])
    emit_retrieve(tracer, at_ns=T0 + 9 * DAY_NS, user_id="u2", ids=["m3"], latency_ms=30, tenant_id="t2",
                  config_hash="cfgB")  # fmt: skip
    emit_retrieve(tracer, at_ns=T0 + 3 * DAY_NS + HOUR_NS, user_id="u2", ids=[], latency_ms=40, degraded=True,
                  tenant_id="t2", config_hash="cfgB", error="store down")  # fmt: skip
    return {"r1": r1, "r2": r2}


def test_exporter_fills_raw_and_derived_tables(wh, fixture_spans):
    assert wh.count_spans() == 10
    assert wh.fetchone("SELECT count(*) FROM retrievals")[0] == 4
    assert wh.fetchone("SELECT count(*) FROM writes")[0] == 4
    assert wh.fetchone("SELECT count(*) FROM answers")[0] == 2
    row = wh.fetch_dicts("SELECT * FROM retrievals WHERE span_id = ?", [fixture_spans["r1"]])[0]
    assert row["retrieved_ids"] == ["m1", "m2", "mX"]
    assert row["latency_ms"] == pytest.approx(10.0)
    assert row["user_id"] == "u1" and row["config_hash"] == "cfgA" and row["service"] == "memwb"
    err = wh.fetch_dicts("SELECT status_code, events FROM spans WHERE name = 'memory.retrieve' AND status_code = 'ERROR'")
    assert len(err) == 1 and "exception" in err[0]["events"]


def test_citation_hit_rate(wh, fixture_spans):
    v = m.citation_hit_rate(wh)
    assert (v.numerator, v.denominator) == (3, 5)
    assert v.value == pytest.approx(0.6)
    assert v.label == "0.60 (3/5)"
    assert v.extra["retrievals_with_answer"] == 2


def test_latency_percentiles_and_degraded_share(wh, fixture_spans):
    assert m.retrieval_latency(wh, percentile=50).value == pytest.approx(25.0)
    assert m.retrieval_latency(wh, percentile=95).value == pytest.approx(38.5)
    assert m.retrieval_latency(wh, percentile=99).value == pytest.approx(39.7)
    assert m.retrieval_latency(wh).denominator == 4
    d = m.degraded_share(wh)
    assert (d.numerator, d.denominator, d.value) == (1, 4, 0.25)


def test_write_efficacy_maturity_rule(wh, fixture_spans):
    # now = T0 + 10 d: all three stored writes are >= 7 days old; m3 was only retrieved 8 days after its write
    v = m.write_efficacy(wh, now=_sec(T0 + 10 * DAY_NS))
    assert (v.numerator, v.denominator) == (2, 3)
    assert v.extra["not_yet_mature"] == 0
    # now = T0 + 7.5 d: m3 (written T0 + 1 d) is not yet mature and is left out
    v = m.write_efficacy(wh, now=_sec(T0 + 7 * DAY_NS + DAY_NS // 2))
    assert (v.numerator, v.denominator) == (2, 2)
    assert v.extra["not_yet_mature"] == 1
    # now = T0 + 1 d: nothing mature -> no data, never 0
    v = m.write_efficacy(wh, now=_sec(T0 + DAY_NS))
    assert v.value is None and v.label == "no data" and v.extra["not_yet_mature"] == 3


def test_empty_window_is_no_data(wh, fixture_spans):
    f = m.Filters(since=_sec(T0 + 100 * DAY_NS))
    for v in (m.citation_hit_rate(wh, f), m.degraded_share(wh, f), m.retrieval_latency(wh, f),
              m.citation_accuracy(wh, f), m.write_efficacy(wh, f, now=_sec(T0 + 200 * DAY_NS))):  # fmt: skip
        assert v.value is None
        assert v.denominator == 0
        assert v.label == "no data"


def test_filters(wh, fixture_spans):
    u2 = m.Filters(user_id="u2")
    assert m.citation_hit_rate(wh, u2).value is None
    assert m.degraded_share(wh, u2).value == pytest.approx(0.5)
    assert m.degraded_share(wh, m.Filters(tenant_id="t2")).denominator == 2
    assert m.citation_hit_rate(wh, m.Filters(config_hash="cfgA")).value == pytest.approx(0.6)
    assert m.retrieval_latency(wh, m.Filters(service="other")).value is None
    until = datetime.fromtimestamp(_sec(T0 + 3 * DAY_NS), tz=UTC)  # half-open: r2 at exactly T0+3d is out
    v = m.citation_hit_rate(wh, m.Filters(until=until))
    assert (v.numerator, v.denominator) == (1, 3)


def test_timeseries_by_day_and_hour(wh, fixture_spans):
    days = m.metric_timeseries(wh, m.Metric.CITATION_HIT_RATE, m.Bucket.DAY)
    assert [(x.numerator, x.denominator) for x in days] == [(1, 3), (2, 2)]
    assert days[0].bucket < days[1].bucket and days[0].bucket.tzinfo is UTC
    hours = m.metric_timeseries(wh, "latency_p50", "hour")
    assert sum(x.denominator for x in hours) == 4
    eff = m.metric_timeseries(wh, m.Metric.WRITE_EFFICACY, m.Bucket.DAY, now=_sec(T0 + 10 * DAY_NS))
    assert [(x.numerator, x.denominator) for x in eff] == [(2, 2), (0, 1)]
    with pytest.raises(ValidationError, match="valid: "):
        m.metric_timeseries(wh, "nope")
    with pytest.raises(ValidationError, match="now"):
        m.metric_timeseries(wh, m.Metric.WRITE_EFFICACY)


def test_dashboard_has_every_metric(wh, fixture_spans):
    d = m.dashboard(wh, now=_sec(T0 + 10 * DAY_NS))
    assert set(d) == {"citation_hit_rate", "citation_accuracy", "write_efficacy_7d", "degraded_share",
                      "retrieval_latency_p50", "retrieval_latency_p95", "retrieval_latency_p99"}  # fmt: skip
    assert d["citation_accuracy"].value is None  # no verdicts yet
