"""Citation review defects of issue 13: one verdict per citation in accuracy; kappa explained."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_engine.observability.metrics import citation_accuracy, citation_accuracy_by_reviewer
from memory_engine.observability.records import SpanRecord
from memory_engine.observability.verdicts import record_verdict, reviewer_agreement

T = "ab" * 16


def _retrieval(wh, span: str, ids: list[str]) -> None:
    wh.insert_spans([SpanRecord(T, span, None, "memory.retrieve", 1_000, 2_000, service="memwb",
                                attributes={"memory.retrieved_ids": ids, "memory.user_id": "u"})])  # fmt: skip


def test_two_reviewers_on_one_citation_count_once_with_the_latest_verdict(wh):
    """Before: ana 'correct' + bob 'incorrect' on the same citation gave 1/2 (two verdicts pooled)."""
    _retrieval(wh, "01" * 8, ["m1", "m2"])
    t1, t2 = datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 2, tzinfo=UTC)
    record_verdict(wh, "01" * 8, "m1", "correct", reviewer="ana", at=t1)
    record_verdict(wh, "01" * 8, "m1", "incorrect", reviewer="bob", at=t2)
    record_verdict(wh, "01" * 8, "m2", "correct", reviewer="bob", at=t1)
    acc = citation_accuracy(wh)
    assert (acc.numerator, acc.denominator) == (1, 2)  # m1 -> bob's later 'incorrect', m2 -> 'correct'
    per = citation_accuracy_by_reviewer(wh)
    assert (per["ana"].numerator, per["ana"].denominator) == (1, 1)
    assert (per["bob"].numerator, per["bob"].denominator) == (1, 2)


def test_kappa_undefined_and_zero_are_explained(wh):
    """Before: kappa showed as None or 0 with nothing saying why."""
    _retrieval(wh, "01" * 8, ["m1", "m2", "m3", "m4"])
    for m in ("m1", "m2", "m3"):
        record_verdict(wh, "01" * 8, m, "correct", reviewer="ana")
        record_verdict(wh, "01" * 8, m, "correct", reviewer="bob")
    (ag,) = reviewer_agreement(wh)
    assert ag.kappa is None and ag.observed == 1.0 and ag.expected == 1.0
    assert ag.note.startswith("undefined") and "'correct'" in ag.note

    # chance-level agreement: kappa exactly 0
    for m, a, b in (("m1", "correct", "correct"), ("m2", "correct", "incorrect"),
                    ("m3", "incorrect", "correct"), ("m4", "incorrect", "incorrect")):  # fmt: skip
        record_verdict(wh, "01" * 8, m, a, reviewer="ana")
        record_verdict(wh, "01" * 8, m, b, reviewer="bob")
    (ag,) = reviewer_agreement(wh)
    assert ag.kappa == 0.0 and ag.note.startswith("0: they agree exactly as often as chance")
    assert "4 common citations" in ag.note and "rough estimate" in ag.note
