"""Trace warehouse benchmark: OTLP JSON ingest throughput and dashboard metric times.

Usage::

    PYTHONPATH=. python benchmarks/ingest.py [--spans 1000000] [--ingest-spans 200000] [--repeats 3] [--workdir DIR]

1. Writes an OTLP/JSON-lines file (collector file-exporter layout, 512 spans
   per line) of engine-shaped spans: per user and hour, writes, retrievals
   (5 hits each, with contents) and answers citing 1-2 hits.
2. Ingests ``--ingest-spans`` of them into a fresh warehouse ``--repeats``
   times and prints spans/s of each run, best and median (target: at least
   50,000 spans/s), with the load average: other processes share the CPUs.
3. Ingests ``--spans`` spans in total, adds ``--verdicts`` reviewer verdicts,
   and times each dashboard metric and each day/hour time series over the
   whole warehouse ``--repeats`` times (target: under 1 s each).

Figures are printed, not asserted: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory_engine.observability import metrics as m  # noqa: E402
from memory_engine.observability.ingest import ingest_file  # noqa: E402
from memory_engine.observability.warehouse import Warehouse  # noqa: E402

NS = 1_000_000_000


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        v: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}
    elif isinstance(value, float):
        v = {"doubleValue": value}
    elif isinstance(value, list):
        v = {"arrayValue": {"values": [_kv("", x)["value"] for x in value]}}
    else:
        v = {"stringValue": value}
    return {"key": key, "value": v}


def generate(path: Path, n_spans: int, *, seed: int = 0, users: int = 200, start: datetime | None = None) -> int:
    """Write about ``n_spans`` engine-shaped spans as OTLP JSON lines; returns the count written."""
    rng = random.Random(seed)
    t0 = int((start or datetime(2025, 1, 1, tzinfo=UTC)).timestamp() * NS)
    resource = {"attributes": [_kv("service.name", "memwb"), _kv("telemetry.sdk.language", "python")]}
    written = 0
    seq = 0
    mem_pool: dict[int, list[str]] = {u: [] for u in range(users)}
    batch: list[dict[str, Any]] = []
    with path.open("wb") as f:

        def flush() -> None:
            doc = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "memwb"}, "spans": batch}]}]}
            f.write(orjson.dumps(doc) + b"\n")
            batch.clear()

        while written < n_spans:
            seq += 1
            u = rng.randrange(users)
            at = t0 + seq * 2 * NS  # one operation every 2 s of simulated time
            trace = rng.getrandbits(128).to_bytes(16, "big").hex()
            common = [
                _kv("memory.tenant_id", f"t{u % 3}"),
                _kv("memory.user_id", f"u{u}"),
                _kv("memory.session_id", f"u{u}-s{seq // 500}"),
            ]
            r = rng.random()
            if r < 0.35 or not mem_pool[u]:
                mid = f"mem-{seq:09d}"
                mem_pool[u].append(mid)
                if len(mem_pool[u]) > 50:
                    mem_pool[u].pop(0)
                attrs = common + [
                    _kv("memory.id", mid), _kv("memory.type", "semantic"), _kv("memory.write_outcome", "stored"),
                    _kv("memory.importance", round(rng.uniform(0.6, 0.95), 2)),
                    _kv("memory.config_hash", "cfg000000000"), _kv("memory.embedding_version", "e5:1"),
                    _kv("memory.content", f"user {u} prefers item {seq}"),
                ]  # fmt: skip
                name, dur = "memory.write", 4 * 1_000_000
                sid = rng.getrandbits(64).to_bytes(8, "big").hex()
                batch.append(_span(trace, sid, name, at, dur, attrs))
                written += 1
            else:
                hits = rng.sample(mem_pool[u], min(5, len(mem_pool[u])))
                degraded = rng.random() < 0.02
                if degraded:
                    hits = []
                attrs = common + [
                    _kv("memory.query", "what do I like?"), _kv("memory.top_k", 5),
                    _kv("memory.retrieved_ids", hits),
                    _kv("memory.retrieved_scores", [round(0.9 - 0.1 * i, 3) for i in range(len(hits))]),
                    _kv("memory.retrieved_sources", ["vector+keyword"] * len(hits)),
                    _kv("memory.retrieved_contents", [f"content of {h}" for h in hits]),
                    _kv("memory.retrieved_count", len(hits)), _kv("memory.degraded", degraded),
                    _kv("memory.config_hash", "cfg000000000"), _kv("memory.embedding_version", "e5:1"),
                ]  # fmt: skip
                rsid = rng.getrandbits(64).to_bytes(8, "big").hex()
                dur = int(rng.lognormvariate(2.5, 0.5) * 1_000_000)
                batch.append(_span(trace, rsid, "memory.retrieve", at, dur, attrs))
                written += 1
                if hits:
                    cited = hits[: rng.randint(1, 2)]
                    aattrs = common + [
                        _kv("memory.cited_ids", cited), _kv("memory.retrieve_span_id", rsid),
                        _kv("memory.answer_text", " ".join(f"[{c}]" for c in cited)),
                    ]  # fmt: skip
                    asid = rng.getrandbits(64).to_bytes(8, "big").hex()
                    batch.append(_span(trace, asid, "memory.answer", at + dur, 300 * 1_000_000, aattrs))
                    written += 1
            if len(batch) >= 512:
                flush()
        if batch:
            flush()
    return written


def _span(trace: str, sid: str, name: str, at: int, dur: int, attrs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "traceId": trace, "spanId": sid, "parentSpanId": "", "name": name, "kind": 1,
        "startTimeUnixNano": str(at), "endTimeUnixNano": str(at + dur), "attributes": attrs, "status": {},
    }  # fmt: skip


def _stats(xs: list[float]) -> tuple[float, float]:
    return min(xs), statistics.median(xs)


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


def _time(label: str, fn: Callable[[], Any], repeats: int) -> float:
    times = []
    out = None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    best, med = _stats(times)
    shown = f"{len(out)} buckets" if isinstance(out, list) else getattr(out, "label", out)
    print(f"  {label:<30} best {best * 1000:7.1f} ms  median {med * 1000:7.1f} ms  ({_load()})  {shown}")
    return best


def _ingest_once(path: Path, work: Path, *, fast: bool = True) -> tuple[float, float, Any]:
    """Ingest ``path`` into a fresh warehouse: (wall seconds, CPU seconds of this process, summary)."""
    shutil.rmtree(work, ignore_errors=True)
    wh = Warehouse(work / "warehouse.duckdb")
    t, c = time.perf_counter(), time.process_time()
    s = ingest_file(wh, path, fast=fast)
    dt, dc = time.perf_counter() - t, time.process_time() - c
    wh.close()
    return dt, dc, s


def add_verdicts(wh: Warehouse, n: int, *, seed: int = 0) -> int:
    """Reviewer verdicts on ``n`` sampled citations (two reviewers on a fifth of them), so that citation
    accuracy and reviewer agreement are timed on realistic data; returns the rows added."""
    wh.execute(
        f"""
        INSERT OR IGNORE INTO verdicts
        WITH c AS (
            SELECT retrieve_span_id, unnest(cited_ids) AS memory_id FROM answers
            WHERE retrieve_span_id IS NOT NULL USING SAMPLE {int(n)} ROWS (reservoir, {int(seed)})
        ), r AS (SELECT * FROM (VALUES ('alice'), ('bob')) v(reviewer))
        SELECT c.retrieve_span_id, c.memory_id, r.reviewer,
               CASE WHEN hash(c.memory_id, r.reviewer) % 10 < 7 THEN 'correct'
                    WHEN hash(c.memory_id, r.reviewer) % 10 < 9 THEN 'incorrect' ELSE 'unsure' END,
               NULL, TIMESTAMP '2025-06-01'
        FROM c JOIN r ON r.reviewer = 'alice' OR hash(c.retrieve_span_id) % 5 = 0
        """
    )
    row = wh.fetchone("SELECT count(*) FROM verdicts")
    return int(row[0]) if row else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=1_000_000, help="Total spans in the warehouse for the metric timings.")
    ap.add_argument("--ingest-spans", type=int, default=200_000, help="Spans in the file whose ingest rate is measured.")
    ap.add_argument("--repeats", type=int, default=3,
                    help="Times each ingest and each metric is measured (best and median are printed).")
    ap.add_argument("--verdicts", type=int, default=20_000, help="Citations given reviewer verdicts before timing.")
    ap.add_argument("--workdir", default=None, help="Folder for the generated files and warehouse (default: a temp dir).")
    ap.add_argument("--compare-reference", action="store_true",
                    help="Also time the Python reference decoder (fast=False) on the same file, once.")
    args = ap.parse_args()
    print(f"{_load()} at start on {os.cpu_count()} CPUs")
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="memwb-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        f1 = work / "bench_a.jsonl"
        t = time.perf_counter()
        n1 = generate(f1, args.ingest_spans, seed=1)
        print(f"generated {n1} spans ({f1.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t:.1f} s")
        rates, cpu_rates = [], []
        for i in range(args.repeats):
            dt, dc, s = _ingest_once(f1, work / "fresh")
            rates.append(s.ingested / dt)
            cpu_rates.append(s.ingested / dc)
            print(f"  run {i + 1}: {s.ingested} spans in {dt:.2f} s = {s.ingested / dt:,.0f} spans/s "
                  f"({s.ingested / dc:,.0f} per CPU-second of this process; {_load()})")  # fmt: skip
        best, med = max(rates), statistics.median(rates)
        print(f"OTLP JSON ingest: best {best:,.0f} spans/s, median {med:,.0f} spans/s (target >= 50,000)")
        if args.compare_reference:
            dt, _, sr = _ingest_once(f1, work / "ref", fast=False)
            print(f"reference decoder: {sr.ingested} spans in {dt:.2f} s = {sr.ingested / dt:,.0f} spans/s")
        wh_dir = work / "ws"
        shutil.rmtree(wh_dir, ignore_errors=True)
        wh = Warehouse.open(wh_dir)
        ingest_file(wh, f1)
        t = time.perf_counter()
        s2 = ingest_file(wh, f1)
        dt2 = time.perf_counter() - t
        print(f"re-ingest (all duplicates): {s2.duplicate} spans in {dt2:.2f} s = {s2.received / dt2:,.0f} spans/s")
        rest = args.spans - n1
        if rest > 0:
            f2 = work / "bench_b.jsonl"
            start = datetime(2025, 3, 1, tzinfo=UTC)
            n2 = generate(f2, rest, seed=2, start=start)
            t = time.perf_counter()
            s3 = ingest_file(wh, f2)
            dt3 = time.perf_counter() - t
            print(f"second file: {s3.ingested} spans in {dt3:.2f} s = {s3.ingested / dt3:,.0f} spans/s (n={n2})")
        nv = add_verdicts(wh, args.verdicts)
        total = wh.count_spans()
        print(f"metric timings over {total:,} spans and {nv:,} verdicts (target: under 1 s each):")
        now = datetime(2025, 12, 31, tzinfo=UTC)
        f = m.Filters()
        r = args.repeats
        _time("citation_hit_rate", lambda: m.citation_hit_rate(wh, f), r)
        _time("citation_accuracy (+kappa)", lambda: m.citation_accuracy(wh, f), r)
        _time("write_efficacy (7 day)", lambda: m.write_efficacy(wh, f, now=now), r)
        for p in (50, 95, 99):
            _time(f"retrieval_latency p{p}", lambda p=p: m.retrieval_latency(wh, f, percentile=p), r)
        _time("degraded_share", lambda: m.degraded_share(wh, f), r)
        for metric in m.Metric:
            for bucket in m.Bucket:
                _time(f"{metric.value} by {bucket.value}",
                      lambda metric=metric, bucket=bucket: m.metric_timeseries(wh, metric, bucket, f, now=now), r)  # fmt: skip
        _time("hit rate, one user", lambda: m.citation_hit_rate(wh, m.Filters(user_id="u7")), r)
        _time("efficacy, one user", lambda: m.write_efficacy(wh, m.Filters(user_id="u7"), now=now), r)
        wh.close()
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
