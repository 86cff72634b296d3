"""Vector-store benchmark: upsert rate, open time, filtered query latency.

Builds N points over ``--users`` users (one tenant): random normalised dense
vectors (``--dim``, default 384 like e5-small / MiniLM), small sparse vectors
(``--terms`` ids drawn Zipf-like from a 30k vocabulary, random weights) and a
realistic :meth:`MemoryRecord.to_payload`. Then, per backend:

* upsert points/s (batches of ``--batch``),
* open time of the existing store (edge only: construct + ensure_collection + first count),
* dense filtered top-10 (tenant + user + status + archived) p50/p95 in ms,
* RRF (dense + sparse prefetch, fused in the engine) p50/p95 in ms,
* numpy brute-force floor over the same user's vectors (matrix product +
  argpartition, vectors already grouped per user) and the store/floor ratios,
* recall@10 of the store's dense route against the brute force (exactness check).

Backends: edge always; qdrant-client ``:memory:`` only for N <= ``--client-max``
(local mode scans in Python). Usage::

    PYTHONPATH=. python benchmarks/store_bench.py --n 10000 100000
"""

from __future__ import annotations

import argparse
import gc
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memory_engine.models import MemoryRecord, MemoryStatus, MemoryType, Source
from memory_engine.store.base import SparseVec, StoredPoint, StoreFilter, VectorStore, memory_id_of
from memory_engine.store.client import ClientStore
from memory_engine.store.edge import EdgeStore

TENANT = "bench"
VOCAB = 30_000
TYPES = [t for t in MemoryType]
TYPE_P = [0.05, 0.45, 0.25, 0.2, 0.05]


@dataclass
class Dataset:
    ids: list[str]
    users: np.ndarray  # (n,) int user index
    dense: np.ndarray  # (n, dim) float32, unit norm
    live: np.ndarray  # (n,) bool: current and not archived (what the default filter keeps)
    points: list[StoredPoint]


def build(n: int, users: int, dim: int, terms: int, seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(n, dim)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    user_of = rng.integers(users, size=n)
    status = rng.choice(
        [MemoryStatus.CURRENT, MemoryStatus.CANDIDATE, MemoryStatus.DEPRECATED], p=[0.9, 0.05, 0.05], size=n
    )
    archived = rng.random(n) < 0.05
    mtype = rng.choice(len(TYPES), p=TYPE_P, size=n)
    created = 1.7e9 + rng.uniform(0, 180 * 86400, size=n)
    # Zipf-like term ids: a few very common terms, a long tail
    term_ids = np.minimum((rng.pareto(1.2, size=(n, terms)) * 50).astype(np.int64), VOCAB - 1)
    weights = rng.uniform(0.5, 3.0, size=(n, terms))
    ids = [memory_id_of(int(i)) for i in rng.choice(2**62, size=n, replace=False)]
    points = []
    for j in range(n):
        t, w = np.unique(term_ids[j], return_index=True)
        rec = MemoryRecord(
            id=ids[j],
            tenant_id=TENANT,
            user_id=f"user-{user_of[j]:04d}",
            content=f"memory {j}: the user mentioned item {term_ids[j][0]} in session {j % 97}",
            memory_type=TYPES[mtype[j]],
            status=MemoryStatus(str(status[j])),
            session_id=f"s-{j % 97}",
            metadata={"topic": f"topic-{j % 13}", "channel": "chat"},
            importance=float(rng.uniform(0.3, 1.0)),
            confidence=float(rng.uniform(0.5, 1.0)),
            source=Source.USER_STATED,
            access_count=int(rng.integers(0, 20)),
            created_at=float(created[j]),
            updated_at=float(created[j]),
            last_access_at=float(created[j] + 3600),
            archived_at=float(created[j] + 86400) if archived[j] else None,
            embedding_version="bench@1",
            terms=tuple(f"t{x}" for x in t[:4]),
        )
        points.append(
            StoredPoint(
                rec.id,
                dense[j].tolist(),
                SparseVec(tuple(int(x) for x in t), tuple(float(x) for x in weights[j][w])),
                rec.to_payload(),
            )
        )
    live = (status == MemoryStatus.CURRENT) & ~archived
    return Dataset(ids, user_of, dense, live, points)


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs) * 1000.0, q))


def upsert_all(store: VectorStore, ds: Dataset, batch: int) -> float:
    t0 = time.perf_counter()
    for i in range(0, len(ds.points), batch):
        store.upsert(ds.points[i : i + batch])
    store.flush()
    return len(ds.points) / (time.perf_counter() - t0)


def queries(ds: Dataset, users: int, nq: int, seed: int) -> list[tuple[int, np.ndarray, SparseVec]]:
    rng = np.random.default_rng(seed + 1)
    out = []
    for _ in range(nq):
        u = int(rng.integers(users))
        # near one of the user's memories, like a real follow-up question
        mine = np.flatnonzero(ds.users == u)
        base = ds.dense[rng.choice(mine)] if len(mine) else rng.normal(size=ds.dense.shape[1])
        q = base + rng.normal(scale=0.05, size=base.shape)
        q = (q / np.linalg.norm(q)).astype(np.float32)
        sp = ds.points[int(rng.choice(mine))].sparse if len(mine) else SparseVec((1,), (1.0,))
        out.append((u, q, sp))
    return out


def run_queries(store: VectorStore, qs, top: int = 10) -> dict[str, object]:
    dense_t, rrf_t, got = [], [], []
    for j, (u, q, sp) in enumerate(qs):
        f = StoreFilter(TENANT, f"user-{u:04d}")
        ql = q.tolist()
        # alternate which route runs first: the first read of a user's points pays the page faults
        for route in ("dense", "rrf") if j % 2 == 0 else ("rrf", "dense"):
            t0 = time.perf_counter()
            if route == "dense":
                hits = store.search_dense(ql, f, top)
                dense_t.append(time.perf_counter() - t0)
                got.append([h.id for h in hits])
            else:
                store.search_rrf(ql, sp, f, top, 50, 60)
                rrf_t.append(time.perf_counter() - t0)
    return {"dense": dense_t, "rrf": rrf_t, "ids": got}


def brute_force(ds: Dataset, qs, top: int = 10) -> tuple[list[float], list[list[str]]]:
    groups = {}
    for u in {u for u, _, _ in qs}:
        rows = np.flatnonzero((ds.users == u) & ds.live)
        groups[u] = (np.ascontiguousarray(ds.dense[rows]), rows)
    times, want = [], []
    for u, q, _ in qs:
        mat, rows = groups[u]
        t0 = time.perf_counter()
        s = mat @ q
        k = min(top, len(s))
        idx = np.argpartition(-s, k - 1)[:k] if k else np.array([], dtype=int)
        idx = idx[np.argsort(-s[idx])]
        times.append(time.perf_counter() - t0)
        want.append([ds.ids[rows[i]] for i in idx])
    return times, want


def recall(got: list[list[str]], want: list[list[str]]) -> float:
    hits = sum(len(set(g) & set(w)) for g, w in zip(got, want, strict=True))
    total = sum(len(w) for w in want)
    return hits / total if total else 1.0


def report(name: str, n: int, rate: float, open_s: float | None, res, floor_t, want) -> None:
    d50, d95 = pct(res["dense"], 50), pct(res["dense"], 95)
    r50, r95 = pct(res["rrf"], 50), pct(res["rrf"], 95)
    f50, f95 = pct(floor_t, 50), pct(floor_t, 95)
    print(f"\n[{name}] N={n:,}")
    print(f"  upsert                 {rate:12,.0f} points/s")
    if open_s is not None:
        print(f"  open existing store    {open_s * 1000:12.1f} ms")
    print(
        f"  dense top-10 filtered  p50 {d50:8.2f} ms   p95 {d95:8.2f} ms   (x{d50 / f50:,.0f} / x{d95 / f95:,.0f} floor)"
    )
    print(
        f"  rrf top-10 filtered    p50 {r50:8.2f} ms   p95 {r95:8.2f} ms   (x{r50 / f50:,.0f} / x{r95 / f95:,.0f} floor)"
    )
    print(f"  numpy floor (per user) p50 {f50:8.3f} ms   p95 {f95:8.3f} ms")
    print(f"  dense recall@10 vs brute force {recall(res['ids'], want):.3f}")


def bench(n: int, args: argparse.Namespace, root: Path) -> None:
    t0 = time.perf_counter()
    ds = build(n, args.users, args.dim, args.terms, args.seed)
    print(
        f"\n=== N={n:,}, {args.users} users, dim {args.dim}: data built in {time.perf_counter() - t0:.1f} s"
    )
    qs = queries(ds, args.users, args.queries, args.seed)
    floor_t, want = brute_force(ds, qs)

    path = root / f"edge-{n}"
    store = EdgeStore(path)
    store.ensure_collection(args.dim)
    rate = upsert_all(store, ds, args.batch)
    store.close()
    gc.collect()
    t0 = time.perf_counter()
    store = EdgeStore(path)
    store.ensure_collection(args.dim)
    assert store.count(StoreFilter(TENANT, None, tenant_scan=True, statuses=None, include_archived=True)) == n
    open_s = time.perf_counter() - t0
    run_queries(store, qs[: min(20, len(qs))])  # warm-up: page cache, thread pool
    res = run_queries(store, qs)
    report("edge", n, rate, open_s, res, floor_t, want)
    store.close()
    if not args.keep:
        shutil.rmtree(path, ignore_errors=True)

    if n <= args.client_max:
        client = ClientStore(":memory:", collection=f"bench_{n}")
        client.ensure_collection(args.dim)
        rate = upsert_all(client, ds, args.batch)
        cq = qs[: args.client_queries]
        res = run_queries(client, cq)
        report("client :memory:", n, rate, None, res, floor_t[: len(cq)], want[: len(cq)])
        client.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--n", type=int, nargs="+", default=[10_000, 100_000], help="Point counts to run (default 10k 100k)."
    )
    ap.add_argument(
        "--users", type=int, default=1000, help="Users the points are spread over (default 1000)."
    )
    ap.add_argument("--dim", type=int, default=384, help="Dense dimension (default 384).")
    ap.add_argument("--terms", type=int, default=8, help="Sparse terms per point before dedup (default 8).")
    ap.add_argument("--queries", type=int, default=300, help="Timed queries per backend (default 300).")
    ap.add_argument(
        "--client-queries", type=int, default=50, help="Timed queries on client :memory: (default 50)."
    )
    ap.add_argument(
        "--client-max", type=int, default=10_000, help="Largest N also run on client :memory: (default 10k)."
    )
    ap.add_argument("--batch", type=int, default=1000, help="Points per upsert call (default 1000).")
    ap.add_argument(
        "--dir", type=Path, default=None, help="Where edge shards go (default: a temp dir on disk)."
    )
    ap.add_argument("--keep", action="store_true", help="Keep the edge shards after the run.")
    ap.add_argument("--seed", type=int, default=0, help="Random seed (default 0).")
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="memwb-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        for n in args.n:
            bench(n, args, root)
    finally:
        if args.dir is None and not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
