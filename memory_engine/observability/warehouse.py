"""The DuckDB trace warehouse: one file per workspace, schema migrated on open.

Layout: ``<workspace>/warehouse.duckdb`` (workspace = ``MEMWB_HOME``, default
``.memwb``). Tables (see :mod:`.schema`): ``spans`` (raw spans), the derived
``retrievals``, ``writes`` and ``answers`` (TRACES.md columns), ``verdicts``,
``eval_runs``, ``eval_queries``, ``sweep_trials``, ``ingest_batches``,
``health_reports``.

Concurrency model (what DuckDB allows, and how this module follows it)
---------------------------------------------------------------------
DuckDB lets exactly **one process** open a database file read-write; while it
holds the file, no other process can open it at all, not even read-only (the
open fails with "Could not set lock on file"). Several processes may open it
read-only at the same time when no writer holds it. Inside one process, any
number of threads may use one database instance through separate connections
(``cursor()``); readers see a consistent snapshot (MVCC) while a writer
appends.

So memwb runs:

* **one writer process** (the app with its engine, or ``memwb collect``, or
  ``memwb ingest``) holding a read-write :class:`Warehouse`; every thread gets
  its own connection (:meth:`Warehouse.connection`); writes are serialised by
  a lock and each batch is one transaction, so a reader in another thread
  sees a batch completely or not at all;
* other processes open the warehouse **on demand** (``hold=False``): each call
  opens the file, runs, and closes it, retrying for ``lock_timeout_s`` seconds
  while another process holds it. A writer that must share the file with
  other processes (e.g. ``memwb collect --no-hold``) uses ``hold=False`` too,
  so the lock is only held during a batch.

:meth:`Warehouse.open` returns one shared instance per file inside a process,
so the engine's exporter and the app's pages use the same database instance
(DuckDB refuses a second instance of the same file with another mode).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import orjson
import pyarrow as pa

from ..errors import WarehouseError
from .records import AnswerRow, RetrievalRow, SpanRecord, WriteRow, derive_row
from .schema import MIGRATIONS, SCHEMA_VERSION

WAREHOUSE_FILE = "warehouse.duckdb"

_SPAN_COLS = (
    "trace_id", "span_id", "parent_span_id", "name", "kind", "service", "scope", "start_ns", "end_ns",
    "duration_ms", "status_code", "status_message", "attributes", "resource", "events", "warnings",
    "source", "ingested_at",
)  # fmt: skip
_COMMON_COLS = ("trace_id", "span_id", "start_ns", "end_ns", "latency_ms", "service", "status_code")
_STR = pa.string()
_STRS = pa.list_(pa.string())
_DERIVED: dict[type, tuple[str, tuple[tuple[str, pa.DataType], ...]]] = {}


def arrow_type(typ: str) -> pa.DataType:
    """Arrow type of a derived-row dataclass field annotation (``str(field.type)``)."""
    if "list[float" in typ:
        return pa.list_(pa.float64())
    if "list[" in typ:
        return _STRS
    if typ.startswith("int"):
        return pa.int32()
    if typ.startswith("float"):
        return pa.float64()
    if typ.startswith("bool"):
        return pa.bool_()
    return _STR


for _cls, _table in ((RetrievalRow, "retrievals"), (WriteRow, "writes"), (AnswerRow, "answers")):
    _DERIVED[_cls] = (_table, tuple((f.name, arrow_type(str(f.type))) for f in fields(_cls)))


@dataclass(frozen=True)
class InsertResult:
    """Outcome of :meth:`Warehouse.insert_spans`: spans newly ``stored``,
    ``duplicate`` ones already present (or repeated in the batch), and the
    number of attribute ``warnings`` (decode + column coercion)."""

    stored: int
    duplicate: int
    warnings: int
    rejected: int = 0
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class IngestionHealth:
    """Ingestion counters summed over ``ingest_batches`` plus the spans whose
    parent span id is not in the warehouse (``orphaned_parents``)."""

    received: int
    stored: int
    duplicate: int
    rejected: int
    warnings: int
    orphaned_parents: int
    spans: int


def default_path(workspace: str | os.PathLike[str] | None = None) -> Path:
    """``<workspace>/warehouse.duckdb``; workspace defaults to ``$MEMWB_HOME`` or ``.memwb``
    (resolved by :mod:`memory_engine.workspace`)."""
    from ..paths import workspace_root

    return workspace_root(workspace) / WAREHOUSE_FILE


def _dumps(v: Any) -> str:
    try:
        return orjson.dumps(v).decode()
    except TypeError:  # ints beyond 64 bits, odd raw values: the stdlib copes
        return json.dumps(v, default=str)


def _utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Warehouse:
    """A DuckDB warehouse file (see the module docstring for concurrency).

    ``path`` a file path or ``":memory:"``; ``read_only`` opens without
    migrating (raises :class:`WarehouseError` when the file is missing or its
    schema is older than this code); ``hold`` keeps the file open (the writer
    process) versus opening it per call (other processes); ``lock_timeout_s``
    how long a per-call open retries while another process holds the file.
    """

    _shared: dict[str, Warehouse] = {}
    _shared_lock = threading.Lock()

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        hold: bool = True,
        lock_timeout_s: float = 10.0,
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        self.hold = hold or self.path == ":memory:"
        self.lock_timeout_s = lock_timeout_s
        self._write_lock = threading.RLock()
        self._local = threading.local()
        self._root: duckdb.DuckDBPyConnection | None = None
        if self.path != ":memory:" and not read_only:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        if read_only and self.path != ":memory:" and not Path(self.path).exists():
            raise WarehouseError(f"no warehouse at {self.path} (ingest traces or run the engine first)")
        con = self._connect()
        try:
            self._migrate(con)
        except BaseException:
            con.close()
            raise
        if self.hold:
            self._root = con
        else:
            con.close()

    # --- opening --------------------------------------------------------------
    @classmethod
    def open(
        cls, workspace: str | os.PathLike[str] | None = None, *, read_only: bool = False, hold: bool = True
    ) -> Warehouse:
        """The warehouse of a workspace, shared within the process.

        A read-write held instance is cached per file; a later ``open`` of the
        same file (read-only or not) in this process returns it, because DuckDB
        allows one instance per file and process.
        """
        path = default_path(workspace).resolve()
        key = str(path)
        with cls._shared_lock:
            wh = cls._shared.get(key)
            if wh is not None and wh._root is not None:
                return wh
            wh = cls(path, read_only=read_only, hold=hold)
            if hold and not read_only:
                cls._shared[key] = wh
            return wh

    @classmethod
    def shared(cls, workspace: str | os.PathLike[str] | None = None) -> Warehouse | None:
        """The read-write instance of the workspace's file already open in this process, or None."""
        key = str(default_path(workspace).resolve())
        with cls._shared_lock:
            wh = cls._shared.get(key)
            return wh if wh is not None and wh._root is not None else None

    def _connect(self) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.02
        while True:
            try:
                return duckdb.connect(self.path, read_only=self.read_only)
            except duckdb.IOException as e:
                if "lock" not in str(e).lower() or time.monotonic() >= deadline:
                    raise WarehouseError(f"cannot open warehouse {self.path}: {e}") from e
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
            except duckdb.Error as e:
                raise WarehouseError(f"cannot open warehouse {self.path}: {e}") from e

    def _migrate(self, con: duckdb.DuckDBPyConnection) -> None:
        has = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
        ).fetchone()
        current = 0
        if has and has[0]:
            row = con.execute("SELECT max(version) FROM schema_version").fetchone()
            current = int(row[0] or 0) if row else 0
        if current > SCHEMA_VERSION:
            raise WarehouseError(
                f"warehouse {self.path} has schema version {current}, newer than this code ({SCHEMA_VERSION})"
            )
        if current == SCHEMA_VERSION:
            return
        if self.read_only:
            raise WarehouseError(
                f"warehouse {self.path} has schema version {current}, expected {SCHEMA_VERSION}; "
                "open it read-write once to migrate"
            )
        if current == 0:
            con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP)")
        for version in range(current, SCHEMA_VERSION):
            try:
                con.execute("BEGIN TRANSACTION")
                con.execute(MIGRATIONS[version])
                con.execute("INSERT INTO schema_version VALUES (?, ?)", [version + 1, _utcnow()])
                con.execute("COMMIT")
            except duckdb.Error as e:
                con.execute("ROLLBACK")
                raise WarehouseError(f"migration {version}->{version + 1} of {self.path} failed: {e}") from e

    def schema_version(self) -> int:
        """Highest applied migration number."""
        row = self.fetchone("SELECT max(version) FROM schema_version")
        return int(row[0]) if row and row[0] is not None else 0

    @contextlib.contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for the calling thread (held) or a fresh per-call one (``hold=False``)."""
        if self._root is not None:
            con = getattr(self._local, "con", None)
            if con is None:
                con = self._root.cursor()
                self._local.con = con
            yield con
            return
        if self.hold:
            raise WarehouseError(f"warehouse {self.path} is closed")
        con = self._connect()
        try:
            yield con
        finally:
            con.close()

    def compact(self) -> tuple[int, int]:
        """Rewrite the DuckDB file so that deleted rows leave no bytes behind; returns the file size in
        bytes before and after.

        DuckDB marks deleted rows and frees their blocks, but neither ``CHECKPOINT`` nor ``VACUUM``
        overwrites them: an erased user's text stays readable in the file. This copies every table into a
        fresh file (``COPY FROM DATABASE``), swaps it in and reopens. Needs the held read-write instance
        (the process that owns the workspace); other threads must not use the warehouse meanwhile.
        Raises WarehouseError."""
        self._require_writable()
        if self.path == ":memory:":
            return (0, 0)
        if self._root is None:
            raise WarehouseError(f"warehouse {self.path} is not held by this process: compact from its owner")
        fresh = self.path + ".compact"
        with self._write_lock:
            for f in (fresh, fresh + ".wal"):
                if os.path.exists(f):
                    os.remove(f)
            con = self._root
            try:
                row = con.execute("SELECT current_database()").fetchone()
                db = str(row[0]) if row else ""
                con.execute("CHECKPOINT")
                before = os.path.getsize(self.path)
                quoted = fresh.replace("'", "''")
                con.execute(f"ATTACH '{quoted}' AS memwb_compact")
                try:
                    con.execute(f'COPY FROM DATABASE "{db}" TO memwb_compact')
                finally:
                    con.execute("DETACH memwb_compact")
                con.close()
                self._root = None
                self._local = threading.local()  # every thread's cursor belonged to the old file
                os.replace(fresh, self.path)
                if os.path.exists(self.path + ".wal"):
                    os.remove(self.path + ".wal")
                self._root = self._connect()
            except (duckdb.Error, OSError) as e:
                if self._root is None:
                    self._root = self._connect()
                raise WarehouseError(f"compacting warehouse {self.path} failed: {e}") from e
            return before, os.path.getsize(self.path)

    def close(self) -> None:
        """Close the held connection (idempotent) and forget the shared instance."""
        with self._shared_lock:
            for k, v in list(self._shared.items()):
                if v is self:
                    del self._shared[k]
        if self._root is not None:
            self._root.close()
            self._root = None

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- generic queries ---------------------------------------------------------
    def fetchall(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """Run a query and return all rows; DuckDB errors become WarehouseError."""
        with self.connection() as con:
            try:
                return con.execute(sql, params or []).fetchall()
            except duckdb.Error as e:
                raise WarehouseError(f"query failed: {e}") from e

    def fetchone(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> tuple[Any, ...] | None:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None

    def fetch_dicts(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Rows as dicts keyed by column name."""
        with self.connection() as con:
            try:
                cur = con.execute(sql, params or [])
                names = [d[0] for d in cur.description or ()]
                return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
            except duckdb.Error as e:
                raise WarehouseError(f"query failed: {e}") from e

    def fetch_df(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> Any:
        """A pandas DataFrame of the query result."""
        with self.connection() as con:
            try:
                return con.execute(sql, params or []).df()
            except duckdb.Error as e:
                raise WarehouseError(f"query failed: {e}") from e

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> None:
        """Run a write statement under the writer lock."""
        self._require_writable()
        with self._write_lock, self.connection() as con:
            try:
                con.execute(sql, params or [])
            except duckdb.Error as e:
                raise WarehouseError(f"statement failed: {e}") from e

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one write statement for every parameter row, in one transaction under the writer lock
        (all rows or none: an error rolls back and raises WarehouseError)."""
        self._require_writable()
        if not rows:
            return
        with self._write_lock, self.connection() as con:
            try:
                con.execute("BEGIN TRANSACTION")
                con.executemany(sql, rows)
                con.execute("COMMIT")
            except duckdb.Error as e:
                with contextlib.suppress(duckdb.Error):
                    con.execute("ROLLBACK")
                raise WarehouseError(f"statement failed: {e}") from e

    def _require_writable(self) -> None:
        if self.read_only:
            raise WarehouseError(f"warehouse {self.path} is open read-only")

    # --- spans -------------------------------------------------------------------------
    def insert_spans(self, records: Iterable[SpanRecord], *, source: str = "sdk") -> InsertResult:
        """Insert span records (and their derived rows) in one transaction.

        A record the columns cannot hold (a value Arrow refuses, such as a
        lone surrogate in a name) is counted in ``rejected`` with its reason;
        the others are stored. Batches go through Arrow (``INSERT OR IGNORE ... SELECT FROM arrow``),
        never row by row. Spans already stored (same trace id + span id) and
        repeats inside the batch count as ``duplicate``. Raises WarehouseError.
        """
        self._require_writable()
        recs = list(records)
        if not recs:
            return InsertResult(0, 0, 0)
        spans, derived, n_warn, bad = build_arrow_batches_checked(recs, source=source)
        reasons = tuple(f"span {recs[i].name!r}: {why}" for i, why in bad)
        if len(bad) == len(recs):
            return InsertResult(0, 0, n_warn, rejected=len(bad), reasons=reasons)
        with self._write_lock, self.connection() as con:
            try:
                con.execute("BEGIN TRANSACTION")
                stored = insert_span_tables(con, spans, derived)
                con.execute("COMMIT")
            except duckdb.Error as e:
                with contextlib.suppress(duckdb.Error):
                    con.execute("ROLLBACK")
                raise WarehouseError(f"inserting {len(recs)} spans failed: {e}") from e
        return InsertResult(
            stored=stored, duplicate=len(recs) - len(bad) - stored, warnings=n_warn, rejected=len(bad), reasons=reasons
        )

    def record_ingest(
        self, *, source: str, received: int, stored: int, duplicate: int, rejected: int, warnings: int
    ) -> None:
        """Append one row to ``ingest_batches`` (a file, an HTTP request, an export batch)."""
        self.execute(
            "INSERT INTO ingest_batches VALUES (?, ?, ?, ?, ?, ?, ?)",
            [_utcnow(), source, received, stored, duplicate, rejected, warnings],
        )

    def ingestion_health(self) -> IngestionHealth:
        """Counters over every recorded ingest batch, plus orphaned parents.

        ``orphaned_parents`` counts spans whose ``parent_span_id`` is set but no
        span of the same trace has that id (a partial trace, or a parent still
        in flight).
        """
        row = self.fetchone(
            "SELECT coalesce(sum(received),0), coalesce(sum(stored),0), coalesce(sum(duplicate),0), "
            "coalesce(sum(rejected),0), coalesce(sum(warnings),0) FROM ingest_batches"
        )
        orphans = self.fetchone(
            "SELECT count(*) FROM spans c WHERE c.parent_span_id IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM spans p WHERE p.trace_id = c.trace_id AND p.span_id = c.parent_span_id)"
        )
        total = self.fetchone("SELECT count(*) FROM spans")
        assert row is not None and orphans is not None and total is not None
        received, stored, duplicate, rejected, warnings = (int(x) for x in row)
        return IngestionHealth(
            received=received, stored=stored, duplicate=duplicate, rejected=rejected, warnings=warnings,
            orphaned_parents=int(orphans[0]), spans=int(total[0]),
        )  # fmt: skip

    def count_spans(self) -> int:
        row = self.fetchone("SELECT count(*) FROM spans")
        return int(row[0]) if row else 0

    # --- evaluation runs and sweeps --------------------------------------------------------
    def save_eval_run(
        self,
        run_id: str,
        *,
        suite: str,
        config: Mapping[str, Any] | None = None,
        config_hash: str | None = None,
        git_commit: str | None = None,
        started_at: datetime | None = None,
        finished_at: datetime | None = None,
        metrics: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        queries: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        """Store (or replace) an evaluation run and its per-query rows.

        ``queries`` items are mappings with ``case_id``, ``query_id``,
        ``metrics`` (mapping) and optional ``details`` (mapping). JSON columns
        keep the shapes generic for the evaluation code.
        """
        qrows = [
            (run_id, str(q["case_id"]), str(q["query_id"]), _dumps(q.get("metrics") or {}), _dumps(q.get("details")))
            for q in queries
        ]
        self._require_writable()
        with self._write_lock, self.connection() as con:
            try:
                con.execute("BEGIN TRANSACTION")
                con.execute("DELETE FROM eval_queries WHERE run_id = ?", [run_id])
                con.execute("DELETE FROM eval_runs WHERE run_id = ?", [run_id])
                con.execute(
                    "INSERT INTO eval_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        run_id, suite, _dumps(config or {}), config_hash, git_commit,
                        _naive(started_at), _naive(finished_at), _dumps(metrics or {}), _dumps(meta or {}),
                    ],
                )  # fmt: skip
                if qrows:
                    tbl = pa.table(
                        {k: [r[i] for r in qrows] for i, k in enumerate(("run_id", "case_id", "query_id", "metrics", "details"))}
                    )
                    con.register("_batch_q", tbl)
                    con.execute("INSERT INTO eval_queries SELECT * FROM _batch_q")
                    con.unregister("_batch_q")
                con.execute("COMMIT")
            except duckdb.Error as e:
                with contextlib.suppress(duckdb.Error):
                    con.execute("ROLLBACK")
                raise WarehouseError(f"saving eval run {run_id!r} failed: {e}") from e

    def list_eval_runs(self, *, suite: str | None = None, limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
        """Runs newest first; JSON columns decoded. Keys: run_id, suite, config, config_hash,
        git_commit, started_at, finished_at (UTC datetimes), metrics, meta."""
        rows = self.fetch_dicts(
            "SELECT * FROM eval_runs WHERE (? IS NULL OR suite = ?) "
            "ORDER BY started_at DESC NULLS LAST, run_id LIMIT ? OFFSET ?",
            [suite, suite, limit, offset],
        )
        return [_decode_json_cols(r, ("config", "metrics", "meta"), ("started_at", "finished_at")) for r in rows]

    def eval_queries(self, run_id: str) -> list[dict[str, Any]]:
        """Per-query rows of one run (case_id, query_id, metrics, details)."""
        rows = self.fetch_dicts(
            "SELECT * FROM eval_queries WHERE run_id = ? ORDER BY case_id, query_id", [run_id]
        )
        return [_decode_json_cols(r, ("metrics", "details"), ()) for r in rows]

    def save_sweep_trial(
        self,
        sweep_id: str,
        trial_number: int,
        *,
        params: Mapping[str, Any],
        metrics: Mapping[str, Any],
        duration_s: float | None = None,
        state: str = "complete",
        created_at: datetime | None = None,
    ) -> None:
        """Store (or replace) one sweep trial; ``duration_s`` in seconds."""
        self.execute(
            "INSERT OR REPLACE INTO sweep_trials VALUES (?, ?, ?, ?, ?, ?, ?)",
            [sweep_id, trial_number, _dumps(params), _dumps(metrics), duration_s, state,
             _naive(created_at) or _utcnow()],
        )  # fmt: skip

    def list_sweep_trials(self, sweep_id: str) -> list[dict[str, Any]]:
        """Trials of a sweep by trial number (params, metrics decoded)."""
        rows = self.fetch_dicts("SELECT * FROM sweep_trials WHERE sweep_id = ? ORDER BY trial_number", [sweep_id])
        return [_decode_json_cols(r, ("params", "metrics"), ("created_at",)) for r in rows]

    def list_sweeps(self) -> list[dict[str, Any]]:
        """One row per sweep id: trials, first and last created_at."""
        rows = self.fetch_dicts(
            "SELECT sweep_id, count(*) AS trials, min(created_at) AS first_at, max(created_at) AS last_at "
            "FROM sweep_trials GROUP BY sweep_id ORDER BY last_at DESC"
        )
        return [_decode_json_cols(r, (), ("first_at", "last_at")) for r in rows]


def _naive(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC).replace(tzinfo=None)
    return dt


def _aware(dt: Any) -> Any:
    return dt.replace(tzinfo=UTC) if isinstance(dt, datetime) and dt.tzinfo is None else dt


def _decode_json_cols(row: dict[str, Any], json_cols: Sequence[str], time_cols: Sequence[str]) -> dict[str, Any]:
    for c in json_cols:
        v = row.get(c)
        if isinstance(v, str):
            row[c] = orjson.loads(v)
    for c in time_cols:
        row[c] = _aware(row.get(c))
    return row


def insert_span_tables(con: duckdb.DuckDBPyConnection, spans: pa.Table, derived: Mapping[str, pa.Table]) -> int:
    """Insert one batch of span rows and their derived rows inside the caller's open transaction.

    ``spans`` has the ``spans`` columns (any subset, by name); ``derived`` maps
    a derived table name to its rows. Returns the spans newly stored.

    The spans primary key decides: ``INSERT OR IGNORE ... RETURNING`` stores
    the spans not yet present (of repeats inside the batch, the first) and
    names them; a derived row goes in exactly when its span was newly stored
    (the derived tables have no key of their own since schema v2), so
    re-ingesting adds nothing anywhere. Raises ``duckdb.Error``.
    """
    cols = ", ".join(spans.column_names)
    con.register("_batch_spans", spans)
    try:
        # con.sql runs the statement once and holds its result (execute() + Arrow would copy the rows)
        new = con.sql(
            f"INSERT OR IGNORE INTO spans ({cols}) SELECT {cols} FROM _batch_spans RETURNING trace_id, span_id"
        ).to_arrow_table()
    finally:
        con.unregister("_batch_spans")
    stored = new.num_rows
    if not stored:
        return 0
    all_new = stored == spans.num_rows  # no span was present or repeated: every derived row belongs
    link: set[str] = set()
    for table, tbl in derived.items():
        if not tbl.num_rows:
            continue
        if not all_new:
            tbl = _rows_of_new_spans(tbl, new)
        dcols = ", ".join(tbl.column_names)
        con.register("_batch_derived", tbl)
        try:
            con.execute(f"INSERT INTO {table} ({dcols}) SELECT {dcols} FROM _batch_derived")
        finally:
            con.unregister("_batch_derived")
        link.update(_foreign_trace_ids(table, tbl))
    if link:
        from .citations import link_foreign_answers

        link_foreign_answers(con, link)
    return stored


def _foreign_trace_ids(table: str, tbl: pa.Table) -> set[str]:
    """Traces of a batch that hold another agent's answer or retrieval (to link citations)."""
    import pyarrow.compute as pc

    if table == "answers":
        mask = pc.and_(pc.is_null(tbl.column("retrieve_span_id")), pc.is_null(tbl.column("cited_ids")))
    elif table == "retrievals":
        mask = pc.fill_null(pc.not_equal(tbl.column("origin"), "memwb"), True)
    else:
        return set()
    return set(pc.unique(tbl.column("trace_id").filter(mask)).to_pylist())


def span_keys(tbl: pa.Table) -> pa.ChunkedArray:
    """One ``trace_id/span_id`` string per row: the spans key as a single Arrow column."""
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(tbl.column("trace_id"), tbl.column("span_id"), "/")


def first_wins(tbl: pa.Table) -> pa.Table:
    """Drop repeated (trace_id, span_id) rows, keeping the one with the smallest ``_ord``."""
    import pyarrow.compute as pc

    if tbl.num_rows < 2:
        return tbl
    key = span_keys(tbl)
    if pc.count_distinct(key).as_py() == tbl.num_rows:
        return tbl
    firsts = pa.table({"k": key, "o": tbl.column("_ord")}).group_by("k").aggregate([("o", "min")])
    return tbl.filter(pc.is_in(tbl.column("_ord"), firsts.column("o_min")))


def _rows_of_new_spans(tbl: pa.Table, new: pa.Table) -> pa.Table:
    """The rows of ``tbl`` whose (trace_id, span_id) is in ``new``, the first of any repeated key."""
    import pyarrow.compute as pc

    kept = tbl.append_column("_ord", pa.array(np.arange(tbl.num_rows, dtype=np.int64)))
    kept = kept.filter(pc.is_in(span_keys(tbl), value_set=span_keys(new)))
    return first_wins(kept).drop_columns(["_ord"])


_BUILD_ERRORS = (pa.ArrowException, OverflowError, ValueError, TypeError, UnicodeError)


def build_arrow_batches_checked(
    recs: Sequence[SpanRecord], *, source: str
) -> tuple[pa.Table, dict[str, pa.Table], int, list[tuple[int, str]]]:
    """:func:`build_arrow_batches` that never raises for a bad record: when the batch cannot be built,
    each record is tried alone and the ones that fail are left out, returned as ``(index, reason)`` (the
    others are built, so one caller's bad value never costs the rest of the batch)."""
    try:
        return (*build_arrow_batches(recs, source=source), [])
    except _BUILD_ERRORS:
        pass
    bad: list[tuple[int, str]] = []
    for i, r in enumerate(recs):
        try:
            build_arrow_batches([r], source=source)
        except _BUILD_ERRORS as e:
            bad.append((i, f"cannot be stored ({type(e).__name__}: {str(e)[:120]})"))
    drop = {i for i, _ in bad}
    good = [r for i, r in enumerate(recs) if i not in drop]
    spans, derived, n_warn = build_arrow_batches(good, source=source)
    return spans, derived, n_warn, bad


def build_arrow_batches(
    recs: Sequence[SpanRecord], *, source: str
) -> tuple[pa.Table, dict[str, pa.Table], int]:
    """Arrow tables for ``spans`` and each derived table, plus the warning count.

    Pure (apart from the ``ingested_at`` stamp). Resource mappings shared by
    many spans are serialised once.
    """
    n = len(recs)
    cols: dict[str, list[Any]] = {c: [None] * n for c in _SPAN_COLS[:-2]}
    res_cache: dict[int, str] = {}
    derived_cols: dict[type, dict[str, list[Any]]] = {}
    n_warn = 0
    empty_events = "[]"
    for i, r in enumerate(recs):
        cols["trace_id"][i] = r.trace_id
        cols["span_id"][i] = r.span_id
        cols["parent_span_id"][i] = r.parent_span_id
        cols["name"][i] = r.name
        cols["kind"][i] = r.kind
        cols["service"][i] = r.service
        cols["scope"][i] = r.scope
        cols["start_ns"][i] = r.start_ns
        cols["end_ns"][i] = r.end_ns
        cols["duration_ms"][i] = (r.end_ns - r.start_ns) / 1e6
        cols["status_code"][i] = r.status_code
        cols["status_message"][i] = r.status_message
        cols["attributes"][i] = _dumps(r.attributes or {})
        res = r.resource
        if res is None:
            cols["resource"][i] = None
        else:
            s = res_cache.get(id(res))
            if s is None:
                s = res_cache[id(res)] = _dumps(res)
            cols["resource"][i] = s
        cols["events"][i] = _dumps(list(r.events)) if r.events else empty_events
        warns = list(r.warnings)
        row, dwarn = derive_row(r)
        if dwarn:
            warns.extend(dwarn)
        if row is not None:
            dc = derived_cols.get(type(row))
            if dc is None:
                dc = derived_cols[type(row)] = {c: [] for c in _COMMON_COLS} | {
                    f: [] for f, _ in _DERIVED[type(row)][1]
                }
            dc["trace_id"].append(r.trace_id)
            dc["span_id"].append(r.span_id)
            dc["start_ns"].append(r.start_ns)
            dc["end_ns"].append(r.end_ns)
            dc["latency_ms"].append((r.end_ns - r.start_ns) / 1e6)
            dc["service"].append(r.service)
            dc["status_code"].append(r.status_code)
            for f, _ in _DERIVED[type(row)][1]:
                dc[f].append(getattr(row, f))
        cols["warnings"][i] = warns or None
        n_warn += len(warns)
    now = _utcnow()
    arrays = {c: cols[c] for c in _SPAN_COLS[:-2]}
    schema = pa.schema(
        [
            ("trace_id", _STR), ("span_id", _STR), ("parent_span_id", _STR), ("name", _STR), ("kind", _STR),
            ("service", _STR), ("scope", _STR), ("start_ns", pa.int64()), ("end_ns", pa.int64()),
            ("duration_ms", pa.float64()), ("status_code", _STR), ("status_message", _STR),
            ("attributes", _STR), ("resource", _STR), ("events", _STR), ("warnings", _STRS),
            ("source", _STR), ("ingested_at", pa.timestamp("us")),
        ]
    )  # fmt: skip
    arrays["source"] = [source] * n
    arrays["ingested_at"] = [now] * n
    spans = pa.Table.from_pydict(arrays, schema=schema)
    derived: dict[str, pa.Table] = {}
    common_types = [
        ("trace_id", _STR), ("span_id", _STR), ("start_ns", pa.int64()), ("end_ns", pa.int64()),
        ("latency_ms", pa.float64()), ("service", _STR), ("status_code", _STR),
    ]  # fmt: skip
    for cls, dc in derived_cols.items():
        table, ftypes = _DERIVED[cls]
        derived[table] = pa.Table.from_pydict(dc, schema=pa.schema(common_types + list(ftypes)))
    return spans, derived, n_warn
