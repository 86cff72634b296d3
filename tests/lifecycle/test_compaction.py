"""Compaction removes the bytes of deleted data (issue 15: after an erase the raw text stayed in the
DuckDB file and in Qdrant's WAL and payload pages). Real qdrant-edge shard, real DuckDB file."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_engine.models import MemoryType
from memory_engine.observability.records import SpanRecord
from memory_engine.observability.warehouse import Warehouse
from memory_engine.store.edge import EdgeStore
from memory_engine.write.records import build_record, point

pytestmark = pytest.mark.integration
SECRET = "ZQXJUNIPERBERRY-13987654321"


def _files_with(root: Path, needle: bytes) -> list[str]:
    return [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.mark.slow  # measured 7-30 s on 2 shared cores; still runs in make test
def test_edge_compact_drops_deleted_payloads_and_keeps_the_rest(tmp_path, embedder):
    store = EdgeStore(tmp_path / "qdrant")
    store.ensure_collection(embedder.dim)
    texts = [f"note {i}: oolong tea from Hangzhou, batch {i}" for i in range(30)] + [f"my hobby is {SECRET}"]
    recs = [build_record(t, tenant_id="t", user_id="victim" if SECRET in t else "other", memory_type=MemoryType.SEMANTIC,
                         embedding_version=embedder.version, ts=1.7e9) for t in texts]  # fmt: skip
    store.upsert([point(r, v) for r, v in zip(recs, embedder.embed_documents(texts), strict=True)])
    store.flush()
    assert _files_with(tmp_path, SECRET.encode())  # the write is on disk
    store.delete([recs[-1].id])
    store.flush()
    assert _files_with(tmp_path, SECRET.encode())  # a delete only marks it: WAL and payload pages keep the text
    assert store.compact() == 30
    assert _files_with(tmp_path, SECRET.encode()) == []
    q = embedder.embed_query("oolong tea batch 7")
    from memory_engine.store.base import StoreFilter

    hits = store.search_dense(q.tolist(), StoreFilter(tenant_id="t", user_id="other"), 5)
    assert hits and all(h.payload["user_id"] == "other" for h in hits)
    got = store.retrieve([recs[3].id], with_vectors=True)[0]
    assert got.payload["content"] == texts[3] and len(got.dense) == embedder.dim
    store.close()
    reopened = EdgeStore(tmp_path / "qdrant")  # the swapped shard opens like any other
    reopened.ensure_collection(embedder.dim)
    assert reopened.total_points() == 30
    reopened.close()


def test_warehouse_compact_rewrites_the_file(tmp_path):
    wh = Warehouse(tmp_path / "warehouse.duckdb")
    recs = [SpanRecord(f"{i + 1:032x}", f"{i + 1:016x}", None, "memory.write", 10**18 + i, 10**18 + i + 5,
                       attributes={"memory.user_id": "victim" if i == 0 else "other",
                                   "memory.content": SECRET if i == 0 else f"tea note {i}"})
            for i in range(200)]  # fmt: skip
    wh.insert_spans(recs)
    wh.execute("CHECKPOINT")
    wh.execute("DELETE FROM writes WHERE user_id = 'victim'")
    wh.execute("DELETE FROM spans WHERE span_id = ?", [recs[0].span_id])
    wh.execute("CHECKPOINT")
    assert _files_with(tmp_path, SECRET.encode())  # DuckDB leaves the deleted bytes in free blocks
    before, after = wh.compact()
    assert before > 0 and after > 0
    assert _files_with(tmp_path, SECRET.encode()) == []
    assert wh.count_spans() == 199 and wh.fetchone("SELECT count(*) FROM writes")[0] == 199
    wh.insert_spans([SpanRecord("f" * 32, "f" * 16, None, "x", 10**18, 10**18 + 1)])  # still writable
    assert wh.count_spans() == 200
    wh.close()
