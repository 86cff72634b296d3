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
    return app


def main() -> None:
    load_commands()()
