"""Test helper: every row of the span and derived tables in a comparable form."""

from __future__ import annotations

import orjson

from memory_engine.observability.warehouse import Warehouse


def table_rows(wh: Warehouse) -> dict[str, list[dict]]:
    """{table: rows} for spans/retrievals/writes/answers, JSON columns parsed, ingest bookkeeping left out."""
    out = {}
    for t in ("spans", "retrievals", "writes", "answers"):
        excl = "ingested_at, source" if t == "spans" else "trace_id"
        rows = wh.fetch_dicts(f"SELECT * EXCLUDE ({excl}) FROM {t} ORDER BY trace_id, span_id")
        for r in rows:
            for k in ("attributes", "resource", "events"):
                if r.get(k) is not None:
                    r[k] = orjson.loads(r[k])
        out[t] = rows
    return out
