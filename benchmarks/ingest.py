"""Trace warehouse benchmark: OTLP JSON ingest throughput and dashboard metric times.

Usage::

    PYTHONPATH=. python benchmarks/ingest.py [--spans 1000000] [--ingest-spans 200000] [--workdir DIR]

1. Writes an OTLP/JSON-lines file (collector file-exporter layout, 512 spans
   per line) of engine-shaped spans: per user and hour, writes, retrievals
   (5 hits each, with contents) and answers citing 1-2 hits.
2. Ingests ``--ingest-spans`` of them into a fresh warehouse and prints
   spans/s (target: at least 50,000 spans/s).
3. Ingests ``--spans`` spans in total and times each dashboard metric over
   the whole warehouse, plus a day time series (target: under 1 s each).

Figures are printed, not asserted: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
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


def _time(label: str, fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    shown = out if not isinstance(out, list) else f"{len(out)} buckets"
    print(f"  {label:<32} {dt * 1000:8.1f} ms   {shown}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=1_000_000, help="Total spans in the warehouse for the metric timings.")
    ap.add_argument("--ingest-spans", type=int, default=200_000, help="Spans in the file whose ingest rate is measured.")
    ap.add_argument("--workdir", default=None, help="Folder for the generated files and warehouse (default: a temp dir).")
    ap.add_argument("--compare-reference", action="store_true",
                    help="Also time the Python reference decoder (fast=False) on the same file, in a fresh warehouse.")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="memwb-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        f1 = work / "bench_a.jsonl"
        t = time.perf_counter()
        n1 = generate(f1, args.ingest_spans, seed=1)
        print(f"generated {n1} spans ({f1.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t:.1f} s")
        wh_dir = work / "ws"
        shutil.rmtree(wh_dir, ignore_errors=True)
        wh = Warehouse.open(wh_dir)
        t = time.perf_counter()
        s = ingest_file(wh, f1)
        dt = time.perf_counter() - t
        print(f"OTLP JSON ingest: {s.ingested} spans in {dt:.2f} s = {s.ingested / dt:,.0f} spans/s (target >= 50,000)")
        if args.compare_reference:
            ref = Warehouse(work / "ref" / "warehouse.duckdb")
            t = time.perf_counter()
            sr = ingest_file(ref, f1, fast=False)
            dtr = time.perf_counter() - t
            print(f"reference decoder: {sr.ingested} spans in {dtr:.2f} s = {sr.ingested / dtr:,.0f} spans/s")
            ref.close()
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
        total = wh.count_spans()
        print(f"metric timings over {total:,} spans:")
        now = datetime(2025, 12, 31, tzinfo=UTC)
        f = m.Filters()
        _time("citation_hit_rate", lambda: m.citation_hit_rate(wh, f))
        _time("write_efficacy (7 day)", lambda: m.write_efficacy(wh, f, now=now))
        for p in (50, 95, 99):
            _time(f"retrieval_latency p{p}", lambda p=p: m.retrieval_latency(wh, f, percentile=p))
        _time("degraded_share", lambda: m.degraded_share(wh, f))
        _time("citation_accuracy", lambda: m.citation_accuracy(wh, f))
        _time("hit rate by day", lambda: m.metric_timeseries(wh, m.Metric.CITATION_HIT_RATE, m.Bucket.DAY, f))
        _time("p95 by hour", lambda: m.metric_timeseries(wh, m.Metric.LATENCY_P95, m.Bucket.HOUR, f))
        _time("efficacy by day", lambda: m.metric_timeseries(wh, m.Metric.WRITE_EFFICACY, m.Bucket.DAY, f, now=now))
        _time("hit rate, one user", lambda: m.citation_hit_rate(wh, m.Filters(user_id="u7")))
        wh.close()
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
