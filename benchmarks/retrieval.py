"""Retrieve latency of the embedded default at 10k and 100k stored memories.

Fills a qdrant-edge shard with N memories spread over 1,000 users (synthetic
payloads and term vectors; dense vectors drawn near a few topic centroids so
the HNSW/filter path does real work), then times ``MemoryEngine.retrieve`` end
to end - query embedding with the real bundled model included - for random
users, and separately the store's own share (the dense + sparse route calls).

    python benchmarks/retrieval.py [--sizes 10000 100000] [--queries 300]

Prints one line per size with p50/p95 (ms) and the ratio to the 10k run.
Not a timed test: figures go into the closing note and benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from memory_engine import EngineConfig, MemoryEngine
from memory_engine.embedding import make_embedder
from memory_engine.models import MemoryRecord, MemoryType
from memory_engine.store.base import StoredPoint, StoreFilter
from memory_engine.text import content_terms, sparse_document, sparse_query
from memory_engine.workspace import open_workspace

WORDS = ("order shipping courier headphones price refund coffee tea flight seat hotel course python game "
         "music movie book doctor allergy school meeting project deadline budget invoice password camera").split()


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q))


def fill(eng: MemoryEngine, n: int, users: int, rng: np.random.Generator, batch: int = 2000) -> float:
    dim = eng.embedder.dim
    centroids = rng.normal(size=(32, dim)).astype(np.float32)
    t = time.perf_counter()
    now = 1_770_000_000.0
    for start in range(0, n, batch):
        pts = []
        for i in range(start, min(n, start + batch)):
            words = rng.choice(WORDS, 6, replace=False)
            text = f"I noted {' '.join(words)} item {i}"
            v = centroids[i % 32] + 0.6 * rng.normal(size=dim).astype(np.float32)
            v /= np.linalg.norm(v)
            terms = tuple(content_terms(text))
            rec = MemoryRecord(id=f"{i + 1:016x}", tenant_id="default", user_id=f"user{i % users}", content=text,
                               memory_type=MemoryType.SEMANTIC, importance=0.7, created_at=now - i, updated_at=now - i,
                               last_access_at=now - i, embedding_version=eng.embedding_version, terms=terms, tokens=12)
            pts.append(StoredPoint(rec.id, v.tolist(), sparse_document(terms), rec.to_payload()))
        eng.store.upsert(pts)
    eng.store.flush()
    return n / (time.perf_counter() - t)


def run(size: int, queries: int, users: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    tmp = Path(tempfile.mkdtemp(prefix="memwb-bench-"))
    cfg = EngineConfig(workspace=str(tmp)).with_overrides({"tracing.warehouse": False, "retrieval.touch_on_hit": False})
    emb = make_embedder(cfg.embedding)
    try:
        ws = open_workspace(cfg, embedder=emb)
        eng = ws.engine
        rate = fill(eng, size, users, rng)
        qs = [f"what did I say about {' '.join(rng.choice(WORDS, 2, replace=False))}" for _ in range(queries)]
        for q in qs[:20]:  # warm up model, jieba and caches
            eng.retrieve(q, user_id="user1")
        emb.max_entries = 0  # every timed query pays for its embedding
        full, store_only = [], []
        for i, q in enumerate(qs):
            user = f"user{int(rng.integers(users))}"
            t = time.perf_counter()
            res = eng.retrieve(q + f" {i}", user_id=user)
            full.append((time.perf_counter() - t) * 1000)
            assert not res.degraded, res.error
            qv = rng.normal(size=emb.dim).astype(np.float32)
            qv /= np.linalg.norm(qv)
            flt = StoreFilter(tenant_id="default", user_id=user, embedding_version=eng.embedding_version)
            t = time.perf_counter()
            eng.store.search_dense(qv.tolist(), flt, 20)
            eng.store.search_sparse(sparse_query(content_terms(q)), flt, 20)
            store_only.append((time.perf_counter() - t) * 1000)
        ws.close()
        t = time.perf_counter()
        ws2 = open_workspace(cfg, embedder=emb)
        ws2.engine  # noqa: B018 - opening is what is timed
        open_s = time.perf_counter() - t
        ws2.close()
        return {"size": size, "upsert_per_s": rate, "open_s": open_s,
                "p50_ms": statistics.median(full), "p95_ms": pct(full, 95), "p99_ms": pct(full, 99),
                "store_p50_ms": statistics.median(store_only), "store_p95_ms": pct(store_only, 95)}
    finally:
        emb.max_entries = cfg.embedding.cache_size
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    rows = []
    for size in args.sizes:
        r = run(size, args.queries, args.users, args.seed)
        rows.append(r)
        label = f"{size // 1000}k" if size >= 1000 else str(size)
        base = rows[0]
        print(f"{label:>5}: retrieve p50 {r['p50_ms']:.1f} ms  p95 {r['p95_ms']:.1f} ms  p99 {r['p99_ms']:.1f} ms"
              f"  | store share p50 {r['store_p50_ms']:.2f} ms p95 {r['store_p95_ms']:.2f} ms"
              f"  | upsert {r['upsert_per_s']:.0f} rec/s  open {r['open_s']:.2f} s"
              f"  | p95 x{r['p95_ms'] / base['p95_ms']:.2f} vs {base['size'] // 1000}k", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
