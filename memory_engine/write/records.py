"""Record and point building (one home for what a stored memory looks like):
new ids, the record of a cleaned statement, the store points of records, and
the payload patches every writer applies (touch, deprecate, soft-archive).

Used by the write pipeline, the async writer's events mode, consolidation and
re-embedding, so a record written by any of them has the same fields.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..config import KeywordSection
from ..models import MemoryRecord, MemoryStatus, MemoryType, Source
from ..retrieve import temporal
from ..store.base import StoredPoint, VectorStore
from ..text import content_terms, count_tokens, sparse_document
from ..validation import ROLE_SOURCE

__all__ = ["build_record", "deprecate_patch", "new_id", "payload_point", "point", "soft_archive_patch", "touch_patch",
           "upsert_records"]


def new_id() -> str:
    """A fresh memory id: 16 lowercase hex digits (the ``[mem-<id>]`` citation form)."""
    return secrets.token_hex(8)


def build_record(
    content: str, *, tenant_id: str, user_id: str, memory_type: MemoryType, embedding_version: str, ts: float,
    session_id: str | None = None, role: str = "user", metadata: dict[str, Any] | None = None,
    importance: float = 0.5, permanent: bool = False, status: MemoryStatus = MemoryStatus.CURRENT,
    source: Source | None = None, record_id: str | None = None, now: datetime | None = None,
    resolve_dates: bool = True, dates: temporal.DateSettings = temporal.DEFAULT_DATES, **extra: Any,
) -> MemoryRecord:
    """The record of an already cleaned statement said at ``ts`` (epoch seconds).

    ``source`` defaults to the role's (:data:`~memory_engine.validation.ROLE_SOURCE`);
    ``terms`` and ``tokens`` are derived from ``content``; with ``resolve_dates`` the
    date the statement is about ("yesterday I called the landlord") is resolved
    against ``now`` (default: ``ts``) into ``event_start``/``event_end``, read with ``dates``
    (``memory.slash_dates``, ``memory.day_start_hour``... of the config); ``utc_offset`` is ``now``'s
    UTC offset in seconds (the user's zone when it was said; None without ``now``).
    ``extra`` sets any other :class:`MemoryRecord` field (``fact_key``, ``supersedes``...).
    """
    if now is not None and now.utcoffset() is not None:
        extra.setdefault("utc_offset", now.utcoffset().total_seconds())  # type: ignore[union-attr]
    if resolve_dates:
        when = temporal.resolve(content, now if now is not None else datetime.fromtimestamp(ts, UTC), dates)
        extra.setdefault("event_start", when.start if when else None)
        extra.setdefault("event_end", when.end if when else None)
    return MemoryRecord(
        id=record_id or new_id(), tenant_id=tenant_id, user_id=user_id, content=content, memory_type=memory_type,
        status=status, session_id=session_id, role=role, metadata=dict(metadata or {}), importance=importance,
        source=source if source is not None else ROLE_SOURCE.get(role, Source.USER_STATED), created_at=ts,
        updated_at=ts, last_access_at=ts, embedding_version=embedding_version,
        terms=extra.pop("terms", None) or tuple(content_terms(content)), permanent=permanent,
        tokens=count_tokens(content), **extra,
    )


def point(rec: MemoryRecord, vec: np.ndarray | Sequence[float], keyword: KeywordSection | None = None) -> StoredPoint:
    """The store point of ``rec``: its dense vector, the BM25 sparse vector of its terms (weights of the
    ``keyword`` config section, None = its defaults), its payload."""
    return payload_point(rec.id, vec, rec.to_payload(), keyword)


def payload_point(memory_id: str, vec: np.ndarray | Sequence[float], payload: dict[str, Any],
                  keyword: KeywordSection | None = None) -> StoredPoint:
    """The store point of a stored payload with a (new) dense vector; the sparse vector is
    rebuilt from ``payload["terms"]`` with the ``keyword`` BM25 weights (re-embedding copies records this way)."""
    dense = vec.tolist() if isinstance(vec, np.ndarray) else list(vec)
    kw = keyword or KeywordSection()
    return StoredPoint(memory_id, dense, sparse_document(payload.get("terms") or (), kw.k1, kw.b, kw.avg_len), payload)


def upsert_records(store: VectorStore, recs: Sequence[MemoryRecord], vecs: np.ndarray | Sequence[Any],
                   keyword: KeywordSection | None = None) -> None:
    """Upsert ``recs`` with their vectors (row i of ``vecs`` belongs to ``recs[i]``) in one call;
    ``keyword``: the BM25 weights (None = the config defaults)."""
    store.upsert([point(r, v, keyword) for r, v in zip(recs, vecs, strict=True)])


def touch_patch(rec: MemoryRecord, ts: float, *, updated: bool = False) -> dict[str, Any]:
    """A use of ``rec`` at ``ts``: one more access; ``updated`` also moves ``updated_at`` (a repeat)."""
    patch: dict[str, Any] = {"access_count": rec.access_count + 1, "last_access_at": ts}
    if updated:
        patch["updated_at"] = ts
    return patch


def deprecate_patch(ts: float, *, superseded_by: str | None = None,
                    metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """Archive a replaced memory at ``ts`` (status ``deprecated``, ``archived_at``; nothing is deleted,
    it stays readable by id), naming its replacement when known. ``metadata`` replaces the whole
    metadata object (the store does not merge nested values)."""
    patch: dict[str, Any] = {"status": MemoryStatus.DEPRECATED.value}
    if superseded_by is not None:
        patch["superseded_by"] = superseded_by
    patch.update(archived_at=ts, archived=1, updated_at=ts)
    if metadata is not None:
        patch["metadata"] = metadata
    return patch


def soft_archive_patch(rec: MemoryRecord, ts: float, action: str, reason: str) -> dict[str, Any]:
    """Archive ``rec`` at ``ts`` without changing its status (lifecycle: inactivity, expiry, eviction) and
    record why (metadata is replaced whole by the store)."""
    meta = {**rec.metadata, "_lifecycle": action, "_archive_reason": reason}
    return {"archived_at": ts, "archived": 1, "metadata": meta}
