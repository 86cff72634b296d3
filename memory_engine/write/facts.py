"""Structured facts (seed 001): one current value per ``(owner, key)``, looked up
exactly (never by similarity); a new value supersedes the old one, the same value
only touches it."""

from __future__ import annotations

from typing import Any

from ..models import MemoryRecord, MemoryType
from ..scope import Scope
from ..store.base import StoreFilter, VectorStore

__all__ = ["FactBook", "fact_key"]


def fact_key(key: Any) -> str:
    """The stored form of a fact key: trimmed, lower-case (``"Profile.City "`` -> ``"profile.city"``)."""
    return str(key).strip().lower()


class FactBook:
    """Exact fact lookups on a store (any embedding version: a fact's value does not depend
    on the model): :meth:`current` the newest current record of a key, :meth:`history` every
    version of a key oldest first (superseded and archived too), :meth:`values` all current
    facts of the owner as {key: value}."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store

    def current(self, scope: Scope, key: str) -> MemoryRecord | None:
        flt = scope.filter(fact_key=fact_key(key), memory_types=(MemoryType.FACT.value,), embedding_version=None)
        rows = self.store.scroll(flt, limit=1, order_by="created_at", descending=True)
        return MemoryRecord.from_payload(rows[0].id, rows[0].payload) if rows else None

    def history(self, scope: Scope, key: str) -> list[MemoryRecord]:
        flt = StoreFilter(tenant_id=scope.tenant_id, user_id=scope.user_id, fact_key=fact_key(key), statuses=None,
                          include_archived=True)
        rows = self.store.scroll(flt, order_by="created_at", descending=False)
        return [MemoryRecord.from_payload(r.id, r.payload) for r in rows]

    def values(self, scope: Scope) -> dict[str, Any]:
        flt = StoreFilter(tenant_id=scope.tenant_id, user_id=scope.user_id, memory_types=(MemoryType.FACT.value,))
        return {r.payload["fact_key"]: r.payload.get("fact_value") for r in self.store.scroll(flt)}
