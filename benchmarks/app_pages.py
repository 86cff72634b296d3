"""Workbench page render times on a workspace holding ~100,000 retrieval spans,
and (with --demo) the wall time of the full demo build.

Spans come from :func:`memory_engine.observability.synthetic.emit_workload`
through a real OpenTelemetry tracer and the DuckDB exporter. Each page runs
under ``streamlit.testing.v1.AppTest`` (the server-side script run, which is
what the browser waits for): once cold (first load: engine, model and query
caches), then again in a new session (process caches warm), then a rerun in
the same session. Prints one line per page, times in seconds.

    PYTHONPATH=. python benchmarks/app_pages.py [--users 100 --days 14 --per-day 72] [--demo] [--workspace DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["Home.py", *(f"pages/{p.name}" for p in sorted((ROOT / "app" / "pages").glob("*.py")))]


def fill(ws: Path, users: int, days: int, per_day: int) -> dict[str, int]:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from memory_engine.observability.exporter import DuckDBSpanExporter
    from memory_engine.observability.synthetic import NS_PER_DAY, emit_workload
    from memory_engine.observability.warehouse import Warehouse

    wh = Warehouse.open(ws)
    provider = TracerProvider(resource=Resource.create({"service.name": "bench-agent"}))
    provider.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(wh), max_queue_size=200_000,
                                                   max_export_batch_size=20_000, schedule_delay_millis=500))
    start = int((datetime.now(UTC) - timedelta(days=days)).timestamp() * 1e9)
    counts = emit_workload(provider.get_tracer("bench"), start_ns=start - NS_PER_DAY // 2, days=days, users=users,
                           writes_per_user_day=3, retrievals_per_user_day=per_day, seed=1)
    provider.force_flush()
    provider.shutdown()
    return counts


def time_pages(ws: Path) -> list[tuple[str, float, float, float]]:
    from streamlit.testing.v1 import AppTest

    os.environ["MEMWB_HOME"] = str(ws)
    out = []
    for page in PAGES:
        path = str(ROOT / "app" / page)
        t0 = time.perf_counter()
        at = AppTest.from_file(path, default_timeout=600).run()
        cold = time.perf_counter() - t0
        if at.exception:
            raise SystemExit(f"{page}: {[e.value for e in at.exception]}")
        t0 = time.perf_counter()
        AppTest.from_file(path, default_timeout=600).run()
        warm_new = time.perf_counter() - t0
        t0 = time.perf_counter()
        at.run()
        rerun = time.perf_counter() - t0
        out.append((page, cold, warm_new, rerun))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--days", type=int, default=14)
    ap.add_argument("--per-day", type=int, default=72, help="retrievals per user and day")
    ap.add_argument("--workspace", type=Path, help="reuse / create this workspace (default: a temp folder)")
    ap.add_argument("--demo", action="store_true", help="also time the full demo build (default options)")
    a = ap.parse_args()
    ws = a.workspace or Path(tempfile.mkdtemp(prefix="memwb-bench-"))
    from memory_engine.observability.warehouse import Warehouse

    if not (ws / "warehouse.duckdb").exists():
        t0 = time.perf_counter()
        counts = fill(ws, a.users, a.days, a.per_day)
        print(f"filled {ws}: {counts} in {time.perf_counter() - t0:.1f} s")
    wh = Warehouse.open(ws)
    n = wh.fetchone("SELECT count(*) FROM retrievals")[0]
    print(f"retrieval spans: {n:,}; all spans: {wh.count_spans():,}")
    print(f"{'page':34s} {'cold s':>8s} {'new session s':>14s} {'rerun s':>8s}")
    for page, cold, warm, rerun in time_pages(ws):
        print(f"{page:34s} {cold:8.2f} {warm:14.2f} {rerun:8.2f}")
    if a.demo:
        from memory_engine import demo
        from memory_engine.models import now_utc

        dws = Path(tempfile.mkdtemp(prefix="memwb-demo-"))
        rep = demo.build_demo(dws, now=now_utc())
        print(f"demo build (full default options): {rep.duration_s:.1f} s; {rep.cases} cases, {rep.writes} writes, "
              f"{rep.retrievals} retrievals, {rep.spans_stored} spans; notes: {list(rep.notes)}")


if __name__ == "__main__":
    main()
