"""The lifecycle job: apply :mod:`.policy` decisions through the store.

``run_lifecycle(eng, now=...)`` scans the active memories of a tenant (or one
user), archives / expires / evicts what the rules say, and returns a
:class:`LifecycleReport` listing every change with its reason. A change is a
soft delete (``archived_at`` set, ``metadata._lifecycle`` = the action,
``metadata._archive_reason`` = the reason): archived memories are cold,
never retrieved, and kept for compliance (seed 003). Only memories archived
for inactivity come back, through :func:`reactivate_on_hit` (seed 000: "a
later keyword hit can re-activate").

One ``memory.consolidate`` span per run (attribute ``memory.lifecycle.job`` =
``lifecycle``) carries the counts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..models import MemoryRecord, from_epoch
from ..observability.tracing import SPAN_CONSOLIDATE, set_attrs
from ..store.base import StoreFilter
from ..text import content_terms, keyword_coverage, sparse_query
from ..validation import epoch_now, require_owner, require_tenant
from ..write.records import soft_archive_patch
from .policy import Action, Decision, LifecyclePolicy, decide, eviction_plan

if TYPE_CHECKING:
    from ..ports import Host

__all__ = ["Change", "LifecycleReport", "epoch_now", "reactivate_on_hit", "run_lifecycle", "soft_archive_patch"]


@dataclass(frozen=True)
class Change:
    """One memory the job changed: owner, action (``archive``/``expire``/``evict``/``reactivate``), reason."""

    memory_id: str
    tenant_id: str
    user_id: str
    action: str
    reason: str
    memory_type: str = ""
    content: str = ""


@dataclass(frozen=True)
class LifecycleReport:
    """Outcome of :func:`run_lifecycle`. ``scanned``: active memories looked at;
    ``changes``: what was (or, with ``dry_run``, would be) changed, in rule order."""

    now: datetime
    tenant_id: str
    user_id: str | None
    scanned: int
    changes: tuple[Change, ...] = ()
    dry_run: bool = False
    users: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    def by_action(self, action: str | Action) -> list[Change]:
        return [c for c in self.changes if c.action == str(action)]


def _apply(eng: Host, recs: dict[str, MemoryRecord], decisions: Sequence[Decision], ts: float) -> None:
    for d in decisions:
        eng.store.set_payload([d.memory_id], soft_archive_patch(recs[d.memory_id], ts, d.action.value, d.reason))


def run_lifecycle(
    eng: Host,
    *,
    now: datetime | None = None,
    tenant_id: str = "default",
    user_id: str | None = None,
    dry_run: bool = False,
    policy: LifecyclePolicy | None = None,
) -> LifecycleReport:
    """Archive, expire and evict the active memories of ``tenant_id`` (every user,
    or only ``user_id``) as of ``now`` (timezone-aware; None = the clock, read once).

    ``policy`` defaults to :meth:`LifecyclePolicy.from_config` of the engine's
    config. ``dry_run`` reports without writing. Capacity eviction works per
    user pool (seed 002) on what remains after archive/expiry. Raises
    ValidationError for a naive ``now`` or an empty tenant; StoreError from the store.
    """
    tenant_id = require_tenant(tenant_id)
    ts = epoch_now(now)
    pol = policy or LifecyclePolicy.from_config(eng.config)
    with eng.tracing.tracer.start_as_current_span(SPAN_CONSOLIDATE) as span:
        flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, statuses=None, include_archived=False,
                          tenant_scan=user_id is None)
        rows = eng.store.scroll(flt)
        recs = {p.id: MemoryRecord.from_payload(p.id, p.payload) for p in rows}
        decisions = [d for d in (decide(r, ts, pol) for r in recs.values()) if d.action != Action.KEEP]
        gone = {d.memory_id for d in decisions}
        pools: dict[str, list[MemoryRecord]] = defaultdict(list)
        for r in recs.values():
            if r.id not in gone:
                pools[r.user_id].append(r)
        for pool in pools.values():
            decisions.extend(eviction_plan(pool, ts, pol))
        if not dry_run:
            _apply(eng, recs, decisions, ts)
        changes = tuple(
            Change(d.memory_id, recs[d.memory_id].tenant_id, recs[d.memory_id].user_id, d.action.value, d.reason,
                   recs[d.memory_id].memory_type.value, recs[d.memory_id].content)
            for d in decisions
        )
        counts = dict(Counter(c.action for c in changes))
        set_attrs(span, {
            "memory.tenant_id": tenant_id, "memory.user_id": user_id, "memory.lifecycle.job": "lifecycle",
            "memory.lifecycle.dry_run": dry_run, "memory.lifecycle.scanned": len(recs),
            "memory.lifecycle.archived": counts.get("archive", 0), "memory.lifecycle.expired": counts.get("expire", 0),
            "memory.lifecycle.evicted": counts.get("evict", 0), "memory.config_hash": eng.config_hash,
        })
        return LifecycleReport(now=from_epoch(ts) or datetime.now(UTC), tenant_id=tenant_id, user_id=user_id,
                               scanned=len(recs), changes=changes, dry_run=dry_run, users=len({r.user_id for r in recs.values()}),
                               counts=counts)


def reactivate_on_hit(
    eng: Host,
    query: str,
    *,
    user_id: str,
    tenant_id: str = "default",
    now: datetime | None = None,
    min_coverage: float | None = None,
    limit: int | None = None,
) -> list[Change]:
    """Seed 000: a keyword hit re-activates a memory the lifecycle job archived for inactivity.

    Searches the owner's inactivity-archived memories (``metadata._lifecycle ==
    "archive"``; never superseded, expired or evicted ones) with the sparse
    keyword route; each whose query-term coverage is at least ``min_coverage``
    (default ``retrieval.floor``) is un-archived and touched (``last_access_at``
    = now, ``access_count`` + 1). Returns the changes (action ``reactivate``).
    The engine may call this at the start of a retrieval so the memory is found.
    Returns [] when ``lifecycle.reactivate_on_keyword`` is false.
    """
    user_id, tenant_id = require_owner(user_id, tenant_id)
    ts = epoch_now(now)
    q_terms = content_terms(query)
    if not q_terms or not eng.config.lifecycle.reactivate_on_keyword:
        return []
    bar = eng.config.retrieval.floor if min_coverage is None else min_coverage
    flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, statuses=None, include_archived=True,
                      metadata={"_lifecycle": Action.ARCHIVE.value})
    rows = eng.store.search_sparse(sparse_query(q_terms), flt, limit or eng.config.retrieval.route_limit)
    out = []
    for p in rows:
        if p.payload.get("user_id") != user_id or p.payload.get("tenant_id") != tenant_id:
            continue
        cov = keyword_coverage(q_terms, p.payload.get("terms") or ())
        if cov < bar:
            continue
        rec = MemoryRecord.from_payload(p.id, p.payload)
        meta = {k: v for k, v in rec.metadata.items() if k != "_archive_reason"}
        meta["_lifecycle"] = Action.REACTIVATE.value
        eng.store.set_payload([rec.id], {"archived_at": None, "archived": 0, "last_access_at": ts,
                                         "access_count": rec.access_count + 1, "metadata": meta})
        out.append(Change(rec.id, tenant_id, user_id, Action.REACTIVATE.value, f"keyword_hit:{cov:.2f}",
                          rec.memory_type.value, rec.content))
    return out
