"""Where a workspace keeps each file: the one place paths are resolved.

A leaf module (it imports nothing of memwb), so every layer may use it; the
composition root that opens a workspace is :mod:`memory_engine.workspace`.

================================  =========================================================
:attr:`WorkspacePaths.qdrant`      the qdrant-edge shard (``storage.path`` overrides it)
:attr:`WorkspacePaths.warehouse`   the DuckDB trace warehouse ``warehouse.duckdb``
:attr:`WorkspacePaths.dead_letters`  failed async writes ``dead_letters.jsonl``
:attr:`WorkspacePaths.active_embedding`  ``active_embedding.json`` written by ``memwb reembed``
:attr:`WorkspacePaths.sweeps`      optuna storage of parameter sweeps ``sweeps.sqlite3``
:attr:`WorkspacePaths.consolidation_state`  counters of the background consolidation trigger
:attr:`WorkspacePaths.owner`       ``owner.json`` of the process that owns the workspace (app, collect)
:attr:`WorkspacePaths.spool`       ``spool/``: writes queued for the owner
:attr:`WorkspacePaths.pseudonym_salt`  the private salt of erase pseudonyms
================================  =========================================================
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ACTIVE_EMBEDDING_FILE", "CONSOLIDATION_STATE_FILE", "DEAD_LETTERS_FILE", "DEFAULT_HOME", "HOME_ENV",
    "OWNER_FILE", "PSEUDONYM_SALT_FILE", "QDRANT_DIR", "SPOOL_DIR", "SWEEPS_FILE", "WAREHOUSE_FILE", "WorkspacePaths", "workspace_paths", "workspace_root",
]

#: environment variable naming the workspace folder
HOME_ENV = "MEMWB_HOME"
#: workspace folder when neither the config nor ``MEMWB_HOME`` names one
DEFAULT_HOME = ".memwb"
WAREHOUSE_FILE = "warehouse.duckdb"
DEAD_LETTERS_FILE = "dead_letters.jsonl"
ACTIVE_EMBEDDING_FILE = "active_embedding.json"
SWEEPS_FILE = "sweeps.sqlite3"
CONSOLIDATION_STATE_FILE = "consolidation_state.json"
QDRANT_DIR = "qdrant"
#: the running owner process of the workspace (the app or ``memwb collect``) and the queue it drains
OWNER_FILE = "owner.json"
SPOOL_DIR = "spool"
#: the private per-workspace salt of erase pseudonyms
PSEUDONYM_SALT_FILE = "pseudonym.salt"


def workspace_root(workspace: str | os.PathLike[str] | None = None) -> Path:
    """The workspace folder: ``workspace`` when given, else ``$MEMWB_HOME``, else ``.memwb`` (not resolved)."""
    return Path(workspace if workspace is not None else os.environ.get(HOME_ENV, DEFAULT_HOME))


@dataclass(frozen=True)
class WorkspacePaths:
    """Every file and folder of one workspace (absolute paths; nothing is created)."""

    root: Path
    storage_path: str | None = None

    @property
    def qdrant(self) -> Path:
        """The qdrant-edge shard folder: ``storage.path`` when configured, else ``<root>/qdrant``."""
        return Path(self.storage_path) if self.storage_path else self.root / QDRANT_DIR

    @property
    def warehouse(self) -> Path:
        return self.root / WAREHOUSE_FILE

    @property
    def dead_letters(self) -> Path:
        return self.root / DEAD_LETTERS_FILE

    @property
    def active_embedding(self) -> Path:
        return self.root / ACTIVE_EMBEDDING_FILE

    @property
    def sweeps(self) -> Path:
        return self.root / SWEEPS_FILE

    @property
    def consolidation_state(self) -> Path:
        return self.root / CONSOLIDATION_STATE_FILE

    @property
    def owner(self) -> Path:
        return self.root / OWNER_FILE

    @property
    def spool(self) -> Path:
        return self.root / SPOOL_DIR

    @property
    def pseudonym_salt(self) -> Path:
        return self.root / PSEUDONYM_SALT_FILE

    def reembed_shard(self, slug: str) -> Path:
        """The edge shard a re-embed to the version with file-safe ``slug`` fills: ``<qdrant>-<slug>``."""
        base = self.qdrant
        return base.with_name(f"{base.name}-{slug}")

    def sweep_storage_url(self) -> str:
        """``sqlite:///<root>/sweeps.sqlite3`` (creates the folder, since optuna opens the file)."""
        self.root.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{self.sweeps}"

    def is_empty(self) -> bool:
        """True when the workspace holds neither a warehouse file nor a vector store folder."""
        return not self.warehouse.exists() and not self.qdrant.exists()


def workspace_paths(config_or_root: Any = None) -> WorkspacePaths:
    """The paths of a workspace given its config (anything with ``.workspace``; honours ``storage.path``)
    or its folder (None: ``$MEMWB_HOME``)."""
    if isinstance(config_or_root, str | os.PathLike) or config_or_root is None:
        return WorkspacePaths(workspace_root(config_or_root).resolve())
    storage = getattr(config_or_root, "storage", None)
    return WorkspacePaths(workspace_root(config_or_root.workspace).resolve(), getattr(storage, "path", None))
