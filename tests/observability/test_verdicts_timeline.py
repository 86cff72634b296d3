"""Reviewer verdicts (upsert, Wilson, kappa, stratified sampler)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from memory_engine.errors import ValidationError
from memory_engine.observability import metrics, verdicts
from memory_engine.observability.synthetic import emit_answer, emit_retrieve, emit_workload, emit_write

DAY_NS = 86_400 * 10**9
T0 = 1_750_000_000 * 10**9


@pytest.mark.unit
@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (3, 10), (31, 50), (499, 500), (0, 0)])
def test_wilson_matches_statsmodels(k, n):
    got = metrics.wilson_interval(k, n)
    if n == 0:
        assert got is None
        return
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert got == pytest.approx((lo, hi), abs=1e-9)


@pytest.mark.unit
def test_cohen_kappa_matches_sklearn():
    a = ["correct", "correct", "incorrect", "unsure", "correct", "incorrect", "correct"]
    b = ["correct", "incorrect", "incorrect", "unsure", "correct", "correct", "correct"]
    assert verdicts.cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    assert verdicts.cohen_kappa([], []) is None
    assert verdicts.cohen_kappa(["correct"] * 3, ["correct"] * 3) is None  # p_e = 1: undefined


@pytest.fixture
def cited(wh, tracer):
    emit_write(tracer, at_ns=T0, user_id="u1", memory_id="m1", importance=0.8, content="likes tea")
    emit_write(tracer, at_ns=T0 + 10**9, user_id="u1", memory_id="m2", content="likes coffee now",
               superseded_ids=["m1"])  # fmt: skip
    r1 = emit_retrieve(tracer, at_ns=T0 + DAY_NS, user_id="u1", ids=["m1", "m2"], contents=["likes tea", "likes coffee now"],
                       sources=["vector", "vector+keyword"], scores=[0.9, 0.7], query="drink?")  # fmt: skip
    a1 = emit_answer(tracer, at_ns=T0 + DAY_NS + 10**8, user_id="u1", retrieve_span_id=r1, cited_ids=["m1", "m2"],
                     answer_text="You like tea [mem-m1] and coffee [mem-m2].")  # fmt: skip
    r2 = emit_retrieve(tracer, at_ns=T0 + 2 * DAY_NS, user_id="u1", ids=["m2"], query="coffee?")
    return {"r1": r1, "a1": a1, "r2": r2}


@pytest.mark.integration
def test_verdicts_upsert_accuracy_and_agreement(wh, cited):
    r1 = cited["r1"]
    at = datetime(2025, 7, 1, tzinfo=UTC)
    verdicts.record_verdict(wh, r1, "m1", "incorrect", reviewer="ana", at=at)
    verdicts.record_verdict(wh, r1, "m1", "correct", reviewer="ana", note="re-checked", at=at)  # re-judge: update
    verdicts.record_verdict(wh, r1, "m2", "correct", reviewer="ana", at=at)
    later = at + timedelta(days=1)
    verdicts.record_verdict(wh, r1, "m1", "correct", reviewer="bo", at=later)
    verdicts.record_verdict(wh, r1, "m2", "unsure", reviewer="bo", at=later)
    assert wh.fetchone("SELECT count(*) FROM verdicts")[0] == 4
    acc = metrics.citation_accuracy(wh)
    # one verdict per citation, the latest: m1 -> bo 'correct', m2 -> bo 'unsure' (not 3/3 pooled over reviewers)
    assert (acc.numerator, acc.denominator, acc.extra["unsure"]) == (1, 1, 1)
    assert acc.low == pytest.approx(proportion_confint(1, 1, method="wilson")[0])
    (agr,) = acc.extra["agreement"]
    assert (agr.reviewer_a, agr.reviewer_b, agr.n, agr.observed) == ("ana", "bo", 2, 0.5)
    assert agr.kappa == pytest.approx(cohen_kappa_score(["correct", "correct"], ["correct", "unsure"]))
    by = metrics.citation_accuracy_by_reviewer(wh)
    assert by["bo"].denominator == 1 and by["ana"].value == 1.0
    with pytest.raises(ValidationError, match="valid: correct"):
        verdicts.record_verdict(wh, r1, "m1", "great", reviewer="ana")
    with pytest.raises(ValidationError) as e:
        verdicts.record_verdict(wh, r1, "m9", "correct", reviewer="ana")
    assert e.value.field == "memory_id"


@pytest.mark.integration
@pytest.mark.slow  # measured 5-15 s on 2 shared cores; still runs in make test
def test_sampler_is_seeded_stratified_and_skips_reviewed(wh, tracer):
    emit_workload(tracer, start_ns=T0, days=4, users=3, seed=11)
    all_c = verdicts.sample_citations(wh, 10_000, seed=0)
    strata = {(c.user_id, c.day) for c in all_c}
    assert len(strata) == 12 and len({(c.retrieve_span_id, c.memory_id) for c in all_c}) == len(all_c)
    s1 = verdicts.sample_citations(wh, 12, seed=7)
    assert s1 == verdicts.sample_citations(wh, 12, seed=7)
    assert s1 != verdicts.sample_citations(wh, 12, seed=8)
    assert {(c.user_id, c.day) for c in s1} == strata  # one per user-day before any second
    assert all(c.content and c.rank for c in s1)
    verdicts.record_verdict(wh, s1[0].retrieve_span_id, s1[0].memory_id, "correct", reviewer="ana")
    rest = verdicts.sample_citations(wh, 10_000, seed=0)
    assert len(rest) == len(all_c) - 1
    assert len(verdicts.sample_citations(wh, 10_000, seed=0, reviewer="bo")) == len(all_c)  # bo has judged nothing


@pytest.mark.integration
def test_record_verdicts_stores_a_batch_in_one_go_and_is_all_or_nothing(wh, cited):
    r1, r2 = cited["r1"], cited["r2"]
    at = datetime(2025, 7, 1, tzinfo=UTC)
    n = verdicts.record_verdicts(wh, [(r1, "m1", "correct", at), (r1, "m2", "incorrect", at), (r2, "m2", "unsure", None)],
                                 reviewer="labels", note="from labels")  # fmt: skip
    assert n == 3
    rows = wh.fetchall("SELECT retrieve_span_id, memory_id, verdict, note FROM verdicts WHERE reviewer = 'labels' "
                       "ORDER BY retrieve_span_id = ?, memory_id", [r2])  # fmt: skip
    assert rows == [(r1, "m1", "correct", "from labels"), (r1, "m2", "incorrect", "from labels"),
                    (r2, "m2", "unsure", "from labels")]  # fmt: skip
    # one bad item (m1 was not retrieved by r2) -> nothing of the batch is stored, the field is named
    with pytest.raises(ValidationError) as e:
        verdicts.record_verdicts(wh, [(r1, "m1", "incorrect", at), (r2, "m1", "correct", at)], reviewer="labels")
    assert e.value.field == "memory_id"
    assert wh.fetchone("SELECT verdict FROM verdicts WHERE reviewer = 'labels' AND memory_id = 'm1'")[0] == "correct"
    with pytest.raises(ValidationError) as e:
        verdicts.record_verdicts(wh, [("nope", "m1", "correct", at)], reviewer="labels")
    assert e.value.field == "retrieve_span_id"
    assert verdicts.record_verdicts(wh, [], reviewer="labels") == 0
