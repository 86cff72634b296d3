"""Span filters shared by the metric, verdict and exploration queries: which
spans (time window, tenant, user, service, config) a query covers, as SQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..errors import ValidationError

__all__ = ["Filters", "span_where", "to_ns"]


@dataclass(frozen=True)
class Filters:
    """Which spans a metric covers. ``since``/``until``: aware datetimes or
    epoch seconds, half-open ``[since, until)`` on span start; string filters
    match exactly; ``None`` means no filter."""

    since: datetime | float | None = None
    until: datetime | float | None = None
    tenant_id: str | None = None
    user_id: str | None = None
    service: str | None = None
    config_hash: str | None = None



def to_ns(t: datetime | float | None) -> int | None:
    """Epoch nanoseconds of an aware datetime (naive = UTC) or epoch seconds."""
    if t is None:
        return None
    if isinstance(t, datetime):
        if t.tzinfo is None:
            t = t.replace(tzinfo=UTC)
        return int(t.timestamp() * 1_000_000) * 1000
    return int(float(t) * 1_000_000) * 1000


def span_where(f: Filters, alias: str, *, config: bool = True) -> tuple[str, list[Any]]:
    """SQL condition and parameters selecting the spans of ``f`` on table alias ``alias``
    (``config=False``: the table has no config hash; a config filter then raises ValidationError)."""
    conds: list[str] = []
    params: list[Any] = []
    since, until = to_ns(f.since), to_ns(f.until)
    if since is not None:
        conds.append(f"{alias}.start_ns >= ?")
        params.append(since)
    if until is not None:
        conds.append(f"{alias}.start_ns < ?")
        params.append(until)
    for col, val in (("tenant_id", f.tenant_id), ("user_id", f.user_id), ("service", f.service)):
        if val is not None:
            conds.append(f"{alias}.{col} = ?")
            params.append(val)
    if f.config_hash is not None:
        if not config:
            raise ValidationError("config_hash filter does not apply here", field="config_hash")
        conds.append(f"{alias}.config_hash = ?")
        params.append(f.config_hash)
    return (" AND ".join(conds) if conds else "TRUE"), params
