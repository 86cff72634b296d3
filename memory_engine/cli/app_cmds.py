"""`memwb app` and `memwb demo`: the Streamlit workbench and its demo workspace.

Thin: parse, call :mod:`memory_engine.demo`, start Streamlit, exit code.
Exit codes: 0 ok; 2 bad input (a broken suite file, a workspace that is not a
folder); Streamlit's own exit code when it stops with an error.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from memory_engine.cli import app
from memory_engine.cli.options import WorkspaceOpt
from memory_engine.errors import MemoryEngineError

APP_ENTRY = Path(__file__).resolve().parents[2] / "app" / "Home.py"
"""The Streamlit entry script (``app/Home.py`` beside the package)."""



def _workspace(ws: Path | None) -> Path:
    from memory_engine.workspace import workspace_root

    p = workspace_root(ws).resolve()
    if p.exists() and not p.is_dir():
        typer.echo(f"workspace {p} is not a folder", err=True)
        raise typer.Exit(2)
    return p


def _build(ws: Path, *, quick: bool, no_locomo: bool, quiet: bool) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeElapsedColumn

    from memory_engine import demo
    from memory_engine.models import now_utc

    from .progress import progress

    opts = demo.DemoOptions()
    if quick:
        opts = demo.DemoOptions(max_cases_per_suite=2, locomo_turns=60, locomo_questions=10)
    if no_locomo:
        from dataclasses import replace

        opts = replace(opts, locomo_path=None)
    with progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=quiet, transient=False) as bar:  # fmt: skip
        tasks: dict[str, TaskID] = {}

        def tick(p: demo.DemoProgress) -> None:
            if p.stage == "done":
                return
            if p.stage not in tasks:
                tasks[p.stage] = bar.add_task(f"demo {p.stage}", total=p.total)
            bar.update(tasks[p.stage], completed=p.done, total=p.total)

        try:
            rep = demo.build_demo(ws, now=now_utc(), options=opts, progress=tick)
        except MemoryEngineError as e:
            typer.echo(f"demo build failed: {e}", err=True)
            raise typer.Exit(2) from e
        finally:
            from memory_engine.observability.warehouse import Warehouse

            Warehouse.open(ws).close()  # release the DuckDB file: the Streamlit process is its writer
    typer.echo(
        f"demo workspace {rep.workspace}: {rep.cases} cases from {len(rep.suites)} suites, {rep.writes} writes, "
        f"{rep.retrievals} retrievals, {rep.answers} answers ({rep.cited} citations), {rep.verdicts} label "
        f"verdicts, {rep.spans_stored} spans in {rep.duration_s:.1f} s"
    )
    for n in rep.notes:
        typer.echo(f"note: {n}")


@app.command("demo")
def demo_cmd(
    workspace: WorkspaceOpt = None,
    quick: Annotated[bool, typer.Option("--quick", help="A small demo (2 cases per suite, 60 LoCoMo turns).")] = False,
    no_locomo: Annotated[bool, typer.Option("--no-locomo", help="Golden suites only, without the LoCoMo slice.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Build even when the workspace already holds data.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Build the demo workspace: golden suites + a LoCoMo slice replayed through the engine and answered
    by the built-in extractive reader, spans in the warehouse over a simulated 14 days."""
    from memory_engine import demo

    ws = _workspace(workspace)
    if not force and not demo.workspace_is_empty(ws):
        typer.echo(f"workspace {ws} already holds data; use --force to add the demo to it", err=True)
        raise typer.Exit(2)
    _build(ws, quick=quick, no_locomo=no_locomo, quiet=quiet)


@app.command("app")
def app_cmd(
    workspace: WorkspaceOpt = None,
    port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535, help="Port of the Streamlit server.")] = 8501,
    address: Annotated[str, typer.Option("--address", help="Address the server binds to.")] = "127.0.0.1",
    quick_demo: Annotated[
        bool, typer.Option("--quick-demo", help="On an empty workspace build the small demo instead of the full one.")
    ] = False,
    no_demo: Annotated[bool, typer.Option("--no-demo", help="Do not build the demo on an empty workspace.")] = False,
    otlp_port: Annotated[int, typer.Option(
        "--otlp-port", min=0, max=65535,
        help="Port of the app's own OTLP/HTTP receiver (POST /v1/traces; 0 = any free port).")] = 4318,
) -> None:
    """Start the Streamlit workbench on the embedded default (Qdrant shard + DuckDB file + bundled model).

    On an empty workspace the demo workspace is built first, with a progress bar. The app owns the
    workspace's warehouse while it runs: it receives OTLP/HTTP spans itself (--otlp-port, 4318 by
    default) and applies what other commands queue for it (memwb ingest, eval, ci, sweep,
    an engine in another process), so none of them fails on the file lock."""
    from memory_engine import demo
    from memory_engine.observability.spool import Owner, find_owner
    from memory_engine.observability.warehouse import Warehouse

    ws = _workspace(workspace)
    other = find_owner(ws)
    if other is not None:
        typer.echo(f"the {other.kind} (pid {other.pid}) already owns {ws}; stop it first "
                   "(the app receives OTLP itself, `memwb collect` is not needed beside it).", err=True)  # fmt: skip
        raise typer.Exit(2)
    if not no_demo and demo.workspace_is_empty(ws):
        typer.echo(f"empty workspace {ws}: building the demo workspace first")
        _build(ws, quick=quick_demo, no_locomo=False, quiet=False)
    os.environ["MEMWB_HOME"] = str(ws)
    # the Streamlit server runs in this process, so the warehouse it opens is the one the owner holds, and
    # its pages use this engine, whose store the owner serves to engines in other processes
    from memory_engine.config import EngineConfig
    from memory_engine.observability.spool import register_engine
    from memory_engine.workspace import open_workspace

    wh = Warehouse.open(ws)
    try:
        opened = open_workspace(EngineConfig(workspace=str(ws)), warehouse=wh)  # active embedding, exporters
        engine = opened.engine
    except MemoryEngineError as e:
        typer.echo(f"cannot open the engine on {ws}: {e}", err=True)
        raise typer.Exit(2) from e
    register_engine(ws, engine)
    owner = Owner(wh, ws, kind="app", otlp_port=otlp_port, host=address, store=engine.store).start()
    if owner.collector is not None:
        typer.echo(f"memwb workbench on http://{address}:{port} (workspace {ws}); "
                   f"OTLP/HTTP receiver on {owner.collector.url}/v1/traces")  # fmt: skip
    else:
        typer.echo(f"memwb workbench on http://{address}:{port} (workspace {ws}); {owner.receiver_error}", err=True)
    from streamlit.web import bootstrap

    flags = {"server_port": port, "server_address": address, "server_headless": True,
             "browser_gatherUsageStats": False, "client_toolbarMode": "minimal"}  # fmt: skip (no Deploy button)
    code = 0
    try:
        bootstrap.load_config_options(flags)
        bootstrap.run(str(APP_ENTRY), False, [], flags)
    except KeyboardInterrupt:
        code = 0
    except SystemExit as e:
        code = int(e.code or 0) if isinstance(e.code, int | type(None)) else 1
    finally:
        owner.stop()
        opened.close()
    raise typer.Exit(code)
