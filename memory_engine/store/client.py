"""Vector store on qdrant-client: a Qdrant server/cluster, or local mode.

``ClientStore(url="http://...")`` talks to a server or cluster;
``ClientStore(url=":memory:")`` uses qdrant-client's in-process local mode,
which is for small tests only: its payload indexes are no-ops and every
query scans the points in Python.

Multitenancy is payload-partitioned (one collection, Qdrant's recommended
layout): ``tenant_id`` gets a keyword index with ``is_tenant=True`` so the
server co-locates each tenant's points, ``user_id`` a keyword index, and the
other fields of :data:`~memory_engine.store.base.INDEXED_FIELDS` their kinds.
Collection schema as in the edge backend: named dense ``dense`` (cosine) and
named sparse ``sparse`` with ``Modifier.IDF``.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar, cast

from qdrant_client import QdrantClient
from qdrant_client import models as qm

from ..errors import StoreError, ValidationError
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

__all__ = ["ClientStore", "LOCAL_MEMORY"]

#: the ``url`` that selects qdrant-client's in-process local mode
LOCAL_MEMORY = ":memory:"

_T = TypeVar("_T")

_SCHEMA_TYPES = {
    "keyword": qm.PayloadSchemaType.KEYWORD,
    "integer": qm.PayloadSchemaType.INTEGER,
    "float": qm.PayloadSchemaType.FLOAT,
}


def _condition(c: Cond) -> qm.FieldCondition:
    if c.kind is CondKind.EQ:
        return qm.FieldCondition(key=c.key, match=qm.MatchValue(value=c.value))
    if c.kind is CondKind.ANY:
        return qm.FieldCondition(key=c.key, match=qm.MatchAny(any=list(c.value)))
    lo, hi = c.value
    return qm.FieldCondition(key=c.key, range=qm.Range(gte=lo, lte=hi))


def client_filter(flt: StoreFilter) -> qm.Filter | None:
    """Native qdrant-client filter of ``flt``; ``None`` when it can match nothing."""
    conds = filter_conditions(flt)
    if conds is None:
        return None
    return qm.Filter(must=[_condition(c) for c in conds])


def _sparse(sv: SparseVec) -> qm.SparseVector:
    return qm.SparseVector(indices=[int(i) for i in sv.indices], values=[float(v) for v in sv.values])


def _dense_of(vector: Any) -> list[float] | None:
    if isinstance(vector, dict):
        v = vector.get(DENSE)
        return list(v) if v is not None else None
    return None


class ClientStore:
    """:class:`~memory_engine.store.base.VectorStore` on qdrant-client.

    ``url``: server/cluster URL (``http://host:6333``) or ``":memory:"`` for
    local mode; ``api_key``: sent to the server (ignored in local mode);
    ``collection``: collection name; ``timeout``: request timeout in seconds
    (None = client default). Writes wait for the server to apply them, so a
    read after a write sees it. Local mode is serialised by a lock (it is not
    thread-safe); remote calls run concurrently. Backend failures raise
    :class:`StoreError`.
    """

    name = "client"

    def __init__(
        self,
        url: str = LOCAL_MEMORY,
        api_key: str | None = None,
        collection: str = "memories",
        *,
        timeout: int | None = None,
    ) -> None:
        self.url = url
        self.collection = collection
        self.local = url == LOCAL_MEMORY
        self._closed = False
        self._dim: int | None = None
        self._lock: AbstractContextManager[Any] = threading.RLock() if self.local else nullcontext()
        try:
            if self.local:
                self._client = QdrantClient(location=LOCAL_MEMORY)
            else:
                self._client = QdrantClient(url=url, api_key=api_key, timeout=timeout)
        except Exception as e:
            raise StoreError(f"cannot open qdrant-client at {url}: {e}") from e

    @property
    def dim(self) -> int | None:
        """Dense dimension of the collection (None before ensure_collection)."""
        return self._dim

    def _call(self, what: str, fn: Callable[[QdrantClient], _T]) -> _T:
        if self._closed:
            raise StoreError(f"qdrant-client store {self.url} is closed ({what})")
        with self._lock:
            try:
                return fn(self._client)
            except StoreError:
                raise
            except Exception as e:
                raise StoreError(f"qdrant {what} on {self.collection!r} failed: {e}") from e

    # --------------------------------------------------------------- protocol
    def ensure_collection(self, dim: int) -> None:
        """Create the collection and payload indexes if missing; idempotent.
        Raises StoreError when the collection exists with another dense
        dimension or without the ``dense``/``sparse`` vectors, ValueError for ``dim < 1``."""
        if dim < 1:
            raise ValidationError(f"dense dimension must be >= 1, got {dim}")

        def ensure(c: QdrantClient) -> None:
            if c.collection_exists(self.collection):
                params = c.get_collection(self.collection).config.params
                vectors = params.vectors if isinstance(params.vectors, dict) else {}
                dense = vectors.get(DENSE)
                if dense is None or SPARSE not in (params.sparse_vectors or {}):
                    raise StoreError(
                        f"collection {self.collection!r} exists without the named vectors "
                        f"{DENSE!r} and {SPARSE!r}: use another storage.collection"
                    )
                if dense.size != dim:
                    raise StoreError(
                        f"collection {self.collection!r} holds {dense.size}-d dense vectors, the embedder "
                        f"gives {dim}-d: use another storage.collection or re-embed"
                    )
                existing = set((c.get_collection(self.collection).payload_schema or {}).keys())
            else:
                c.create_collection(
                    self.collection,
                    vectors_config={DENSE: qm.VectorParams(size=dim, distance=qm.Distance.COSINE)},
                    sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
                )
                existing = set()
            with warnings.catch_warnings():
                # local mode warns that payload indexes are no-ops there: known and documented above
                warnings.simplefilter("ignore", UserWarning)
                for field_name, kind in INDEXED_FIELDS.items():
                    if field_name in existing:
                        continue
                    schema: Any = _SCHEMA_TYPES[kind]
                    if field_name == "tenant_id":
                        schema = qm.KeywordIndexParams(type=qm.KeywordIndexType.KEYWORD, is_tenant=True)
                    c.create_payload_index(self.collection, field_name, field_schema=schema, wait=True)

        self._call("ensure_collection", ensure)
        self._dim = dim

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        """Insert or replace ``points`` in one request; a wrong dense dimension raises StoreError."""
        if not points:
            return
        native = []
        for p in points:
            vec: dict[str, Any] = {DENSE: [float(x) for x in p.dense]}
            if p.sparse is not None and p.sparse.indices:
                vec[SPARSE] = _sparse(p.sparse)
            native.append(qm.PointStruct(id=point_id(p.id), vector=vec, payload=dict(p.payload)))
        self._call("upsert", lambda c: c.upsert(self.collection, points=native, wait=True))

    def _query(self, what: str, **kwargs: Any) -> list[ScoredPayload]:
        res = self._call(
            what, lambda c: c.query_points(self.collection, with_payload=True, with_vectors=False, **kwargs)
        )
        return [
            ScoredPayload(id=memory_id_of(p.id), score=float(p.score), payload=dict(p.payload or {}))
            for p in res.points
        ]

    def search_dense(self, vector: Sequence[float], flt: StoreFilter, limit: int) -> list[ScoredPayload]:
        """Top ``limit`` points by cosine similarity in [-1, 1], best first."""
        f = client_filter(flt)
        if f is None or limit <= 0:
            return []
        return self._query(
            "search_dense", query=[float(x) for x in vector], using=DENSE, query_filter=f, limit=limit
        )

    def search_sparse(self, sparse: SparseVec, flt: StoreFilter, limit: int) -> list[ScoredPayload]:
        """Top ``limit`` points by IDF-weighted sparse dot product, best first.
        IDF statistics are collection-wide (all tenants)."""
        f = client_filter(flt)
        if f is None or limit <= 0 or not sparse.indices:
            return []
        return self._query("search_sparse", query=_sparse(sparse), using=SPARSE, query_filter=f, limit=limit)

    def search_rrf(
        self,
        vector: Sequence[float],
        sparse: SparseVec,
        flt: StoreFilter,
        limit: int,
        prefetch_limit: int,
        k: float,
    ) -> list[ScoredPayload]:
        """Server-side RRF (``RrfQuery``): prefetch ``prefetch_limit`` dense and
        sparse hits (the filter in each prefetch), score = sum over routes of
        ``1 / (k + rank)``, rank 1-based. ``k`` must be a whole number
        (``models.Rrf.k`` is an int); an empty sparse vector fuses the dense route alone."""
        f = client_filter(flt)
        if f is None or limit <= 0:
            return []
        qk = qdrant_rrf_k(k)
        prefetch = [
            qm.Prefetch(query=[float(x) for x in vector], using=DENSE, filter=f, limit=prefetch_limit)
        ]
        if sparse.indices:
            prefetch.append(qm.Prefetch(query=_sparse(sparse), using=SPARSE, filter=f, limit=prefetch_limit))
        return self._query(
            "search_rrf", prefetch=prefetch, query=qm.RrfQuery(rrf=qm.Rrf(k=qk)), query_filter=f, limit=limit
        )

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
        f = client_filter(flt)
        if f is None:
            return []
        if order_by is not None and INDEXED_FIELDS.get(order_by) != "float":
            raise ValidationError(f"order_by needs an indexed float field, got {order_by!r}")
        n = limit if limit is not None else self.count(flt)
        if n <= 0:
            return []
        ob = None
        if order_by is not None:
            ob = qm.OrderBy(key=order_by, direction=qm.Direction.DESC if descending else qm.Direction.ASC)
        wv: Any = [DENSE] if with_vectors else False
        records, _next = self._call(
            "scroll",
            lambda c: c.scroll(
                self.collection, scroll_filter=f, limit=n, order_by=ob, with_payload=True, with_vectors=wv
            ),
        )
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
        wv: Any = [DENSE] if with_vectors else False
        records = self._call(
            "retrieve", lambda c: c.retrieve(self.collection, pids, with_payload=True, with_vectors=wv)
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

        def apply(c: QdrantClient) -> None:
            # Qdrant rejects set_payload naming an absent id (after patching the others): patch only existing ones
            found = c.retrieve(self.collection, pids, with_payload=False, with_vectors=False)
            existing = [int(r.id) for r in found]
            if existing:
                # list is invariant: list[int] is a valid selector at runtime but not list[ExtendedPointId] to mypy
                points = cast("list[qm.ExtendedPointId]", existing)
                c.set_payload(self.collection, payload=body, points=points, wait=True)

        self._call("set_payload", apply)

    def delete(self, ids: Sequence[str]) -> None:
        """Remove points by memory id (missing ids are ignored)."""
        if not ids:
            return
        pids = [point_id(i) for i in ids]
        self._call(
            "delete",
            lambda c: c.delete(self.collection, points_selector=qm.PointIdsList(points=pids), wait=True),
        )

    def count(self, flt: StoreFilter) -> int:
        """Exact number of points matching ``flt``."""
        f = client_filter(flt)
        if f is None:
            return 0
        return int(self._call("count", lambda c: c.count(self.collection, count_filter=f, exact=True).count))

    def total_points(self) -> int:
        """All points in the collection, every tenant."""
        return int(self._call("count", lambda c: c.count(self.collection, exact=True).count))

    def flush(self) -> None:
        """No-op: writes wait for the server (``wait=True``), local mode is in memory."""
        if self._closed:
            raise StoreError(f"qdrant-client store {self.url} is closed (flush)")

    def close(self) -> None:
        """Close the client connection. Idempotent; any later call raises StoreError."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            try:
                self._client.close()
            except Exception as e:
                raise StoreError(f"closing qdrant-client {self.url} failed: {e}") from e

    def __enter__(self) -> ClientStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ClientStore({self.url!r}, collection={self.collection!r}, dim={self._dim})"
