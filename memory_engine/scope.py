"""The owner scope every store read of one call runs in (seed 004: tenant + user
isolation on every read; seed 000: filter by embedding version)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .store.base import ScoredPayload, StoreFilter

__all__ = ["Scope"]


@dataclass(frozen=True)
class Scope:
    """One owner (``tenant_id``, ``user_id``) and the embedding version its vectors
    must carry. :meth:`filter` builds the mandatory store filter; :meth:`owns` is the
    defence-in-depth check on every row a store returns."""

    tenant_id: str
    user_id: str
    embedding_version: str | None

    def filter(self, **kw: Any) -> StoreFilter:
        """A :class:`StoreFilter` on this owner; ``embedding_version`` defaults to the scope's
        (pass ``embedding_version=None`` for reads that must not filter on it, e.g. facts)."""
        kw.setdefault("embedding_version", self.embedding_version)
        return StoreFilter(tenant_id=self.tenant_id, user_id=self.user_id, **kw)

    def owns(self, p: ScoredPayload) -> bool:
        return p.payload.get("tenant_id") == self.tenant_id and p.payload.get("user_id") == self.user_id
