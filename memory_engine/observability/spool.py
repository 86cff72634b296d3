"""One owner of a workspace's warehouse, many writers: the owner file and the spool.

DuckDB lets one process hold ``warehouse.duckdb`` for writing (see :mod:`.warehouse`).
The process that holds it for long - ``memwb app`` or ``memwb collect`` - is the
workspace's **owner**: it writes ``<workspace>/owner.json`` (pid, host, OTLP/HTTP
receiver URL) and drains the **spool**, ``<workspace>/spool/``, a durable queue of
files. Every other writer (``memwb ingest``, ``eval``, ``ci``, ``sweep``, the engine's
span exporter in another process) finds the owner file and, instead of failing on
the file lock, appends to the spool through :class:`SpoolWriter`, which offers the
warehouse's write methods.

Durability: a spool file is written to a temporary name, flushed, fsynced and
renamed into place (``os.replace`` is atomic), so the owner sees whole files or
nothing. The owner applies one file in one transaction and deletes it only after
the commit; if it dies between the two, the file is applied again on the next
drain, which changes nothing (spans are keyed by trace and span id, eval runs
by run id, sweep trials by sweep and trial number: every operation is
idempotent). Nothing is lost when the owner stops mid-way: files wait for the
next owner (or the next process that opens the warehouse itself and drains).

File kinds (name ``<ns>-<pid>-<seq>.<kind>``, applied in name order):

* ``.spans.jsonl`` - a header line ``{"source", "received", "rejected"}`` then one
  :class:`~.records.SpanRecord` per line; applied with ``insert_spans`` and one
  ``ingest_batches`` row carrying the real stored/duplicate counts;
* ``.call.json`` - ``{"method", "kwargs"}`` for an allow-listed warehouse method
  (:data:`SPOOL_METHODS`), or an ``erase_user_warehouse`` request;
* ``.file/`` - a directory holding one OTLP trace file to ingest
  (``memwb ingest`` beside the app), its result written to ``<name>.result.json``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import MemoryEngineError, TraceIngestError, ValidationError
from .records import SpanRecord
from .warehouse import InsertResult, Warehouse

log = logging.getLogger(__name__)

OWNER_FILE = paths.OWNER_FILE
SPOOL_DIR = paths.SPOOL_DIR
SPOOL_METHODS = frozenset({"save_eval_run", "save_sweep_trial", "record_ingest"})
"""Warehouse methods a :class:`SpoolWriter` forwards (each idempotent or append-only)."""

_seq = itertools.count()


# --- the owner file ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OwnerInfo:
    """Who holds a workspace's warehouse: process id, host name, what it is (``app``/``collect``),
    its OTLP/HTTP receiver (``None`` when it has none), since when (epoch seconds), where it serves
    its vector store to other processes (:mod:`memory_engine.store.remote`) and read-only warehouse
    queries (:mod:`.remote_reads`); the tokens are secret."""

    pid: int
    host: str
    kind: str
    otlp_url: str | None
    since: float
    store_url: str | None = None
    store_token: str | None = None
    read_url: str | None = None
    read_token: str | None = None

    @property
    def traces_url(self) -> str | None:
        return f"{self.otlp_url.rstrip('/')}/v1/traces" if self.otlp_url else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def find_owner(workspace: str | os.PathLike[str]) -> OwnerInfo | None:
    """The live owner of ``workspace``, or None (no owner file, or its process is gone, or another host)."""
    p = paths.workspace_paths(workspace).owner
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
        info = OwnerInfo(int(d["pid"]), str(d["host"]), str(d["kind"]), d.get("otlp_url"), float(d["since"]),
                         d.get("store_url"), d.get("store_token"), d.get("read_url"), d.get("read_token"))  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if info.host != socket.gethostname() or not _alive(info.pid):
        return None
    return info


def write_owner(
    workspace: str | os.PathLike[str], kind: str, otlp_url: str | None, *, store_url: str | None = None,
    store_token: str | None = None, read_url: str | None = None, read_token: str | None = None,
) -> OwnerInfo:  # fmt: skip
    """Claim the workspace: write ``owner.json`` for this process (atomically, readable by its user only:
    it carries the store and read tokens)."""
    info = OwnerInfo(os.getpid(), socket.gethostname(), kind, otlp_url, time.time(), store_url, store_token,
                     read_url, read_token)  # fmt: skip
    _atomic_write(paths.workspace_paths(workspace).owner, json.dumps(asdict(info)).encode(), mode=0o600)
    return info


def clear_owner(workspace: str | os.PathLike[str]) -> None:
    """Remove ``owner.json`` when this process wrote it."""
    p = paths.workspace_paths(workspace).owner
    with contextlib.suppress(OSError, ValueError, KeyError):
        if json.loads(p.read_text(encoding="utf-8"))["pid"] == os.getpid():
            p.unlink()


# --- writing to the spool ----------------------------------------------------------------------------
def spool_dir(workspace: str | os.PathLike[str]) -> Path:
    return paths.workspace_paths(workspace).spool


def _name(kind: str) -> str:
    return f"{time.time_ns():020d}-{os.getpid()}-{next(_seq):06d}.{kind}"


def _atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _json_default(v: Any) -> Any:
    if isinstance(v, datetime):
        return {"__datetime__": v.isoformat()}
    if isinstance(v, tuple | set | frozenset):
        return list(v)
    # json's default= protocol: a TypeError says "not serialisable"
    raise TypeError(f"not JSON serialisable: {type(v).__name__}")


def _json_hook(d: dict[str, Any]) -> Any:
    if len(d) == 1 and "__datetime__" in d:
        return datetime.fromisoformat(d["__datetime__"])
    return d


def _record_line(r: SpanRecord) -> str:
    return json.dumps(asdict(r), default=_json_default, ensure_ascii=False)


def _record_of(d: Mapping[str, Any]) -> SpanRecord:
    return SpanRecord(**{**d, "events": tuple(d.get("events") or ()), "warnings": tuple(d.get("warnings") or ())})


class SpoolWriter:
    """The write side of a :class:`~.warehouse.Warehouse` for a process that does not own the file:
    every write becomes a spool file the owner applies (see the module docstring).

    ``insert_spans`` returns an :class:`~.warehouse.InsertResult` counting the spans as queued
    (``stored`` 0, ``queued`` on :attr:`queued`); ``record_ingest`` calls are dropped because the
    owner records the real counts when it applies the spans.
    """

    def __init__(self, workspace: str | os.PathLike[str], owner: OwnerInfo | None = None) -> None:
        self.workspace = Path(workspace)
        self.dir = spool_dir(workspace)
        self.owner = owner
        self.queued = 0
        self.read_only = False
        self.path = str(self.workspace / "warehouse.duckdb")

    def insert_spans(self, records: Iterable[SpanRecord], *, source: str = "sdk", rejected: int = 0) -> InsertResult:
        recs = list(records)
        if recs or rejected:
            head = json.dumps({"source": source, "received": len(recs) + rejected, "rejected": rejected})
            body = "\n".join([head, *(_record_line(r) for r in recs)]) + "\n"
            _atomic_write(self.dir / _name("spans.jsonl"), body.encode("utf-8"))
            self.queued += len(recs)
        return InsertResult(stored=0, duplicate=0, warnings=0)

    def record_ingest(self, **_: Any) -> None:
        """Dropped: the owner records the real counts when it applies the queued spans."""

    def call(self, method: str, **kwargs: Any) -> Path:
        """Queue one allow-listed warehouse call (or ``erase_user_warehouse``); returns the spool file."""
        if method not in SPOOL_METHODS and method != "erase_user_warehouse":
            raise ValidationError(f"{method!r} cannot go through the spool", field="method")
        path = self.dir / _name("call.json")
        _atomic_write(path, json.dumps({"method": method, "kwargs": kwargs}, default=_json_default).encode())
        return path

    def queue_erase(self, *, user_id: str, tenant_id: str, mode: str, salt: str = "") -> Path:
        """Queue the erase of an owner's warehouse rows (``lifecycle.forget.erase_user_warehouse`` calls
        this on a spool writer; the owner applies it with that same function)."""
        return self.call("erase_user_warehouse", user_id=user_id, tenant_id=tenant_id, mode=mode, salt=salt)

    def save_eval_run(self, run_id: str, **kwargs: Any) -> None:
        self.call("save_eval_run", run_id=run_id, **kwargs)

    def save_sweep_trial(self, sweep_id: str, trial_number: int, **kwargs: Any) -> None:
        self.call("save_sweep_trial", sweep_id=sweep_id, trial_number=trial_number, **kwargs)

    def queue_file(self, path: str | os.PathLike[str]) -> Path:
        """Queue an OTLP trace file for ingest by the owner (copied: the original may go away).
        Returns the result path the owner writes (:func:`wait_result`)."""
        src = Path(path)
        d = self.dir / _name("file")
        tmp = d.with_name(f".tmp-{d.name}")
        tmp.mkdir(parents=True)
        shutil.copyfile(src, tmp / src.name)
        with open(tmp / src.name, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, d)
        return d.with_name(d.name + ".result.json")

    def close(self) -> None:
        """Nothing to release (the owner holds the file)."""


def wait_result(path: Path, timeout_s: float) -> dict[str, Any] | None:
    """The owner's result for a queued file, waiting up to ``timeout_s`` seconds (None if not yet)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            with contextlib.suppress(OSError):
                path.unlink()
            return doc
        except (OSError, ValueError):
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)


def pending(workspace: str | os.PathLike[str]) -> int:
    """Spool entries not yet applied."""
    d = spool_dir(workspace)
    if not d.is_dir():
        return 0
    return sum(1 for p in d.iterdir() if not p.name.startswith(".") and not p.name.endswith(".result.json"))


# --- draining (the owner) -----------------------------------------------------------------------------------
def drain(wh: Warehouse, workspace: str | os.PathLike[str], *, max_entries: int | None = None) -> int:
    """Apply spool entries in name order (each in its own transaction, deleted after it commits).

    Returns the number applied. An entry that cannot be read is moved to ``spool/failed/`` with a
    ``.why`` note (never applied half, never retried forever)."""
    d = spool_dir(workspace)
    if not d.is_dir():
        return 0
    entries = sorted(p for p in d.iterdir() if not p.name.startswith(".") and p.name != "failed"
                     and not p.name.endswith(".result.json"))  # fmt: skip
    done = 0
    for p in entries[:max_entries] if max_entries else entries:
        try:
            _apply(wh, p)
        except Exception as e:  # noqa: BLE001 - one bad entry must not block the queue
            log.exception("spool entry %s failed", p.name)
            failed = d / "failed"
            failed.mkdir(exist_ok=True)
            with contextlib.suppress(OSError):
                os.replace(p, failed / p.name)
                (failed / f"{p.name}.why").write_text(f"{type(e).__name__}: {e}\n", encoding="utf-8")
            continue
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
        done += 1
    return done


def _apply(wh: Warehouse, p: Path) -> None:
    if p.name.endswith(".spans.jsonl"):
        lines = p.read_text(encoding="utf-8").splitlines()
        head = json.loads(lines[0])
        recs = [_record_of(json.loads(line, object_hook=_json_hook)) for line in lines[1:] if line]
        res = wh.insert_spans(recs, source=head["source"])
        wh.record_ingest(
            source=head["source"], received=int(head["received"]), stored=res.stored, duplicate=res.duplicate,
            rejected=int(head.get("rejected", 0)) + res.rejected, warnings=res.warnings,
        )  # fmt: skip
    elif p.name.endswith(".call.json"):
        doc = json.loads(p.read_text(encoding="utf-8"), object_hook=_json_hook)
        method, kwargs = doc["method"], doc.get("kwargs") or {}
        if method == "erase_user_warehouse":
            from ..lifecycle.forget import erase_user_warehouse

            erase_user_warehouse(wh, kwargs["user_id"], tenant_id=kwargs.get("tenant_id", "default"),
                                 mode=kwargs.get("mode", "delete"), salt=kwargs.get("salt", ""))  # fmt: skip
        elif method in SPOOL_METHODS:
            getattr(wh, method)(**kwargs)
        else:
            raise ValidationError(f"unknown spool method {method!r}", field="method")
    elif p.name.endswith(".file") and p.is_dir():
        from .ingest import ingest_file

        (f,) = [x for x in p.iterdir() if x.is_file()]
        result = p.with_name(p.name + ".result.json")
        try:
            s = ingest_file(wh, f)
            out = {"ok": True, "ingested": s.ingested, "duplicate": s.duplicate, "rejected": s.rejected,
                   "malformed": s.malformed, "warnings": s.warnings, "problems": [str(x) for x in s.problems[:50]]}  # fmt: skip
        except TraceIngestError as e:  # the CLI names its own file: the reason only (the spool copy's path is noise)
            out = {"ok": False, "error": e.reason}
        except Exception as e:  # noqa: BLE001 - reported to the waiting CLI, the file is not retried
            out = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        _atomic_write(result, json.dumps(out).encode())
    else:
        raise ValidationError(f"unknown spool entry {p.name!r}")


# --- the process's engine (the owner's, shared with the app's pages) ----------------------------------------
_ENGINES: dict[str, Any] = {}


def register_engine(workspace: str | os.PathLike[str], engine: Any) -> None:
    """Make ``engine`` the engine of ``workspace`` in this process (the app's pages use it)."""
    _ENGINES[str(Path(workspace).resolve())] = engine


def process_engine(workspace: str | os.PathLike[str]) -> Any | None:
    """The engine registered for ``workspace`` in this process, if any."""
    return _ENGINES.get(str(Path(workspace).resolve()))


# --- the owner's services -------------------------------------------------------------------------------
class Owner:
    """What the owning process runs beside its work: the owner file, an OTLP/HTTP receiver on
    ``otlp_port`` (None: no receiver; 0: a free port) and a thread draining the spool every
    ``interval_s`` seconds. :meth:`start` drains once before returning; :meth:`stop` drains a last
    time and removes the owner file."""

    def __init__(
        self, wh: Warehouse, workspace: str | os.PathLike[str], *, kind: str, otlp_port: int | None = 4318,
        host: str = "127.0.0.1", interval_s: float = 0.5, max_body_bytes: int | None = None,
        collector_kw: dict[str, Any] | None = None, store: Any = None,
    ) -> None:  # fmt: skip
        self.store = store  # served to other processes (store.remote) when given
        self.store_server: Any = None
        self.read_server: Any = None  # read-only warehouse queries for other processes (remote_reads)
        self.collector_kw = dict(collector_kw or {})  # api_keys and timeouts of the receiver (CollectorServer)
        self.wh = wh
        self.workspace = Path(workspace)
        self.kind = kind
        self.otlp_port = otlp_port
        self.host = host
        self.interval_s = interval_s
        self.collector: Any = None
        self.info: OwnerInfo | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.receiver_error: str | None = None
        self.max_body_bytes = max_body_bytes

    def start(self) -> Owner:
        url = None
        if self.otlp_port is not None:
            from .collector import CollectorServer

            try:
                kw: dict[str, Any] = {"max_body_bytes": self.max_body_bytes} if self.max_body_bytes else {}
                kw.update(self.collector_kw)
                self.collector = CollectorServer(self.wh, host=self.host, port=self.otlp_port, **kw).start()
                url = self.collector.url
            except (RuntimeError, OSError, MemoryEngineError) as e:  # port taken, exposure refused: the spool still works
                self.collector = None
                self.receiver_error = f"OTLP receiver not started on {self.host}:{self.otlp_port}: {e}"
                log.warning(self.receiver_error)
        store_url = store_token = None
        if self.store is not None:
            from ..store.remote import StoreServer

            self.store_server = StoreServer(self.store, host="127.0.0.1", port=0).start()
            store_url, store_token = self.store_server.url, self.store_server.token
        from .remote_reads import WarehouseReadServer

        self.read_server = WarehouseReadServer(self.wh, host="127.0.0.1", port=0).start()
        self.info = write_owner(self.workspace, self.kind, url, store_url=store_url, store_token=store_token,
                                read_url=self.read_server.url, read_token=self.read_server.token)  # fmt: skip
        drain(self.wh, self.workspace)
        self._thread = threading.Thread(target=self._loop, name="memwb-spool", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                drain(self.wh, self.workspace)
            except Exception:  # noqa: BLE001 - keep draining later
                log.exception("draining the spool failed")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        if self.collector is not None:
            self.collector.stop()
        if self.store_server is not None:
            self.store_server.stop()
        if self.read_server is not None:
            self.read_server.stop()
        with contextlib.suppress(Exception):
            drain(self.wh, self.workspace)
        clear_owner(self.workspace)


def open_writer(workspace: str | os.PathLike[str], *, lock_timeout_s: float = 2.0) -> Warehouse | SpoolWriter:
    """The warehouse to write into from this process: the file itself when nobody else holds it (the spool
    is drained first, so nothing queued waits), else a :class:`SpoolWriter` the owner drains. Never fails
    because another process holds the file."""
    from ..errors import WarehouseError
    from .warehouse import default_path

    owner = find_owner(workspace)
    if owner is not None and owner.pid != os.getpid():
        return SpoolWriter(workspace, owner)
    path = default_path(workspace).resolve()
    shared = Warehouse._shared.get(str(path))
    if shared is not None and shared._root is not None:
        return shared
    try:
        wh = Warehouse(path, lock_timeout_s=lock_timeout_s)
    except WarehouseError as e:
        if "lock" not in str(e).lower():
            raise
        return SpoolWriter(workspace, None)
    with Warehouse._shared_lock:
        Warehouse._shared.setdefault(str(path), wh)
    drain(wh, workspace)
    return wh


def owner_reader(workspace: str | os.PathLike[str]) -> Warehouse | None:
    """A :class:`.remote_reads.RemoteWarehouse` on the live owner of ``workspace`` when another process owns it and
    serves reads, else None (open the file yourself)."""
    from .remote_reads import RemoteWarehouse
    from .warehouse import default_path

    owner = find_owner(workspace)
    if owner is None or owner.pid == os.getpid() or not owner.read_url or not owner.read_token:
        return None
    return RemoteWarehouse(default_path(workspace).resolve(), owner.read_url, owner.read_token)


def open_reader(workspace: str | os.PathLike[str], *, fallback: Any = None) -> Warehouse:
    """The warehouse to read from in this process: the owner's (over loopback) when another process owns
    the workspace, else ``fallback()`` (default: the file opened read-only on demand). A file held by a
    process that serves no reads raises WarehouseError whose ``hint`` is :data:`.remote_reads.READ_LOCK_HINT`."""
    from ..errors import WarehouseError
    from .remote_reads import READ_LOCK_HINT

    remote = owner_reader(workspace)
    if remote is not None:
        return remote
    try:
        if fallback is not None:
            wh: Warehouse = fallback()
            return wh
        return Warehouse.open(workspace, read_only=True, hold=False)
    except WarehouseError as e:
        if "lock" in str(e).lower():
            e.hint = READ_LOCK_HINT
        raise
