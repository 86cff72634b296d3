"""The contract every :class:`~memory_engine.store.base.VectorStore` backend must pass (haystack style).

:class:`StoreContract` holds the behaviours as pytest test methods; a backend's
test module subclasses it and supplies a ``store`` fixture (an empty store of
dimension :data:`DIM`, ``ensure_collection`` done)::

    import pytest
    from memory_engine.testing.store_contract import DIM, StoreContract

    class TestMyStore(StoreContract):
        @pytest.fixture
        def store(self):
            s = MyStore(...)
            s.ensure_collection(DIM)
            yield s
            s.close()

memwb's own backends run it in ``tests/store/test_store_contract.py`` (a
qdrant-edge shard and qdrant-client's local mode). Needs ``pytest`` and
``hypothesis`` (``pip install 'memwb[testing]'``).
"""

from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..errors import StoreError
from ..models import MemoryRecord, MemoryStatus, MemoryType, Source
from ..store.base import (
    ScoredPayload,
    SparseVec,
    StoredPoint,
    StoreFilter,
    VectorStore,
    memory_id_of,
    point_id,
)

__all__ = ["COMMON_TERM", "DIM", "RARE_TERM", "StoreContract", "all_reads", "basis", "flt", "ids", "mid", "point",
           "record", "unit"]

DIM = 8
COMMON_TERM = 1  # every test document carries it: low IDF
RARE_TERM = 99  # one document carries it: high IDF


def mid(i: int) -> str:
    return memory_id_of(i)


def unit(v: np.ndarray) -> list[float]:
    return (v / np.linalg.norm(v)).tolist()


def basis(i: int, noise: float = 0.0, seed: int = 0) -> list[float]:
    v = np.zeros(DIM)
    v[i % DIM] = 1.0
    if noise:
        v += np.random.default_rng(seed).normal(scale=noise, size=DIM)
    return unit(v)


def record(i: int, *, tenant: str = "t1", user: str = "u1", **kw: Any) -> MemoryRecord:
    """Test record number ``i`` of (tenant, user); ``kw`` overrides any field."""
    base: dict[str, Any] = dict(
        id=mid(i),
        tenant_id=tenant,
        user_id=user,
        content=f"memory {i}",
        memory_type=MemoryType.EPISODIC,
        created_at=1_700_000_000.0 + i,
        updated_at=1_700_000_000.0 + i,
        embedding_version="e5-small@1",
    )
    base.update(kw)
    return MemoryRecord(**base)


def point(
    rec: MemoryRecord, dense: list[float] | None = None, sparse: SparseVec | None = None
) -> StoredPoint:
    n = point_id(rec.id)
    return StoredPoint(
        id=rec.id,
        dense=dense if dense is not None else basis(n, noise=0.3, seed=n),
        sparse=sparse if sparse is not None else SparseVec((COMMON_TERM, 1000 + n), (1.0, 1.0)),
        payload=rec.to_payload(),
    )


def ids(hits: list[ScoredPayload]) -> list[str]:
    return [h.id for h in hits]


def flt(tenant: str = "t1", user: str | None = "u1", **kw) -> StoreFilter:
    return StoreFilter(tenant_id=tenant, user_id=user, tenant_scan=user is None, **kw)


def all_reads(store: VectorStore, f: StoreFilter) -> dict[str, set[str]]:
    """Ids every read path returns for ``f`` (generous limits)."""
    q = basis(0)
    sp = SparseVec((COMMON_TERM,), (1.0,))
    return {
        "dense": set(ids(store.search_dense(q, f, 1000))),
        "sparse": set(ids(store.search_sparse(sp, f, 1000))),
        "rrf": set(ids(store.search_rrf(q, sp, f, 1000, 1000, 60))),
        "scroll": set(ids(store.scroll(f))),
        "scroll_ordered": set(ids(store.scroll(f, order_by="created_at"))),
    }


class StoreContract:
    """Behaviours of :class:`VectorStore`; subclasses provide ``store`` (dimension DIM, empty)."""

    @pytest.fixture
    def store(self) -> Iterator[VectorStore]:  # pragma: no cover - overridden
        raise NotImplementedError

    # ------------------------------------------------------------ round trip
    def test_is_a_vector_store(self, store: VectorStore) -> None:
        assert isinstance(store, VectorStore)
        assert isinstance(store.name, str) and store.name

    def test_upsert_retrieve_round_trip_of_full_record(self, store: VectorStore) -> None:
        rec = MemoryRecord(
            id="00ab00cd00ef0012",
            tenant_id="acme",
            user_id="alice",
            content="用户偏好蓝色 Jabra 耳机",
            memory_type=MemoryType.FACT,
            status=MemoryStatus.CURRENT,
            session_id="s-42",
            role="assistant",
            metadata={"topic": "headphones", "priority": 3, "nested": {"a": [1, 2]}},
            importance=0.8,
            confidence=0.9,
            source=Source.MODEL_INFERRED,
            access_count=7,
            created_at=1_700_000_123.5,
            updated_at=1_700_000_200.25,
            last_access_at=1_700_000_300.0,
            archived_at=None,
            expires_at=1_800_000_000.0,
            superseded_by=None,
            supersedes=("0000000000000001", "0000000000000002"),
            permanent=True,
            embedding_version="e5-small@1",
            fact_key="headphones.color",
            fact_value={"color": "blue", "brand": "Jabra"},
            terms=("蓝色", "jabra", "耳机"),
            recurrence=2,
        )
        dense = basis(3, noise=0.5, seed=7)
        store.upsert([StoredPoint(rec.id, dense, SparseVec((5, 9), (0.5, 1.5)), rec.to_payload())])
        (got,) = store.retrieve([rec.id], with_vectors=True)
        assert got.id == rec.id
        assert got.payload == rec.to_payload()
        assert MemoryRecord.from_payload(got.id, got.payload) == rec
        assert got.dense is not None and np.allclose(got.dense, dense, atol=1e-5)
        (plain,) = store.retrieve([rec.id])
        assert plain.dense is None and plain.score == 0.0

    def test_retrieve_skips_missing_and_keeps_order(self, store: VectorStore) -> None:
        store.upsert([point(record(i)) for i in (1, 2, 3)])
        assert ids(store.retrieve([mid(3), mid(77), mid(1)])) == [mid(3), mid(1)]
        assert store.retrieve([]) == []

    def test_upsert_replaces_by_id(self, store: VectorStore) -> None:
        store.upsert([point(record(1, content="old"))])
        store.upsert([point(record(1, content="new"))])
        assert store.count(flt()) == 1
        assert store.retrieve([mid(1)])[0].payload["content"] == "new"

    # ------------------------------------------------------------- isolation
    def test_other_users_and_tenants_never_come_back(self, store: VectorStore) -> None:
        owners = [("t1", "u1"), ("t1", "u2"), ("t2", "u1")]
        pts = []
        for n, (t, u) in enumerate(owners):
            for j in range(4):
                i = 10 * (n + 1) + j
                # identical vectors across owners: only the filter can tell them apart
                pts.append(
                    point(
                        record(i, tenant=t, user=u), dense=basis(j), sparse=SparseVec((COMMON_TERM,), (1.0,))
                    )
                )
        store.upsert(pts)
        for n, (t, u) in enumerate(owners):
            expected = {mid(10 * (n + 1) + j) for j in range(4)}
            for route, got in all_reads(store, flt(t, u)).items():
                assert got == expected, (t, u, route)
            assert store.count(flt(t, u)) == 4
        scan = all_reads(store, flt("t1", None))
        for route, got in scan.items():
            assert got == {mid(10 + j) for j in range(4)} | {mid(20 + j) for j in range(4)}, route
        assert all(not v for v in all_reads(store, flt("t3", "u1")).values())

    @settings(
        max_examples=15,
        deadline=None,
        database=None,
        # one store per backend subclass, shared by the examples (fresh tenants each)
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.differing_executors,
        ],
    )
    @given(
        owners=st.lists(
            st.tuples(st.sampled_from(["ta", "tb"]), st.sampled_from(["u1", "u2", "u3"])),
            min_size=1,
            max_size=12,
        )
    )
    def test_isolation_property(self, store: VectorStore, owners: list[tuple[str, str]]) -> None:
        # one store across examples: a fresh tenant prefix per example keeps them apart
        prefix = uuid.uuid4().hex[:8]
        base = int(uuid.uuid4().hex[:12], 16) << 8
        pts = []
        expected: dict[tuple[str, str], set[str]] = {}
        for j, (t, u) in enumerate(owners):
            rec = record(base + j, tenant=prefix + t, user=u)
            pts.append(point(rec, sparse=SparseVec((COMMON_TERM,), (1.0,))))
            expected.setdefault((t, u), set()).add(rec.id)
        store.upsert(pts)
        for t in ("ta", "tb"):
            for u in ("u1", "u2", "u3"):
                want = expected.get((t, u), set())
                for route, got in all_reads(store, flt(prefix + t, u)).items():
                    assert got == want, (t, u, route)
                assert store.count(flt(prefix + t, u)) == len(want)

    # --------------------------------------------------------------- filters
    def test_status_filter(self, store: VectorStore) -> None:
        store.upsert(
            [
                point(record(1, status=MemoryStatus.CURRENT)),
                point(record(2, status=MemoryStatus.CANDIDATE)),
                point(record(3, status=MemoryStatus.DEPRECATED)),
                point(record(4, status=MemoryStatus.PENDING_CONFIRMATION)),
            ]
        )
        assert ids(store.scroll(flt())) == [mid(1)]
        assert set(ids(store.scroll(flt(statuses=("candidate", "pending_confirmation"))))) == {mid(2), mid(4)}
        assert store.count(flt(statuses=(MemoryStatus.CURRENT, MemoryStatus.DEPRECATED))) == 2  # enums work too
        assert store.count(flt(memory_types=(MemoryType.EPISODIC,))) == 1
        assert store.count(flt(statuses=None)) == 4
        assert store.count(flt(statuses=())) == 0
        assert store.search_dense(basis(0), flt(statuses=()), 10) == []

    def test_archived_filter(self, store: VectorStore) -> None:
        store.upsert([point(record(1)), point(record(2, archived_at=1_700_000_500.0))])
        assert ids(store.search_dense(basis(2), flt(), 10)) == [mid(1)]
        assert set(ids(store.search_dense(basis(2), flt(include_archived=True), 10))) == {mid(1), mid(2)}

    def test_type_version_session_fact_and_id_filters(self, store: VectorStore) -> None:
        store.upsert(
            [
                point(record(1, memory_type=MemoryType.FACT, fact_key="drink", session_id="s1")),
                point(record(2, memory_type=MemoryType.SEMANTIC, session_id="s1")),
                point(record(3, memory_type=MemoryType.EPISODIC, embedding_version="old@0", session_id="s2")),
            ]
        )
        assert set(ids(store.scroll(flt(memory_types=("fact", "semantic"))))) == {mid(1), mid(2)}
        assert store.count(flt(memory_types=())) == 0
        assert ids(store.scroll(flt(embedding_version="old@0"))) == [mid(3)]
        assert set(ids(store.scroll(flt(session_id="s1")))) == {mid(1), mid(2)}
        assert ids(store.scroll(flt(fact_key="drink"))) == [mid(1)]
        assert set(ids(store.scroll(flt(memory_ids=(mid(2), mid(3), mid(99)))))) == {mid(2), mid(3)}
        assert store.count(flt(memory_ids=())) == 0

    def test_created_range_is_inclusive(self, store: VectorStore) -> None:
        store.upsert([point(record(i, created_at=float(100 * i))) for i in range(1, 6)])
        got = ids(
            store.scroll(
                flt(created_after=200.0, created_before=400.0), order_by="created_at", descending=False
            )
        )
        assert got == [mid(2), mid(3), mid(4)]
        assert store.count(flt(created_after=450.0)) == 1
        assert store.count(flt(created_before=100.0)) == 1

    def test_metadata_filter(self, store: VectorStore) -> None:
        store.upsert(
            [
                point(record(1, metadata={"topic": "tea", "n": 1})),
                point(record(2, metadata={"topic": "tea", "n": 2.0})),
                point(record(3, metadata={"topic": "coffee"})),
            ]
        )
        assert set(ids(store.scroll(flt(metadata={"topic": "tea"})))) == {mid(1), mid(2)}
        assert ids(store.scroll(flt(metadata={"topic": "tea", "n": 2}))) == [mid(2)]
        assert ids(store.scroll(flt(metadata={"n": 1.0}))) == [mid(1)]
        assert store.count(flt(metadata={"topic": "juice"})) == 0
        with pytest.raises(ValueError, match="metadata.flag"):
            store.count(flt(metadata={"flag": True}))

    # --------------------------------------------------------------- ranking
    def test_dense_ranking_is_cosine_order(self, store: VectorStore) -> None:
        rng = np.random.default_rng(11)
        vecs = {i: unit(rng.normal(size=DIM)) for i in range(1, 13)}
        store.upsert([point(record(i), dense=v) for i, v in vecs.items()])
        q = unit(rng.normal(size=DIM))
        want = sorted(vecs, key=lambda i: -float(np.dot(q, vecs[i])))
        hits = store.search_dense(q, flt(), 5)
        assert ids(hits) == [mid(i) for i in want[:5]]
        for h in hits:
            assert math.isclose(h.score, float(np.dot(q, vecs[point_id(h.id)])), abs_tol=1e-4)
        assert store.search_dense(vecs[4], flt(), 1)[0].id == mid(4)

    def test_sparse_rare_term_outranks_common_term(self, store: VectorStore) -> None:
        store.upsert(
            [
                point(record(1), sparse=SparseVec((COMMON_TERM, 7), (1.0, 1.0))),
                point(record(2), sparse=SparseVec((COMMON_TERM, RARE_TERM), (1.0, 1.0))),
                point(record(3), sparse=SparseVec((COMMON_TERM, 8), (1.0, 1.0))),
                point(record(4), sparse=SparseVec((500,), (1.0,))),
            ]
        )
        hits = store.search_sparse(SparseVec((COMMON_TERM, RARE_TERM), (1.0, 1.0)), flt(), 10)
        assert hits[0].id == mid(2)
        assert hits[0].score > hits[1].score > 0
        assert mid(4) not in ids(hits)  # shares no term with the query
        assert store.search_sparse(SparseVec((), ()), flt(), 10) == []

    def test_rrf_fuses_both_routes(self, store: VectorStore) -> None:
        # 1: best dense, no query term; 2: best sparse, last dense; 3: second in both
        store.upsert(
            [
                point(record(1), dense=basis(0), sparse=SparseVec((50,), (1.0,))),
                point(
                    record(2),
                    dense=[-x for x in basis(0)],
                    sparse=SparseVec((COMMON_TERM, RARE_TERM), (1.0, 1.0)),
                ),
                point(
                    record(3),
                    dense=basis(0, noise=0.2, seed=3),
                    sparse=SparseVec((COMMON_TERM, 60), (1.0, 1.0)),
                ),
                point(record(4), dense=basis(6), sparse=SparseVec((61,), (1.0,))),
            ]
        )
        q, sp, k = basis(0), SparseVec((COMMON_TERM, RARE_TERM), (1.0, 1.0)), 60
        dense = ids(store.search_dense(q, flt(), 10))
        sparse = ids(store.search_sparse(sp, flt(), 10))
        expected: dict[str, float] = {}
        for ranking in (dense, sparse):
            for rank, i in enumerate(ranking, start=1):
                expected[i] = expected.get(i, 0.0) + 1.0 / (k + rank)
        hits = store.search_rrf(q, sp, flt(), 10, 10, k)
        assert hits[0].id == mid(3)  # 2/(k+2) beats 1/(k+1) + 1/(k+4) and 1/(k+1) alone
        assert {h.id: h.score for h in hits} == pytest.approx(expected, rel=1e-5)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert ids(store.search_rrf(q, SparseVec((), ()), flt(), 10, 10, k)) == dense
        with pytest.raises(ValueError, match="whole number"):
            store.search_rrf(q, sp, flt(), 10, 10, 60.5)

    # ---------------------------------------------------------------- scroll
    def test_scroll_ordered_by_created_at(self, store: VectorStore) -> None:
        created = [5.0, 1.0, 4.0, 2.0, 3.0]
        store.upsert([point(record(i + 1, created_at=c)) for i, c in enumerate(created)])
        by_time = [mid(i + 1) for i in sorted(range(5), key=lambda i: -created[i])]
        assert ids(store.scroll(flt(), order_by="created_at")) == by_time
        assert ids(store.scroll(flt(), order_by="created_at", descending=False)) == by_time[::-1]
        assert ids(store.scroll(flt(), limit=2, order_by="created_at")) == by_time[:2]
        with_vec = store.scroll(flt(), limit=1, with_vectors=True)
        assert with_vec[0].dense is not None and len(with_vec[0].dense) == DIM
        with pytest.raises(ValueError):
            store.scroll(flt(), order_by="content")

    def test_scroll_by_last_access_skips_never_accessed(self, store: VectorStore) -> None:
        store.upsert(
            [point(record(1, last_access_at=10.0)), point(record(2)), point(record(3, last_access_at=30.0))]
        )
        assert ids(store.scroll(flt(), order_by="last_access_at")) == [mid(3), mid(1)]
        assert len(store.scroll(flt())) == 3

    # ----------------------------------------------------------------- writes
    def test_set_payload_merges(self, store: VectorStore) -> None:
        store.upsert([point(record(1, metadata={"topic": "tea"})), point(record(2))])
        store.set_payload([mid(1), mid(404)], {"access_count": 3, "last_access_at": 99.0, "permanent": True})
        p = store.retrieve([mid(1)])[0].payload
        assert p["access_count"] == 3 and p["last_access_at"] == 99.0 and p["permanent"] == 1
        assert p["content"] == "memory 1" and p["metadata"] == {"topic": "tea"}
        assert store.retrieve([mid(2)])[0].payload["access_count"] == 0
        assert store.retrieve([mid(404)]) == []
        store.set_payload([mid(1)], {"archived_at": 123.0})
        assert store.retrieve([mid(1)])[0].payload["archived"] == 1
        assert ids(store.scroll(flt())) == [mid(2)]

    def test_delete_and_count(self, store: VectorStore) -> None:
        store.upsert([point(record(i)) for i in range(1, 6)])
        assert store.count(flt()) == 5
        store.delete([mid(2), mid(4), mid(999)])
        assert store.count(flt()) == 3
        assert store.retrieve([mid(2)]) == []
        assert mid(2) not in ids(store.search_dense(basis(2), flt(), 10))
        store.delete([])
        store.flush()
        assert store.count(flt()) == 3

    # ----------------------------------------------------------------- errors
    def test_dimension_mismatch_raises_store_error(self, store: VectorStore) -> None:
        store.ensure_collection(DIM)  # idempotent
        with pytest.raises(StoreError):
            store.ensure_collection(DIM + 1)
        with pytest.raises(StoreError) as info:
            store.upsert([point(record(1), dense=[1.0, 0.0])])
        assert info.value.__cause__ is not None

    def test_closed_store_raises(self, store: VectorStore) -> None:
        store.close()
        store.close()  # idempotent
        with pytest.raises(StoreError):
            store.count(flt())
        with pytest.raises(StoreError):
            store.upsert([point(record(1))])

    def test_concurrent_reader_and_writer(self, store: VectorStore) -> None:
        errors: list[BaseException] = []

        def write() -> None:
            try:
                for i in range(1, 41):
                    store.upsert([point(record(i))])
            except BaseException as e:  # surfaced by the assert below
                errors.append(e)

        def read() -> None:
            try:
                for _ in range(40):
                    store.search_dense(basis(1), flt(), 5)
                    store.count(flt())
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=write), threading.Thread(target=read)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert store.count(flt()) == 40
