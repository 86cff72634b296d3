"""The vector-store protocol every Qdrant backend implements.

One collection (client) or shard (edge) holds every memory of every tenant:
a named dense vector ``dense`` (cosine) and a named sparse vector ``sparse``
with Qdrant's IDF modifier (the keyword/BM25 route). Payload = the flat
:meth:`MemoryRecord.to_payload` dict; payload indexes on ``tenant_id``,
``user_id``, ``memory_type``, ``status``, ``archived``, ``created_at``,
``last_access_at``, ``embedding_version``, ``session_id`` and ``fact_key``.

Isolation is structural: every read takes a :class:`StoreFilter`, whose
``tenant_id`` is mandatory and whose ``user_id`` may be ``None`` only for the
maintenance scans that say so (``tenant_scan=True``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from ..errors import ValidationError

DENSE = "dense"
SPARSE = "sparse"

#: payload fields that get an index (name -> kind)
INDEXED_FIELDS: dict[str, str] = {
    "tenant_id": "keyword",
    "user_id": "keyword",
    "memory_type": "keyword",
    "status": "keyword",
    "archived": "integer",
    "embedding_version": "keyword",
    "session_id": "keyword",
    "fact_key": "keyword",
    "memory_id": "keyword",
    "created_at": "float",
    "last_access_at": "float",
}


@dataclass(frozen=True)
class SparseVec:
    """Sparse vector: parallel lists of uint32 term ids and weights."""

    indices: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True)
class StoredPoint:
    """What :meth:`VectorStore.upsert` writes. ``id`` is the memory id (16 hex
    digits); backends map it to a Qdrant point id with :func:`point_id`."""

    id: str
    dense: Sequence[float]
    sparse: SparseVec | None
    payload: dict[str, Any]


@dataclass(frozen=True)
class ScoredPayload:
    """A point read back: memory id, score (0.0 for scroll/retrieve), payload,
    and the dense vector when it was asked for."""

    id: str
    score: float
    payload: dict[str, Any]
    dense: list[float] | None = None


@dataclass(frozen=True)
class StoreFilter:
    """A conjunctive filter. ``None`` fields do not constrain.

    ``statuses``: allowed ``status`` values (default current only);
    ``include_archived``: False adds ``archived == 0``;
    ``created_after``/``created_before``: epoch seconds, inclusive;
    ``metadata``: exact matches on ``metadata.<key>``.
    """

    tenant_id: str
    user_id: str | None
    statuses: tuple[str, ...] | None = ("current",)
    include_archived: bool = False
    memory_types: tuple[str, ...] | None = None
    embedding_version: str | None = None
    session_id: str | None = None
    fact_key: str | None = None
    memory_ids: tuple[str, ...] | None = None
    created_after: float | None = None
    created_before: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    tenant_scan: bool = False

    def __post_init__(self) -> None:
        if not self.tenant_id:
            raise ValidationError("StoreFilter needs a tenant_id")
        if self.user_id is None and not self.tenant_scan:
            raise ValidationError("StoreFilter needs a user_id (or tenant_scan=True for maintenance scans)")


#: payload flags stored as 0/1 integers (qdrant-edge never matches a boolean payload)
INT_FLAGS: tuple[str, ...] = ("archived", "permanent")


def point_id(memory_id: str) -> int:
    """Qdrant point id (uint64) of a 16-hex-digit memory id.

    Raises ValueError for anything but 1..16 hex digits."""
    if not isinstance(memory_id, str) or not 0 < len(memory_id) <= 16:
        raise ValidationError(f"memory id must be 1..16 hex digits, got {memory_id!r}")
    return int(memory_id, 16)


def memory_id_of(pid: Any) -> str:
    """Inverse of :func:`point_id`."""
    return f"{int(pid):016x}"


class CondKind(StrEnum):
    """Kind of a backend-neutral filter condition."""

    EQ = "eq"  # exact keyword/integer match
    ANY = "any"  # keyword in a set
    RANGE = "range"  # inclusive numeric range (lo, hi); either bound may be None


@dataclass(frozen=True)
class Cond:
    """One conjunct of a :class:`StoreFilter`, before a backend renders it as
    its native ``FieldCondition``. ``value``: str/int for EQ, tuple for ANY,
    ``(lo, hi)`` floats for RANGE."""

    key: str
    kind: CondKind
    value: Any


def filter_conditions(flt: StoreFilter) -> list[Cond] | None:
    """The conjuncts of ``flt`` shared by every backend, or ``None`` when the
    filter can match nothing (an empty ``statuses`` or ``memory_ids`` tuple).

    Metadata values: str -> exact match; int/float -> inclusive range
    ``[v, v]`` (so ``1`` matches ``1.0`` as JSON equality says). Booleans,
    ``None`` and containers are rejected with :class:`ValueError` because
    qdrant-edge never matches a boolean payload (measured on 0.9) and the
    backends must agree; store such metadata as 0/1 or strings instead.
    """
    conds = [Cond("tenant_id", CondKind.EQ, flt.tenant_id)]
    if flt.user_id is not None:
        conds.append(Cond("user_id", CondKind.EQ, flt.user_id))
    elif not flt.tenant_scan:  # pragma: no cover - StoreFilter.__post_init__ forbids it
        raise ValidationError("StoreFilter needs a user_id (or tenant_scan=True)")
    if flt.statuses is not None:
        if not flt.statuses:
            return None
        conds.append(Cond("status", CondKind.ANY, tuple(str(x) for x in flt.statuses)))
    if not flt.include_archived:
        conds.append(Cond("archived", CondKind.EQ, 0))
    if flt.memory_types is not None:
        if not flt.memory_types:
            return None
        conds.append(Cond("memory_type", CondKind.ANY, tuple(str(t) for t in flt.memory_types)))
    if flt.embedding_version is not None:
        conds.append(Cond("embedding_version", CondKind.EQ, flt.embedding_version))
    if flt.session_id is not None:
        conds.append(Cond("session_id", CondKind.EQ, flt.session_id))
    if flt.fact_key is not None:
        conds.append(Cond("fact_key", CondKind.EQ, flt.fact_key))
    if flt.memory_ids is not None:
        if not flt.memory_ids:
            return None
        conds.append(Cond("memory_id", CondKind.ANY, tuple(flt.memory_ids)))
    if flt.created_after is not None or flt.created_before is not None:
        conds.append(Cond("created_at", CondKind.RANGE, (flt.created_after, flt.created_before)))
    for key, value in sorted(flt.metadata.items()):
        path = f"metadata.{key}"
        if isinstance(value, str):
            conds.append(Cond(path, CondKind.EQ, value))
        elif isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            conds.append(Cond(path, CondKind.RANGE, (float(value), float(value))))
        else:
            raise ValidationError(
                f"metadata filter {path}={value!r}: only str, int and finite float values can be matched"
            )
    return conds


def normalize_patch(patch: dict[str, Any]) -> dict[str, Any]:
    """A payload patch ready for ``set_payload``: boolean flags become 0/1 and
    a patch of ``archived_at`` also sets the derived ``archived`` flag, so
    filters on ``archived`` stay in step with it."""
    out = dict(patch)
    for key in INT_FLAGS:
        if isinstance(out.get(key), bool):
            out[key] = int(out[key])
    if "archived_at" in out and "archived" not in out:
        out["archived"] = int(out["archived_at"] is not None)
    return out


def qdrant_rrf_k(k: float) -> int:
    """Qdrant's RRF constant for the paper's ``1 / (k + rank)``, rank 1-based
    (Cormack et al. 2009). Qdrant (server, local mode and edge, measured)
    scores ``1 / (k' + rank0)`` with a 0-based rank, so ``k' = k + 1``.
    Qdrant takes an integer: raises ValueError unless ``k`` is a whole number >= 0."""
    if not math.isfinite(k) or k < 0 or float(k) != int(k):
        raise ValidationError(f"RRF k must be a whole number >= 0 (Qdrant takes an integer), got {k!r}")
    return int(k) + 1


@runtime_checkable
class VectorStore(Protocol):
    """Behaviour every backend must show (tests/store contract tests check it).

    All methods raise :class:`memory_engine.errors.StoreError` on backend
    failure (wrapping the cause). Reads never return points outside the filter.
    """

    name: str

    def ensure_collection(self, dim: int) -> None:
        """Create collection/shard and payload indexes if missing; idempotent.
        Raises StoreError if an existing one has another dense dimension."""

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        """Insert or replace points (by id), in one batch."""

    def search_dense(self, vector: Sequence[float], flt: StoreFilter, limit: int) -> list[ScoredPayload]:
        """Top ``limit`` by cosine similarity (score in [-1, 1]), best first.
        A metadata filter value that is not str/int/float raises ValueError
        (every read, see :func:`filter_conditions`)."""

    def search_sparse(self, sparse: SparseVec, flt: StoreFilter, limit: int) -> list[ScoredPayload]:
        """Top ``limit`` by sparse dot product with IDF (BM25-style), best first;
        points sharing no term with the query are not returned."""

    def search_rrf(
        self, vector: Sequence[float], sparse: SparseVec, flt: StoreFilter, limit: int, prefetch_limit: int, k: float
    ) -> list[ScoredPayload]:
        """Server-side RRF of the dense and sparse routes (prefetch
        ``prefetch_limit`` of each with the filter, fuse with the sum of
        1/(k + rank), rank 1-based, Cormack et al. 2009); score = the RRF
        score. ``k`` must be a whole number >= 0 (Qdrant takes an int; see
        :func:`qdrant_rrf_k`), else ValueError. An empty ``sparse`` fuses the
        dense route alone."""

    def scroll(
        self,
        flt: StoreFilter,
        limit: int | None = None,
        order_by: str | None = None,
        descending: bool = True,
        with_vectors: bool = False,
    ) -> list[ScoredPayload]:
        """Points matching the filter (all when ``limit`` is None), by point id
        or ordered by an indexed float payload field (``created_at``,
        ``last_access_at``; anything else is a ValueError). Points whose order
        field is null or missing are left out (Qdrant's order_by skips them)."""

    def retrieve(self, ids: Sequence[str], with_vectors: bool = False) -> list[ScoredPayload]:
        """Points by memory id (missing ids are skipped). Callers must check
        ownership in the payload: this is an id lookup, not a filtered read."""

    def set_payload(self, ids: Sequence[str], patch: dict[str, Any]) -> None:
        """Merge ``patch`` into the payload of each point at the top level (a
        nested dict such as ``metadata`` is replaced whole), after
        :func:`normalize_patch`; absent ids are ignored."""

    def delete(self, ids: Sequence[str]) -> None:
        """Remove points by memory id (missing ids are ignored)."""

    def count(self, flt: StoreFilter) -> int:
        """Exact number of points matching the filter."""

    def flush(self) -> None:
        """Persist pending writes (no-op where writes are durable already)."""

    def close(self) -> None:
        """Release files/connections; further calls are errors."""
