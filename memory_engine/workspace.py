"""The composition root: one workspace folder, its paths, and :func:`open_workspace`.

A workspace (``config.workspace``; env ``MEMWB_HOME``, default ``.memwb``) holds
everything memwb keeps at run time; its paths are resolved in one place,
:mod:`memory_engine.paths` (:class:`WorkspacePaths`, re-exported here).

:func:`open_workspace` is how every entry point (the app, each ``memwb``
command, benchmarks, the demo builder) gets an engine: it applies the active
embedding (so a store migrated by ``memwb reembed`` is the one opened), builds
the :class:`~memory_engine.engine.MemoryEngine`, and attaches the span exporters
the ``tracing`` section asks for (the workspace warehouse, OTLP/HTTP). The
engine itself holds no warehouse; the :class:`Workspace` does, and it is the
one place that erases an owner across store and warehouse
(:meth:`Workspace.erase_user`) and scores health with ``config.health``.

Usage::

    from memory_engine import EngineConfig, open_workspace

    with open_workspace(EngineConfig()) as ws:
        ws.engine.add("I prefer green tea", user_id="u1")   # the span lands in ws.warehouse
        ws.erase_user("u1", mode="pseudonymise")

This module imports nothing heavy at import time (no DuckDB, Qdrant, model).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .config import EngineConfig
from .paths import (  # re-exported: the workspace's paths live in the leaf module memory_engine.paths
    ACTIVE_EMBEDDING_FILE,
    DEAD_LETTERS_FILE,
    HOME_ENV,
    SWEEPS_FILE,
    WAREHOUSE_FILE,
    WorkspacePaths,
    workspace_paths,
    workspace_root,
)

if TYPE_CHECKING:
    from .embedding import CachedEmbedder
    from .engine import MemoryEngine
    from .lifecycle.forget import EraseMode, EraseReport
    from .observability.health import HealthReport
    from .observability.warehouse import Warehouse
    from .store.base import VectorStore

__all__ = [
    "ACTIVE_EMBEDDING_FILE", "DEAD_LETTERS_FILE", "HOME_ENV", "SWEEPS_FILE", "WAREHOUSE_FILE", "Workspace",
    "WorkspacePaths", "apply_active_embedding", "attach_exporters", "open_workspace", "workspace_paths",
    "workspace_root",
]


def apply_active_embedding(config: EngineConfig) -> EngineConfig:
    """``config`` switched to the embedding and store recorded by the last ``memwb reembed``
    (``<workspace>/active_embedding.json``), or unchanged when the workspace never switched.

    Raises :class:`~memory_engine.lifecycle.reembed.ReembedError` for an unreadable file.
    """
    from .lifecycle.reembed import load_active_embedding

    active = load_active_embedding(workspace_root(config.workspace))
    if not active or not active.get("backend"):
        return config
    over: dict[str, Any] = {"embedding.backend": active["backend"], "embedding.model": active["model"]}
    if active.get("storage_path"):
        over["storage.path"] = active["storage_path"]
    if active.get("collection"):
        over["storage.collection"] = active["collection"]
    return config.with_overrides(over)


def attach_exporters(engine: MemoryEngine, warehouse: Any, *, batch: bool = True) -> None:
    """Add the span processors ``engine.config.tracing`` asks for to ``engine.tracing``:
    the DuckDB exporter into ``warehouse`` (a :class:`~memory_engine.observability.warehouse.Warehouse`
    or the owner's spool writer; when given and ``tracing.warehouse``) and an
    OTLP/HTTP exporter (``tracing.otlp_endpoint``). ``batch`` false exports each span
    synchronously (short CLI runs, tests)."""
    from .observability.exporter import span_processors

    for p in span_processors(engine.config.tracing, warehouse, batch=batch):
        engine.tracing.add_processor(p)


class Workspace:
    """One opened workspace: its config (active embedding applied), paths, engine and warehouse.

    ``engine`` and ``warehouse`` are opened on first use, so a command that only
    reads traces never loads the embedding model, and one that only writes
    memories with ``tracing.warehouse = false`` never opens DuckDB. Build it
    with :func:`open_workspace`; close it (or use ``with``) to flush spans and
    release the shard and the DuckDB file.
    """

    def __init__(
        self,
        config: EngineConfig,
        *,
        ephemeral: bool = False,
        embedder: CachedEmbedder | None = None,
        store: VectorStore | None = None,
        span_processors: Sequence[Any] = (),
        warehouse: Warehouse | None = None,
        batch: bool = True,
        engine: MemoryEngine | None = None,
    ) -> None:
        self.config = config
        self.paths = workspace_paths(config)
        self.ephemeral = ephemeral
        self._embedder = embedder
        self._store = store
        self._span_processors = tuple(span_processors)
        self._batch = batch
        self._warehouse = warehouse
        self._owns_warehouse = False
        # an engine built elsewhere (the app's owner process) is adopted, not closed by this workspace
        self._engine: MemoryEngine | None = engine
        self._owns_engine = engine is None
        self._lock = threading.RLock()
        self._closed = False

    # ------------------------------------------------------------------ parts
    @property
    def exports_to_warehouse(self) -> bool:
        """Whether the engine's spans go to the warehouse (tracing on, ``tracing.warehouse``, and a
        persistent workspace or an explicitly given warehouse)."""
        t = self.config.tracing
        return t.enabled and t.warehouse and (not self.ephemeral or self._warehouse is not None)

    @property
    def warehouse(self) -> Warehouse | None:
        """The workspace warehouse, opened read-write on first use (shared within the process);
        None for an ephemeral workspace without a given warehouse. Raises WarehouseError when the
        file is held by another process."""
        with self._lock:
            if self._warehouse is None and not self.ephemeral and not self._closed:
                from .observability.warehouse import Warehouse

                # a warehouse someone else in this process already opened stays theirs to close
                existing = Warehouse.shared(self.paths.root)
                self._warehouse = existing or Warehouse.open(self.paths.root)
                self._owns_warehouse = existing is None
            return self._warehouse

    def writer(self) -> Any:
        """The warehouse this process writes into: its own :class:`Warehouse` when it holds (or can take)
        the file, else a spool writer for the process that owns the workspace (see :meth:`_span_sink`)."""
        return self._span_sink()

    def _span_sink(self) -> Any:
        """Where the engine's spans go: this process's warehouse when it holds (or can take) the file,
        else the spool of the process that owns the workspace (the running app or ``memwb collect``),
        which applies them (:func:`memory_engine.observability.spool.open_writer`)."""
        with self._lock:
            if self._warehouse is not None:
                return self._warehouse
            from .observability.spool import open_writer
            from .observability.warehouse import Warehouse

            existing = Warehouse.shared(self.paths.root)
            sink = open_writer(self.paths.root)
            if isinstance(sink, Warehouse):
                self._warehouse = sink
                self._owns_warehouse = existing is None
            return sink

    @property
    def engine(self) -> MemoryEngine:
        """The engine on the workspace's store, its spans exported as configured (built on first use)."""
        with self._lock:
            if self._closed:
                from .errors import ValidationError

                raise ValidationError(f"workspace {self.paths.root} is closed", field="workspace")
            if self._engine is None:
                from .engine import MemoryEngine

                eng = MemoryEngine(self.config, embedder=self._embedder, store=self._store,
                                   span_processors=self._span_processors, ephemeral=self.ephemeral)
                attach_exporters(eng, self._span_sink() if self.exports_to_warehouse else None, batch=self._batch)
                self._engine = eng
            return self._engine

    @property
    def engine_opened(self) -> bool:
        """Whether :attr:`engine` has been built (without building it)."""
        return self._engine is not None

    # ------------------------------------------------------------------ cross-cutting operations
    def erase_user(
        self,
        user_id: str,
        *,
        tenant_id: str = "default",
        mode: EraseMode | str | None = None,
        salt: str = "",
        now: datetime | None = None,
    ) -> EraseReport:
        """GDPR-style erase of one owner across the vector store and the warehouse, with ONE mode.

        ``mode`` (delete | pseudonymise | keep) decides what happens to the owner's
        warehouse rows; None takes ``lifecycle.erase_warehouse``. The store records go
        in every mode. Returns :class:`~memory_engine.lifecycle.forget.EraseReport`
        (rows touched per table). Raises ValidationError for a missing owner or an
        unknown mode (before anything is deleted), WarehouseError from DuckDB.
        When another process owns the workspace (the running app), the warehouse part
        is queued for it and applied there.
        """
        from .lifecycle.forget import erase_user

        m = self.config.lifecycle.erase_warehouse if mode is None else mode
        wh = None
        if self._warehouse is not None or (not self.ephemeral and (self.paths.warehouse.exists()
                                                                    or self.exports_to_warehouse)):
            # also for "keep": the report then says what was kept, not "no warehouse"; beside a running
            # app (the workspace's owner) the erase is queued for it (report {"queued": 1})
            wh = self._span_sink()
        return erase_user(self.engine, user_id, tenant_id=tenant_id, warehouse=wh, mode=m, salt=salt, now=now)

    def health_report(self, *, tenant_id: str = "default", now: datetime | None = None) -> HealthReport:
        """Health score 0..100 of one tenant's store, weighted and thresholded by ``config.health``."""
        return self.engine.health_report(tenant_id=tenant_id, now=now)

    # ------------------------------------------------------------------ lifetime
    def compact(self) -> dict[str, Any]:
        """Rewrite the vector shard and the warehouse file so deleted data leaves the disk (Qdrant and
        DuckDB only mark it; see docs/safety.md). Run after an erase. Returns what was done:
        ``store_points_kept`` (None when the store compacts itself, e.g. a Qdrant server),
        ``warehouse_bytes`` (before, after; None when another process owns the warehouse: it must compact).
        Raises StoreError / WarehouseError."""
        eng = self.engine
        eng.flush()
        fn = getattr(eng.store, "compact", None)
        out: dict[str, Any] = {"store_points_kept": fn() if fn is not None else None, "warehouse_bytes": None}
        wh = self.writer()
        if wh is not None and hasattr(wh, "compact"):
            out["warehouse_bytes"] = wh.compact()
        return out

    def flush(self) -> None:
        """Flush the store and every span exporter (spans are in the warehouse afterwards)."""
        if self._engine is not None:
            self._engine.flush()

    def close(self) -> None:
        """Close the engine (flushing its spans) and the warehouse if this workspace opened it (not one
        that was already open in the process, nor one passed in). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._engine is not None and self._owns_engine:
                    self._engine.close()
            finally:
                if self._owns_warehouse and self._warehouse is not None:
                    self._warehouse.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({str(self.paths.root)!r}, embedding={self.config.embedding.backend}:{self.config.embedding.model})"


def open_workspace(
    config: EngineConfig | None = None,
    *,
    workspace: str | os.PathLike[str] | None = None,
    overrides: dict[str, Any] | None = None,
    ephemeral: bool = False,
    embedder: CachedEmbedder | None = None,
    store: VectorStore | None = None,
    span_processors: Sequence[Any] = (),
    warehouse: Warehouse | None = None,
    batch: bool = True,
    active_embedding: bool = True,
    engine: MemoryEngine | None = None,
) -> Workspace:
    """Open a workspace: the one way entry points build an engine.

    ``config``: the engine configuration (default ``EngineConfig()``, i.e.
    built-ins + ``MEMWB_*`` env); ``workspace`` overrides ``config.workspace``;
    ``overrides``: dotted-name overrides applied on top. Unless ``ephemeral`` or
    ``active_embedding=False``, the embedding switched to by ``memwb reembed``
    is applied (backend, model, store location). ``ephemeral``: a temporary
    store removed on close and no warehouse unless ``warehouse`` is given.
    ``embedder``/``store``/``span_processors`` are passed to the engine;
    ``warehouse`` replaces the workspace's own file (tests); ``batch`` false
    exports spans synchronously; ``engine``: adopt an engine already built on this
    workspace (e.g. by the app's owner process; not closed by the workspace). Nothing is opened until ``.engine`` or
    ``.warehouse`` is used. Raises ConfigError for bad overrides, ReembedError
    for an unreadable ``active_embedding.json``.
    """
    cfg = config or EngineConfig()
    over = dict(overrides or {})
    if workspace is not None:
        over["workspace"] = str(workspace)
    if over:
        cfg = cfg.with_overrides(over)
    if active_embedding and not ephemeral and store is None:
        cfg = apply_active_embedding(cfg)
    if engine is not None:
        cfg = engine.config
    return Workspace(cfg, ephemeral=ephemeral, embedder=embedder, store=store, span_processors=span_processors,
                     warehouse=warehouse, batch=batch, engine=engine)
