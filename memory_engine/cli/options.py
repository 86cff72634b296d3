"""Options several ``memwb`` commands share, defined once so their names, short forms and help agree.

``--workspace`` means the same everywhere: the folder :func:`memory_engine.workspace.workspace_root`
resolves (the command's ``EngineConfig.workspace``; env ``MEMWB_HOME``, default ``.memwb``), which every
command then opens through the composition root (:func:`memory_engine.workspace.open_workspace`, or the
warehouse/spool helpers that take the same folder). ``--set`` carries an example that fits each command:
its help is :func:`set_help` of that example.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memory_engine.config import EngineConfig, load_config

WORKSPACE_HELP = "Workspace folder: memory store, trace warehouse, sweeps, dead letters (default $MEMWB_HOME, else .memwb)."
CONFIG_HELP = "Engine config TOML file (default: built-in defaults + MEMWB_* environment variables)."

WorkspaceOpt = Annotated[Path | None, typer.Option("--workspace", "-w", help=WORKSPACE_HELP)]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help=CONFIG_HELP)]


def set_help(example: str, what: str = "") -> str:
    """Help of ``--set`` with an example key that the command reads, e.g. ``set_help("retrieval.floor=0.4")``;
    ``what`` (optional) says what the override changes for this command."""
    tail = f" {what}" if what else ""
    return f"Override a config field, dotted.key=value (repeatable), e.g. {example}.{tail}"


def with_workspace(cfg: EngineConfig, workspace: Path | None) -> EngineConfig:
    """``cfg`` with ``--workspace`` applied (unchanged when it was not given). Raises ConfigError."""
    return cfg.with_overrides({"workspace": str(workspace)}) if workspace is not None else cfg


def require_workspace(workspace: Path | None) -> None:
    """For a read command: exit 2 with a message when ``--workspace`` names a folder that does not exist (a
    typo would otherwise open an empty workspace there and print '0 hits' / 'no data'). No check without
    ``--workspace``: the default folder is created on first use."""
    if workspace is not None and not Path(workspace).expanduser().exists():
        typer.echo(f"no workspace at {workspace} (a read command creates none; check the path, or write to it "
                   "first: memwb add / memwb demo)", err=True)
        raise typer.Exit(2)


def command_config(config: Path | None, sets: list[str] | None, workspace: Path | None = None) -> EngineConfig:
    """The config a command's ``--config``, ``--set`` and ``--workspace`` describe. Raises ConfigError
    naming the file or key; each command reports it in its own words."""
    return with_workspace(load_config(config, sets or ()), workspace)
