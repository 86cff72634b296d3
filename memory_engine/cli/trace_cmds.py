"""`memwb ingest`, `memwb collect`, `memwb metrics`, `memwb timeline`, `memwb health`, `memwb sample-traces`.

Thin: parse, call :mod:`memory_engine.observability`, print, exit code.
Exit codes: 0 ok; 1 some input was rejected or malformed (the valid parts
were kept), or ``timeline`` found no event for the memory; 2 bad arguments,
a missing/unreadable/refused input file, or a warehouse another process holds
(reported by :func:`memory_engine.cli.main`); 3 an internal error (a bug: the
other files were still read).
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from memory_engine.cli import app
from memory_engine.cli.options import WorkspaceOpt, require_workspace
from memory_engine.errors import MemoryEngineError, TraceIngestError, os_reason


def _ws(ws: Path | None) -> Path:
    from memory_engine.workspace import workspace_root

    return workspace_root(ws)


def _warehouse(ws: Path | None) -> Any:
    """The workspace's warehouse, opened read-write (the caller closes it)."""
    from memory_engine.workspace import open_workspace

    wh = open_workspace(workspace=_ws(ws), active_embedding=False).warehouse
    assert wh is not None  # a persistent workspace always has one
    return wh


def _read_warehouse(ws: Path | None) -> Any:
    """The warehouse to read from: the owner's (served over loopback) while `memwb app`/`collect` owns the
    workspace, else the file itself (the caller closes it). A file held by any other process raises
    WarehouseError with a hint for read commands."""
    from memory_engine.observability.spool import open_reader

    return open_reader(_ws(ws), fallback=lambda: _warehouse(ws))


def _fail(msg: str, code: int = 2) -> None:
    typer.echo(msg, err=True)
    raise typer.Exit(code)


@app.command("ingest")
def ingest_cmd(
    files: Annotated[list[Path], typer.Argument(help="OTLP files: JSON lines (collector file exporter), one JSON "
                                                      "document, or protobuf (.gz allowed).")],  # fmt: skip
    workspace: WorkspaceOpt = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar per file.")] = True,
    show: Annotated[int, typer.Option("--show", help="Print at most this many problems (file:line: reason).")] = 20,
    max_decompressed_mb: Annotated[float, typer.Option(
        "--max-decompressed-mb", help="Refuse a .gz file that expands beyond this many MB (0 = no limit).")] = 256.0,
    max_gzip_ratio: Annotated[float, typer.Option(
        "--max-gzip-ratio", help="Refuse a .gz file expanding more than this many times (0 = no limit).")] = 200.0,
    wait: Annotated[float, typer.Option(
        "--wait", help="When the app owns the workspace: seconds to wait for it to report each file's counts.")] = 120.0,
) -> None:
    """Ingest OTLP trace files into the workspace warehouse. Re-ingesting a file adds nothing.

    Every file is read even when an earlier one fails. Exit codes: 0 everything stored; 1 some spans
    or documents were rejected or malformed (the valid ones were stored); 2 a file is missing,
    unreadable or refused (gzip bound), or the warehouse is held by another process; 3 an internal
    error (a bug; please report it).
    """
    from memory_engine.observability.ingest import IngestSummary, ingest_file
    from memory_engine.observability.spool import SpoolWriter, open_writer
    from memory_engine.observability.warehouse import Warehouse

    wh = open_writer(_ws(workspace))
    if isinstance(wh, SpoolWriter):  # the app (or collect) holds the warehouse: it ingests for us
        _ingest_through_owner(wh, files, show=show, wait_s=wait)
        return
    assert isinstance(wh, Warehouse)
    total = IngestSummary()
    unreadable = internal = 0
    for f in files:
        try:
            s = ingest_file(
                wh, f, progress=progress and sys.stderr.isatty(),
                max_decompressed_bytes=int(max_decompressed_mb * 1024 * 1024), max_gzip_ratio=max_gzip_ratio,
            )  # fmt: skip
        except TraceIngestError as e:  # its message already starts with the file
            typer.echo(str(e), err=True)
            unreadable += 1
            continue
        except MemoryEngineError as e:
            typer.echo(f"{f}: {e}", err=True)
            internal += 1
            continue
        except Exception as e:  # noqa: BLE001 - a bug in one file's decoding must not stop the others
            typer.echo(f"{f}: internal error: {type(e).__name__}: {e}", err=True)
            internal += 1
            continue
        typer.echo(f"{f}: ingested {s.ingested}, duplicate {s.duplicate}, rejected {s.rejected}, "
                   f"malformed {s.malformed}, warnings {s.warnings}")  # fmt: skip
        total = total + s
    for p in total.problems[:show]:
        typer.echo(f"  {p}", err=True)
    if len(total.problems) > show:
        typer.echo(f"  ... {len(total.problems) - show} more", err=True)
    typer.echo(f"total: ingested {total.ingested} / duplicate {total.duplicate} / rejected {total.rejected} "
               f"(malformed {total.malformed}, warnings {total.warnings})")  # fmt: skip
    wh.close()
    if internal:
        raise typer.Exit(3)
    if unreadable:
        raise typer.Exit(2)
    if not total.ok:
        raise typer.Exit(1)


def _ingest_through_owner(sw: Any, files: list[Path], *, show: int, wait_s: float) -> None:
    """``memwb ingest`` while another process owns the warehouse: each file is queued (copied into the
    workspace spool) and the owner ingests it; its counts are printed when it reports within ``wait_s``
    seconds. Same exit codes as a direct ingest; a file still queued at the deadline is not an error."""
    import time as _time

    owner = sw.owner
    who = f"the {owner.kind} (pid {owner.pid})" if owner else "the process holding the warehouse"
    typer.echo(f"{who} owns this workspace: files go through it.")
    queued = []
    unreadable = 0
    for f in files:
        if not f.is_file():
            typer.echo(f"{f}: cannot read trace file: {'is a directory' if f.is_dir() else 'no such file'}", err=True)
            unreadable += 1
            continue
        queued.append((f, sw.queue_file(f)))
    deadline = _time.monotonic() + wait_s
    bad = False
    problems: list[str] = []
    from memory_engine.observability.spool import wait_result

    for f, result in queued:
        # an unregistered holder (an older memwb, a script) drains nothing: the file waits for the next opener
        got = wait_result(result, max(0.0, deadline - _time.monotonic())) if owner else None
        if got is None:
            typer.echo(f"{f}: queued in the workspace spool; "
                       + (f"{who} ingests it when it drains its queue (nothing is lost if it stops)." if owner else
                          "it is ingested when the warehouse is next opened (memwb app, collect or ingest)."))  # fmt: skip
        elif not got.get("ok"):
            typer.echo(f"{f}: {got.get('error')}", err=True)
            unreadable += 1
        else:
            typer.echo(f"{f}: ingested {got['ingested']}, duplicate {got['duplicate']}, rejected {got['rejected']}, "
                       f"malformed {got['malformed']}, warnings {got['warnings']}")  # fmt: skip
            bad |= bool(got["rejected"] or got["malformed"])
            problems += got.get("problems") or []
    for p in problems[:show]:
        typer.echo(f"  {p}", err=True)
    if unreadable:
        raise typer.Exit(2)
    if bad:
        raise typer.Exit(1)


@app.command("collect")
def collect_cmd(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on (beyond loopback needs API keys).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port (4318 is the OTLP/HTTP default).")] = 4318,
    workspace: WorkspaceOpt = None,
    max_body_mb: Annotated[float, typer.Option("--max-body-mb", help="Largest accepted body in MB (also after gzip).")] = 16.0,
    keys_file: Annotated[Path | None, typer.Option(
        "--keys-file", help="API keys, 'name:key' lines (or JSON {name: key}); also $MEMWB_COLLECTOR_KEYS. "
        "With keys every /v1 request needs 'Authorization: Bearer <key>' or 'X-API-Key'.")] = None,
    header_timeout: Annotated[float, typer.Option("--header-timeout", help="Seconds to deliver a request head.")] = 10.0,
    body_timeout: Annotated[float, typer.Option("--body-timeout", help="Seconds to deliver a request body.")] = 30.0,
    idle_timeout: Annotated[float, typer.Option("--idle-timeout", help="Seconds an idle keep-alive connection lives.")] = 5.0,
    max_connections: Annotated[int, typer.Option("--max-connections", help="Connections served at once (503 beyond).")] = 256,
) -> None:
    """Run an OTLP/HTTP receiver (POST /v1/traces, protobuf or JSON, gzip) writing into the warehouse.

    /v1/metrics and /v1/logs are accepted and answered as not stored; GET /health shows the counters.
    The collector owns the workspace while it runs (like `memwb app`): other commands write through
    it. When the app already owns the workspace and receives OTLP, there is nothing to do: the
    command says where to send spans and exits 0; when the owner has no receiver, this one queues
    what it receives for the owner. Binding beyond loopback (e.g. --host 0.0.0.0) is refused without
    API keys (exit 2).
    """
    import signal
    import time as _time

    from memory_engine.errors import ConfigError
    from memory_engine.observability.collector import KEYS_ENV, CollectorServer
    from memory_engine.observability.spool import Owner, SpoolWriter, find_owner
    from memory_engine.observability.warehouse import Warehouse
    from memory_engine.service import load_keys

    keys = None
    try:
        if keys_file is not None or os.environ.get(KEYS_ENV):
            keys = load_keys(keys_file, env={"MEMWB_API_KEYS": os.environ.get(KEYS_ENV, "")})
        CollectorServer.check_exposure(host, keys)
    except ConfigError as e:
        _fail(f"memwb collect: {e}")
    guard = dict(api_keys=keys, header_timeout_s=header_timeout, body_timeout_s=body_timeout,
                 idle_timeout_s=idle_timeout, max_connections=max_connections)  # fmt: skip
    auth = f"API keys required ({len(keys)})" if keys else "no authentication (loopback only)"
    ws = _ws(workspace)
    max_body = int(max_body_mb * 1024 * 1024)
    owner = find_owner(ws)
    if owner is not None and owner.otlp_url:
        typer.echo(f"the {owner.kind} (pid {owner.pid}) owns {ws} and already receives OTLP at {owner.traces_url}: "
                   "point exporters there.")  # fmt: skip
        return
    if owner is not None:  # an owner without a receiver: receive here, queue for it
        srv = CollectorServer(SpoolWriter(ws, owner), host=host, port=port, max_body_bytes=max_body,  # type: ignore[arg-type]
                              log_level="info", **guard)  # type: ignore[arg-type]  # fmt: skip
        typer.echo(f"memwb collector on http://{host}:{port}/v1/traces -> queued for the {owner.kind} "
                   f"(pid {owner.pid}); {auth}")  # fmt: skip
        srv.serve()
        return
    wh = Warehouse.open(ws)
    own = Owner(wh, ws, kind="collect", otlp_port=port, host=host, max_body_bytes=max_body, collector_kw=guard)

    def _term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _term)
    try:
        own.start()
        if own.collector is None:
            typer.echo(f"memwb collect: {own.receiver_error}", err=True)
            raise typer.Exit(2)
        typer.echo(f"memwb collector on {own.collector.url}/v1/traces -> {wh.path} (owner of {ws}); {auth}")
        while True:
            _time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        own.stop()
        wh.close()


def _parse_time(s: str | None) -> datetime | None:
    if s is None:
        return None
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        _fail(f"bad date {s!r}: use ISO 8601 such as 2025-06-01 or 2025-06-01T12:00")
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


@app.command("metrics")
def metrics_cmd(
    workspace: WorkspaceOpt = None,
    since: Annotated[str | None, typer.Option("--since", help="Window start, ISO date/time (UTC if no zone).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Window end (exclusive), ISO date/time.")] = None,
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user id.")] = None,
    tenant: Annotated[str | None, typer.Option("--tenant", "-t", help="Only this tenant id.")] = None,
    service: Annotated[str | None, typer.Option("--service", help="Only spans of this service.name.")] = None,
    config_hash: Annotated[str | None, typer.Option("--config-hash", help="Only this engine config hash.")] = None,
    now: Annotated[str | None, typer.Option("--now", help="Reference time for the 7-day maturity rule (default: now).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Print the dashboard metrics (value with numerator/denominator; 'no data' for an empty window)."""
    from memory_engine.observability import metrics as m

    f = m.Filters(_parse_time(since), _parse_time(until), tenant, user, service, config_hash)
    require_workspace(workspace)
    wh = _read_warehouse(workspace)
    ref = _parse_time(now) or datetime.now(UTC)
    d = m.dashboard(wh, f, now=ref)
    if as_json:
        typer.echo(json.dumps({k: {"value": v.value, "numerator": v.numerator, "denominator": v.denominator,
                                   "low": v.low, "high": v.high, "label": v.label} for k, v in d.items()}, indent=2))  # fmt: skip
    else:
        for k, v in d.items():
            ci = f"  [{v.low:.2f}, {v.high:.2f}]" if v.low is not None and v.high is not None else ""
            typer.echo(f"{k:<24} {v.label}{ci}")
    wh.close()


@app.command("timeline")
def timeline_cmd(
    memory_id: Annotated[str, typer.Argument(help="Memory id whose life to show.")],
    workspace: WorkspaceOpt = None,
) -> None:
    """Show one memory's life: write, retrievals (rank, score, routes), citations, verdicts, supersession."""
    from memory_engine.observability.explore import memory_timeline

    require_workspace(workspace)
    wh = _read_warehouse(workspace)
    tl = memory_timeline(wh, memory_id)
    if not tl.events:
        wh.close()
        _fail(f"no events for memory {memory_id!r} in {wh.path}", 1)
    for e in tl.events:
        typer.echo(f"{e.at.isoformat(timespec='seconds')}  {e.kind:<14} {json.dumps(e.details, ensure_ascii=False)}")
    wh.close()


@app.command("health")
def health_cmd(
    input_file: Annotated[Path | None, typer.Option("--input", help="JSON file {\"memories\": [...], \"facts\": [...]} "
                                                               "(rows as in memory_engine.observability.health); "
                                                               "default: the workspace's memory store.")] = None,  # fmt: skip
    tenant: Annotated[str | None, typer.Option(
        "--tenant", "-t", help="Score only this tenant's store (without --input). Default: every owner seen in the "
        "warehouse, as the app's Health page scores.")] = None,
    key_attributes: Annotated[list[str] | None, typer.Option("--key", help="A key attribute for coverage (repeat).")] = None,
    now: Annotated[str | None, typer.Option("--now", help="Reference time (default: now).")] = None,
    workspace: WorkspaceOpt = None,
    save: Annotated[bool, typer.Option("--save", help="Also append the report to the warehouse health_reports table.")] = False,
) -> None:
    """Print the memory health score 0..100 with each component, penalties and alert entries.

    Freshness and coverage are computed over structured facts (writes with --fact / fact=...),
    consistency compares facts with semantic memories: a store without facts shows "no data"."""
    from memory_engine.observability.health import health_report_for, save_health_report

    ref_dt = _parse_time(now) or datetime.now(UTC)
    if input_file is None:
        require_workspace(workspace)
        from memory_engine import EngineConfig
        from memory_engine.workspace import open_workspace

        cfg = EngineConfig(workspace=str(_ws(workspace))).with_overrides({"tracing.warehouse": False})
        if key_attributes:
            cfg = cfg.with_overrides({"health.key_attributes": list(key_attributes)})
        try:
            with open_workspace(cfg) as ws:
                if tenant is not None:
                    r = ws.health_report(tenant_id=tenant, now=ref_dt)
                else:  # the owners the warehouse has seen, every tenant: the Health page's snapshot
                    from memory_engine.observability.explore import health_inputs, known_owners

                    wh = _read_warehouse(workspace)
                    try:
                        owners = known_owners(wh)
                    finally:
                        wh.close()
                    memories, facts = health_inputs(ws.engine, owners)
                    r = health_report_for(memories, facts, cfg.health, now=ref_dt.timestamp())
                    typer.echo(f"{len(owners)} owners seen in the warehouse, {len(memories)} memories, "
                               f"{len(facts)} facts (--tenant T: one tenant's whole store)")  # fmt: skip
        except MemoryEngineError as e:
            _fail(f"cannot open the workspace store: {e}")
    else:
        try:
            data = json.loads(input_file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            _fail(f"{input_file}: {os_reason(e)}")
        from memory_engine import EngineConfig

        r = health_report_for(data.get("memories", []), data.get("facts", []), EngineConfig().health,
                              now=ref_dt.timestamp(), key_attributes=key_attributes or None)
    typer.echo(f"health {r.composite:.1f}/100" if r.composite is not None else "health: no data")
    for c in r.components:
        share = f"{c.share:.1%}" if c.share is not None else "no data"
        typer.echo(f"  {c.name:<12} score {'-' if c.score is None else f'{c.score:.2f}'}  "
                   f"({share}, {c.numerator}/{c.denominator}){'  ALERT' if c.alert else ''}")  # fmt: skip
    for p in r.penalties:
        typer.echo(f"  penalty {p.name}: -{p.points:g} ({p.detail})")
    for a in r.alerts:
        typer.echo(f"ALERT {a}")
    if save:

        wh = _warehouse(workspace)
        save_health_report(wh, r)
        wh.close()


@app.command("sample-traces")
def sample_traces_cmd(
    out_dir: Annotated[Path, typer.Argument(help="Folder to write memwb_sample.jsonl and memwb_sample.pb into.")] = Path("traces"),
    days: Annotated[int, typer.Option("--days", help="Days of simulated activity.")] = 10,
    users: Annotated[int, typer.Option("--users", help="Simulated users.")] = 4,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    start: Annotated[str, typer.Option("--start", help="First day, ISO date (UTC).")] = "2025-06-01",
) -> None:
    """Write engine-shaped sample trace files (OTLP JSON lines + protobuf) through the OTLP file exporter."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from memory_engine.observability.otlp_files import OTLPFileSpanExporter
    from memory_engine.observability.synthetic import emit_workload

    out_dir.mkdir(parents=True, exist_ok=True)
    files = [out_dir / "memwb_sample.jsonl", out_dir / "memwb_sample.pb"]
    for f in files:
        f.unlink(missing_ok=True)
    tp = TracerProvider(resource=Resource.create({"service.name": "memwb"}))
    tp.add_span_processor(BatchSpanProcessor(OTLPFileSpanExporter(files[0], "json")))
    tp.add_span_processor(BatchSpanProcessor(OTLPFileSpanExporter(files[1], "proto")))
    t0 = _parse_time(start)
    assert t0 is not None
    counts = emit_workload(tp.get_tracer("memwb"), start_ns=int(t0.timestamp()) * 10**9, days=days, users=users, seed=seed)
    tp.shutdown()
    typer.echo(f"wrote {sum(counts.values())} spans ({counts}) to {', '.join(map(str, files))}")
