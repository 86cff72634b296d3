"""Embedded vector store on a qdrant-edge shard (the default backend).

One shard directory holds every memory of every tenant: named dense vector
``dense`` (cosine) and named sparse vector ``sparse`` with the IDF modifier,
plus payload indexes on :data:`~memory_engine.store.base.INDEXED_FIELDS`.
Next to edge's own files the directory holds ``memwb_store.json`` with the
dense dimension, so reopening with another embedder fails loudly.

Measured pitfalls of qdrant-edge-py 0.9 this module works around:

* ``MatchValue(True/False)`` never matches a boolean payload, even with a
  bool index: flags are stored as 0/1 integers (``archived``, ``permanent``).
* ``EdgeShard.optimize()`` blocks for minutes at 100k points, so it is never
  called on the request path; filtered reads use the payload indexes and do
  not need it (:meth:`EdgeStore.optimize` exists for maintenance jobs).
* ``retrieve`` needs both ``with_payload`` and ``with_vector``.
* RRF ranks are 0-based inside Qdrant; see :func:`~memory_engine.store.base.qdrant_rrf_k`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import qdrant_edge as qe

from ..errors import StoreError, ValidationError, os_reason
from .base import (
    DENSE,
    INDEXED_FIELDS,
    SPARSE,
    Cond,
    CondKind,
    ScoredPayload,
    SparseVec,
    StoredPoint,
    StoreFilter,
    filter_conditions,
    memory_id_of,
    normalize_patch,
    point_id,
    qdrant_rrf_k,
)

__all__ = ["EdgeStore", "META_FILE"]

#: our metadata file inside the shard directory (dense dimension, format)
META_FILE = "memwb_store.json"
_EDGE_CONFIG_FILE = "edge_config.json"
_FORMAT = 1

_T = TypeVar("_T")

_SCHEMA_TYPES = {
    "keyword": qe.PayloadSchemaType.Keyword,
    "integer": qe.PayloadSchemaType.Integer,
    "float": qe.PayloadSchemaType.Float,
}


def _condition(c: Cond) -> Any:
    if c.kind is CondKind.EQ:
        return qe.FieldCondition(key=c.key, match=qe.MatchValue(c.value))
    if c.kind is CondKind.ANY:
        return qe.FieldCondition(key=c.key, match=qe.MatchAny(list(c.value)))
    lo, hi = c.value
    return qe.FieldCondition(key=c.key, range=qe.RangeFloat(gte=lo, lte=hi))


def edge_filter(flt: StoreFilter) -> qe.Filter | None:
    """Native edge filter of ``flt``; ``None`` when it can match nothing."""
    conds = filter_conditions(flt)
    if conds is None:
        return None
    return qe.Filter(must=[_condition(c) for c in conds])


def _point_ids(ids: list[int]) -> list[qe.PointId]:
    """``ids`` typed as the stub's ``List[PointId]``: a ``list[int]`` is one at runtime, but
    ``list`` is invariant so mypy will not accept it as ``list[int | UUID | str]``."""
    return cast("list[qe.PointId]", ids)


def _sparse(sv: SparseVec) -> qe.SparseVector:
    return qe.SparseVector(indices=[int(i) for i in sv.indices], values=[float(v) for v in sv.values])


def _dense_of(vector: Any) -> list[float] | None:
    if isinstance(vector, dict):
        v = vector.get(DENSE)
        return list(v) if v is not None else None
    return None


def _ephemeral_root() -> str | None:
    """tmpfs (/dev/shm) when writable, else the temp default: shard creation and
    the 11 payload-index builds fsync, ~3 s on a busy disk vs ~0.1 s in RAM (measured)."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


class EdgeStore:
    """:class:`~memory_engine.store.base.VectorStore` on one qdrant-edge shard.

    ``EdgeStore(path)`` opens the shard at ``path`` when it exists (data kept)
    or prepares to create it there on :meth:`ensure_collection`;
    ``EdgeStore(ephemeral=True)`` uses a fresh temporary directory (in
    /dev/shm when writable) that :meth:`close` removes (``MemoryEngine.in_memory()``). Every call is
    serialised by one re-entrant lock, so a UI thread and a writer thread may
    share an instance. Backend failures raise :class:`StoreError`.

    ``max_search_threads``: size of edge's search pool (None = edge's CPU-derived default).
    """

    name = "edge"

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        ephemeral: bool = False,
        max_search_threads: int | None = None,
    ) -> None:
        if ephemeral:
            if path is not None:
                raise ValidationError("EdgeStore: pass either a path or ephemeral=True, not both")
            tmp = tempfile.mkdtemp(prefix="memwb-edge-", dir=_ephemeral_root())
            self._finalizer: weakref.finalize | None = weakref.finalize(self, _remove_tree, tmp)
            self.path = Path(tmp) / "shard"
        else:
            if path is None:
                raise ValidationError("EdgeStore needs a shard directory (or ephemeral=True)")
            self._finalizer = None
            self.path = Path(path)
        self.ephemeral = ephemeral
        self._max_search_threads = max_search_threads
        self._lock = threading.RLock()
        self._closed = False
        self._shard: qe.EdgeShard | None = None
        self._dim: int | None = None
        if (self.path / _EDGE_CONFIG_FILE).exists():
            meta = self._read_meta()
            self._dim = meta.get("dense_dim") if meta else None
            try:
                self._shard = qe.EdgeShard.load(str(self.path), self._load_config())
            except Exception as e:
                hint = ""
                if "WouldBlock" in str(e):
                    # edge locks the WAL: one open EdgeStore per shard directory (per process too)
                    hint = " (already open: share one EdgeStore/engine per shard directory)"
                raise StoreError(f"cannot open edge shard at {self.path}{hint}: {e}") from e

    # ---------------------------------------------------------------- helpers
    @property
    def dim(self) -> int | None:
        """Dense dimension of the open shard (None before the first ensure_collection)."""
        return self._dim

    def _read_meta(self) -> dict[str, Any] | None:
        f = self.path / META_FILE
        if not f.exists():
            return None
        try:
            meta = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise StoreError(f"unreadable store metadata {f}: {os_reason(e)}") from e
        if not isinstance(meta, dict) or not isinstance(meta.get("dense_dim"), int):
            raise StoreError(f"store metadata {f} lacks an integer 'dense_dim'")
        return meta

    def _write_meta(self, dim: int) -> None:
        f = self.path / META_FILE
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps({"format": _FORMAT, "dense_dim": dim, "dense": DENSE, "sparse": SPARSE}))
        tmp.replace(f)

    def _load_config(self) -> qe.EdgeConfig | None:
        if self._max_search_threads is None:
            return None
        return qe.EdgeConfig(max_search_threads=self._max_search_threads)

    def _create_config(self, dim: int) -> qe.EdgeConfig:
        return qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            max_search_threads=self._max_search_threads,
        )

    def _call(self, what: str, fn: Callable[[qe.EdgeShard], _T]) -> _T:
        with self._lock:
            if self._closed:
                raise StoreError(f"edge store {self.path} is closed ({what})")
            if self._shard is None:
                raise StoreError(
                    f"edge store {self.path} has no shard yet: call ensure_collection(dim) first"
                )
            try:
                return fn(self._shard)
            except StoreError:
                raise
            except Exception as e:
                raise StoreError(f"edge {what} failed: {e}") from e

    def _ensure_indexes(self, shard: qe.EdgeShard) -> None:
        existing = set(shard.info().payload_schema)
        for field_name, kind in INDEXED_FIELDS.items():
            if field_name in existing:
                continue
            schema: Any = _SCHEMA_TYPES[kind]
            if field_name == "tenant_id":
                schema = qe.KeywordIndexParams(is_tenant=True)
            shard.update(qe.UpdateOperation.create_field_index(field_name, schema))

    # --------------------------------------------------------------- protocol
    def ensure_collection(self, dim: int) -> None:
        """Create the shard (fresh directory) or check the open one; create any
        missing payload index. Idempotent. Raises StoreError when the shard
        holds another dense dimension, ValueError for ``dim < 1``."""
        if dim < 1:
            raise ValidationError(f"dense dimension must be >= 1, got {dim}")
        with self._lock:
            if self._closed:
                raise StoreError(f"edge store {self.path} is closed (ensure_collection)")
            if self._shard is None:
                try:
                    self.path.mkdir(parents=True, exist_ok=True)
                    self._shard = qe.EdgeShard.create(str(self.path), self._create_config(dim))
                    self._write_meta(dim)
                except Exception as e:
                    raise StoreError(f"cannot create edge shard at {self.path}: {e}") from e
                self._dim = dim
            elif self._dim is None:
                # a shard without our metadata: let edge check the vector config itself
                try:
                    self._shard.close()
                    self._shard = None
                    self._shard = qe.EdgeShard.load(str(self.path), self._create_config(dim))
                    self._write_meta(dim)
                except Exception as e:
                    raise StoreError(
                        f"edge shard at {self.path} does not fit dense dimension {dim}: {e}"
                    ) from e
                self._dim = dim
            elif self._dim != dim:
                raise StoreError(
                    f"edge shard at {self.path} holds {self._dim}-d dense vectors, the embedder gives {dim}-d: "
                    "use another storage path or re-embed"
                )
            self._call("create_field_index", self._ensure_indexes)

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        """Insert or replace ``points`` in one update; a wrong dense dimension raises StoreError."""
        if not points:
            return
        native = []
        for p in points:
            vec: dict[str, Any] = {DENSE: [float(x) for x in p.dense]}
            if p.sparse is not None and p.sparse.indices:
                vec[SPARSE] = _sparse(p.sparse)
            native.append(qe.Point(id=point_id(p.id), vector=vec, payload=dict(p.payload)))
        self._call("upsert", lambda s: s.update(qe.UpdateOperation.upsert_points(native)))

    def _query(self, what: str, req: qe.QueryRequest) -> list[ScoredPayload]:
        res = self._call(what, lambda s: s.query(req))
        return [
            ScoredPayload(id=memory_id_of(r.id), score=float(r.score), payload=dict(r.payload or {}))
            for r in res
        ]

    def search_dense(self, vector: Sequence[float], flt: StoreFilter, limit: int) -> list[ScoredPayload]:
        """Top ``limit`` points by cosine similarity in [-1, 1], best first."""
        f = edge_filter(flt)
        if f is None or limit <= 0:
            return []
        req = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest([float(x) for x in vector], using=DENSE),
            filter=f,
            with_payload=True,
            with_vector=False,
        )
        return self._query("search_dense", req)

    def search_sparse(self, sparse: SparseVec, flt: StoreFilter, limit: int) -> list[ScoredPayload]:
        """Top ``limit`` points by IDF-weighted sparse dot product, best first.
        IDF statistics are shard-wide (all tenants), as on a Qdrant server, and
        (measured on 0.9) still count deleted points until edge vacuums the
        segment, which small shards never do; qdrant-client local mode
        recomputes them, so sparse scores after deletes differ slightly
        between the two backends (tests/store pins this)."""
        f = edge_filter(flt)
        if f is None or limit <= 0 or not sparse.indices:
            return []
        req = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest(_sparse(sparse), using=SPARSE),
            filter=f,
            with_payload=True,
            with_vector=False,
        )
        return self._query("search_sparse", req)

    def search_rrf(
        self,
        vector: Sequence[float],
        sparse: SparseVec,
        flt: StoreFilter,
        limit: int,
        prefetch_limit: int,
        k: float,
    ) -> list[ScoredPayload]:
        """Edge-side RRF: prefetch ``prefetch_limit`` dense and sparse hits (the
        filter in each prefetch), fuse with score = sum over routes of
        ``1 / (k + rank)``, rank 1-based. ``k`` must be a whole number (edge's
        ``Fusion.Rrf`` takes an int); an empty sparse vector fuses the dense route alone."""
        f = edge_filter(flt)
        if f is None or limit <= 0:
            return []
        qk = qdrant_rrf_k(k)
        prefetches = [
            qe.Prefetch(
                limit=prefetch_limit,
                query=qe.Query.Nearest([float(x) for x in vector], using=DENSE),
                filter=f,
            )
        ]
        if sparse.indices:
            prefetches.append(
                qe.Prefetch(
                    limit=prefetch_limit, query=qe.Query.Nearest(_sparse(sparse), using=SPARSE), filter=f
                )
            )
        req = qe.QueryRequest(
            limit=limit,
            prefetches=prefetches,
            # at runtime Fusion.Rrf subclasses Fusion; the bundled stub declares it as a plain nested class
            query=cast(qe.Fusion, qe.Fusion.Rrf(k=qk)),
            filter=f,
            with_payload=True,
            with_vector=False,
        )
        return self._query("search_rrf", req)

    def scroll(
        self,
        flt: StoreFilter,
        limit: int | None = None,
        order_by: str | None = None,
        descending: bool = True,
        with_vectors: bool = False,
    ) -> list[ScoredPayload]:
        """Points matching ``flt`` (all when ``limit`` is None), by point id or,
        with ``order_by``, by that indexed float field. Points whose
        ``order_by`` field is missing or null are not returned (Qdrant's order_by
        skips them): e.g. never-accessed memories for ``last_access_at``."""
        f = edge_filter(flt)
        if f is None:
            return []
        if order_by is not None and INDEXED_FIELDS.get(order_by) != "float":
            raise ValidationError(f"order_by needs an indexed float field, got {order_by!r}")
        n = limit if limit is not None else self.count(flt)
        if n <= 0:
            return []
        ob = None
        if order_by is not None:
            ob = qe.OrderBy(order_by, direction=qe.Direction.Desc if descending else qe.Direction.Asc)
        req = qe.ScrollRequest(
            limit=n, filter=f, with_payload=True, with_vector=[DENSE] if with_vectors else False, order_by=ob
        )
        records, _next = self._call("scroll", lambda s: s.scroll(req))
        return [
            ScoredPayload(
                id=memory_id_of(r.id),
                score=0.0,
                payload=dict(r.payload or {}),
                dense=_dense_of(r.vector) if with_vectors else None,
            )
            for r in records
        ]

    def retrieve(self, ids: Sequence[str], with_vectors: bool = False) -> list[ScoredPayload]:
        """Points by memory id, in the order of ``ids``; missing ids skipped.
        Dense vectors come back normalised (cosine storage)."""
        if not ids:
            return []
        pids = [point_id(i) for i in ids]
        records = self._call(
            "retrieve",
            lambda s: s.retrieve(_point_ids(pids), with_payload=True, with_vector=[DENSE] if with_vectors else False),
        )
        by_id = {int(r.id): r for r in records}
        out = []
        for pid in dict.fromkeys(pids):
            r = by_id.get(pid)
            if r is not None:
                out.append(
                    ScoredPayload(
                        id=memory_id_of(pid),
                        score=0.0,
                        payload=dict(r.payload or {}),
                        dense=_dense_of(r.vector) if with_vectors else None,
                    )
                )
        return out

    def set_payload(self, ids: Sequence[str], patch: dict[str, Any]) -> None:
        """Merge ``patch`` into each payload at the top level (a nested dict such
        as ``metadata`` is replaced whole); see :func:`normalize_patch`. Missing ids are ignored."""
        if not ids or not patch:
            return
        pids = [point_id(i) for i in ids]
        body = normalize_patch(patch)

        def apply(shard: qe.EdgeShard) -> None:
            # set_payload on an absent id is an error in Qdrant: patch only the points that exist
            found = shard.retrieve(_point_ids(pids), with_payload=False, with_vector=False)
            existing = [int(r.id) for r in found]
            if existing:
                shard.update(qe.UpdateOperation.set_payload(_point_ids(existing), body))

        self._call("set_payload", apply)

    def delete(self, ids: Sequence[str]) -> None:
        """Remove points by memory id (missing ids are ignored)."""
        if not ids:
            return
        pids = [point_id(i) for i in ids]
        self._call("delete", lambda s: s.update(qe.UpdateOperation.delete_points(_point_ids(pids))))

    def count(self, flt: StoreFilter) -> int:
        """Exact number of points matching ``flt``."""
        f = edge_filter(flt)
        if f is None:
            return 0
        return int(self._call("count", lambda s: s.count(qe.CountRequest(exact=True, filter=f))))

    def total_points(self) -> int:
        """All points in the shard, every tenant (for status pages and benchmarks)."""
        return int(self._call("info", lambda s: s.info().points_count))

    def optimize(self) -> bool:
        """Run edge's segment optimizers, blocking (minutes at 100k points):
        maintenance jobs only, never the request path. True if anything changed."""
        return bool(self._call("optimize", lambda s: s.optimize()))

    def compact(self, batch: int = 512) -> int:
        """Rewrite the shard into a fresh directory holding only the live points, then swap it in.

        Deleting a point in Qdrant only marks it: its payload stays in the segment's payload pages
        and in the write-ahead log until segments are rebuilt, and edge's optimizers skip small
        segments. After an erase this is how the erased text physically leaves the disk. The old
        directory is removed only once the new one is complete (a crash in between leaves the old
        shard in place and a ``.compact`` directory to delete). Returns the points kept. Blocking;
        maintenance only. Raises StoreError."""
        with self._lock:
            if self._closed or self._shard is None or self._dim is None:
                raise StoreError(f"edge store {self.path} is not open (compact)")
            if self.ephemeral:
                return self.total_points()
            shard = self._shard
            fresh_dir = self.path.with_name(self.path.name + ".compact")
            old_dir = self.path.with_name(self.path.name + ".old")
            for d in (fresh_dir, old_dir):
                if d.exists():
                    shutil.rmtree(d)
            fresh = EdgeStore(fresh_dir, max_search_threads=self._max_search_threads)
            kept = 0
            try:
                fresh.ensure_collection(self._dim)
                offset = None
                while True:
                    req = qe.ScrollRequest(limit=batch, offset=offset, with_payload=True, with_vector=True)

                    def page(s: qe.EdgeShard, req: Any = req) -> Any:
                        return s.scroll(req)

                    records, offset = self._call("scroll", page)
                    pts = []
                    for r in records:
                        vec = r.vector if isinstance(r.vector, dict) else {}
                        sp = vec.get(SPARSE)
                        pts.append(StoredPoint(
                            memory_id_of(r.id), _dense_of(r.vector) or [],
                            SparseVec(tuple(sp.indices), tuple(sp.values)) if sp is not None else SparseVec((), ()),
                            dict(r.payload or {}),
                        ))  # fmt: skip
                    if pts:
                        fresh.upsert(pts)
                        kept += len(pts)
                    if offset is None or not records:
                        break
                fresh.flush()
            finally:
                fresh.close()
            try:
                shard.flush()
                shard.close()
                self._shard = None
                self.path.rename(old_dir)
                fresh_dir.rename(self.path)
                self._shard = qe.EdgeShard.load(str(self.path), self._load_config())
            except Exception as e:
                raise StoreError(f"swapping the compacted shard into {self.path} failed: {e}") from e
            shutil.rmtree(old_dir, ignore_errors=True)
            return kept

    def flush(self) -> None:
        """Write pending changes to disk (the WAL makes writes durable already)."""
        with self._lock:
            if self._closed:
                raise StoreError(f"edge store {self.path} is closed (flush)")
            if self._shard is not None:
                self._call("flush", lambda s: s.flush())

    def close(self) -> None:
        """Flush and close the shard; an ephemeral store also removes its
        directory. Idempotent; any later call raises StoreError."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            shard, self._shard = self._shard, None
            try:
                if shard is not None:
                    if not self.ephemeral:  # an ephemeral shard's files are removed right after
                        shard.flush()
                    shard.close()
            except Exception as e:
                raise StoreError(f"closing edge shard {self.path} failed: {e}") from e
            finally:
                if self._finalizer is not None:
                    self._finalizer()

    def __enter__(self) -> EdgeStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("ephemeral" if self.ephemeral else "open")
        return f"EdgeStore({str(self.path)!r}, dim={self._dim}, {state})"
