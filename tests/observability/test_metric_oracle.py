"""Hit rate and write efficacy SQL against a plain-Python reading of the TRACES.md definitions, on a seeded
warehouse with the awkward cases: several answers per retrieval, overlapping and unretrieved citations,
repeated ids, missing lists, answers linked to nothing, rewritten memories, filters and time buckets."""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import UTC, datetime

import pyarrow as pa
import pytest

from memory_engine.observability import metrics as m

pytestmark = pytest.mark.integration
HOUR = 3600 * 10**9
DAY = 24 * HOUR
T0 = 1_750_000_000 * 10**9


@pytest.fixture
def seeded(wh):
    rng = random.Random(7)
    mem = [f"m{i}" for i in range(120)]
    writes, retrievals, answers = [], [], []
    for i in range(300):
        mid = rng.choice(mem) if rng.random() > 0.05 else None  # some ids written twice, some writes without id
        writes.append({"span_id": f"w{i:015d}", "start_ns": T0 + rng.randrange(20 * DAY), "memory_id": mid,
                       "outcome": rng.choice(["stored", "stored", "merged", "rejected"]),
                       "user_id": rng.choice(["u1", "u2"])})  # fmt: skip
    for i in range(400):
        ids = None if rng.random() < 0.05 else [rng.choice(mem) for _ in range(rng.randrange(0, 6))]
        retrievals.append({"span_id": f"r{i:015d}", "start_ns": T0 + rng.randrange(30 * DAY), "retrieved_ids": ids,
                           "user_id": rng.choice(["u1", "u2"])})  # fmt: skip
    for i in range(500):
        r = rng.choice(retrievals)
        rsid = r["span_id"] if rng.random() > 0.1 else rng.choice([None, "x" * 16])
        pool = (r["retrieved_ids"] or []) + [rng.choice(mem)]
        cited = None if rng.random() < 0.05 else [rng.choice(pool) for _ in range(rng.randrange(0, 4))]
        answers.append({"span_id": f"a{i:015d}", "start_ns": r["start_ns"] + 1, "retrieve_span_id": rsid,
                        "cited_ids": cited})  # fmt: skip
    for table, rows in (("writes", writes), ("retrievals", retrievals), ("answers", answers)):
        tbl = pa.Table.from_pylist([{"trace_id": "t" * 32, "end_ns": r["start_ns"] + 1, **r} for r in rows])
        with wh.connection() as con:
            con.register("_rows", tbl)
            con.execute(f"INSERT INTO {table} ({', '.join(tbl.column_names)}) SELECT * FROM _rows")
            con.unregister("_rows")
    return writes, retrievals, answers


def _day(ns: int) -> datetime:
    return datetime.fromtimestamp(ns // DAY * DAY / 1e9, tz=UTC)


def _hit_rate_oracle(retrievals, answers, keep) -> dict[datetime, tuple[int, int, int]]:
    cited: dict[str, set[str]] = defaultdict(set)
    answered = set()
    for a in answers:
        answered.add(a["retrieve_span_id"])
        cited[a["retrieve_span_id"]] |= set(a["cited_ids"] or ())
    out: dict[datetime, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in retrievals:
        if r["span_id"] in answered and keep(r):
            b = out[_day(r["start_ns"])]
            ids = r["retrieved_ids"] or []
            b[0] += len(set(ids) & cited[r["span_id"]])
            b[1] += len(ids)
            b[2] += 1
    return {k: tuple(v) for k, v in sorted(out.items())}


def test_hit_rate_matches_the_definition(wh, seeded):
    _, retrievals, answers = seeded
    assert sum(1 for a in answers if a["retrieve_span_id"] and sum(
        b["retrieve_span_id"] == a["retrieve_span_id"] for b in answers) > 1) > 50  # many multi-answer retrievals
    for filters, keep in ((m.Filters(), lambda r: True), (m.Filters(user_id="u1"), lambda r: r["user_id"] == "u1")):
        want = _hit_rate_oracle(retrievals, answers, keep)
        got = m.metric_timeseries(wh, m.Metric.CITATION_HIT_RATE, m.Bucket.DAY, filters)
        assert {v.bucket: (v.numerator, v.denominator, v.extra["retrievals_with_answer"]) for v in got} == want
        total = m.citation_hit_rate(wh, filters)
        assert (total.numerator, total.denominator) == (sum(v[0] for v in want.values()), sum(v[1] for v in want.values()))


def _efficacy_oracle(writes, retrievals, now_ns, win, keep) -> dict[datetime, tuple[int, int, int]]:
    first: dict[str, int] = {}
    for w in writes:
        if w["memory_id"] is not None and w["outcome"] == "stored" and keep(w):
            first[w["memory_id"]] = min(first.get(w["memory_id"], w["start_ns"]), w["start_ns"])
    out: dict[datetime, list[int]] = defaultdict(lambda: [0, 0, 0])
    for mid, start in first.items():
        b = out[_day(start)]
        if start > now_ns - win:
            b[2] += 1
            continue
        b[1] += 1
        b[0] += any(mid in (r["retrieved_ids"] or ()) and start <= r["start_ns"] <= start + win for r in retrievals)
    return {k: tuple(v) for k, v in sorted(out.items())}


@pytest.mark.parametrize("window_days", [7.0, 2.5])
def test_write_efficacy_matches_the_definition(wh, seeded, window_days):
    writes, retrievals, _ = seeded
    now = T0 + 15 * DAY
    win = int(window_days * DAY)
    for filters, keep in ((m.Filters(), lambda w: True), (m.Filters(user_id="u2"), lambda w: w["user_id"] == "u2")):
        want = _efficacy_oracle(writes, retrievals, now, win, keep)
        got = m.metric_timeseries(wh, m.Metric.WRITE_EFFICACY, m.Bucket.DAY, filters, now=now / 1e9,
                                  window_days=window_days)  # fmt: skip
        assert {v.bucket: (v.numerator, v.denominator, v.extra["not_yet_mature"]) for v in got} == want
        assert 0 < sum(v[0] for v in want.values()) < sum(v[1] for v in want.values())
