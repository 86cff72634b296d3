"""memwb's two VectorStore backends run the store contract (memory_engine.testing.store_contract) on the
real engines: a qdrant-edge shard in a temporary directory and qdrant-client's local mode, plus
backend-specific behaviours."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_engine.errors import StoreError
from memory_engine.store.client import ClientStore
from memory_engine.store.edge import META_FILE, EdgeStore
from memory_engine.testing.store_contract import DIM, StoreContract, basis, flt, ids, mid, point, record

pytestmark = pytest.mark.integration


class TestEdgeStore(StoreContract):
    @pytest.fixture
    def store(self, fast_tmp) -> Iterator[EdgeStore]:
        s = EdgeStore(fast_tmp / "shard")
        s.ensure_collection(DIM)
        yield s
        s.close()

    def test_reopen_keeps_data_and_indexes(self, fast_tmp) -> None:
        path = fast_tmp / "shard"
        s = EdgeStore(path)
        s.ensure_collection(DIM)
        s.upsert([point(record(i)) for i in range(1, 4)])
        s.close()
        assert (path / META_FILE).exists()
        s2 = EdgeStore(path)
        assert s2.dim == DIM
        s2.ensure_collection(DIM)
        assert s2.count(flt()) == 3
        assert s2.search_dense(basis(2, noise=0.3, seed=2), flt(), 1)[0].id == mid(2)
        assert ids(s2.scroll(flt(), order_by="created_at")) == [mid(3), mid(2), mid(1)]
        s2.close()

    def test_reopen_with_other_dimension_raises(self, fast_tmp) -> None:
        path = fast_tmp / "shard"
        s = EdgeStore(path)
        s.ensure_collection(DIM)
        s.upsert([point(record(1))])
        s.close()
        s2 = EdgeStore(path)
        with pytest.raises(StoreError, match=f"{DIM}-d"):
            s2.ensure_collection(DIM * 2)
        assert s2.count(flt()) == 1  # nothing lost
        s2.close()

    def test_reopen_without_metadata_file_lets_edge_check(self, fast_tmp) -> None:
        path = fast_tmp / "shard"
        s = EdgeStore(path)
        s.ensure_collection(DIM)
        s.upsert([point(record(1))])
        s.close()
        (path / META_FILE).unlink()
        s2 = EdgeStore(path)
        with pytest.raises(StoreError):
            s2.ensure_collection(DIM + 3)
        s2.close()
        s3 = EdgeStore(path)
        s3.ensure_collection(DIM)
        assert s3.count(flt()) == 1 and (path / META_FILE).exists()
        s3.close()

    def test_second_open_of_same_shard_is_refused(self, fast_tmp) -> None:
        first = EdgeStore(fast_tmp / "shard")
        first.ensure_collection(DIM)
        with pytest.raises(StoreError, match="already open"):
            EdgeStore(fast_tmp / "shard")
        first.upsert([point(record(1))])
        assert first.count(flt()) == 1
        first.close()

    def test_use_before_ensure_collection_raises(self, fast_tmp) -> None:
        s = EdgeStore(fast_tmp / "fresh")
        with pytest.raises(StoreError, match="ensure_collection"):
            s.count(flt())
        s.close()

    def test_ephemeral_directory_removed_on_close(self) -> None:
        s = EdgeStore(ephemeral=True)
        s.ensure_collection(DIM)
        s.upsert([point(record(1))])
        assert s.count(flt()) == 1
        root = s.path.parent
        assert root.exists()
        s.close()
        assert not root.exists()


class TestClientStore(StoreContract):
    @pytest.fixture
    def store(self) -> Iterator[ClientStore]:
        s = ClientStore(":memory:")
        s.ensure_collection(DIM)
        yield s
        s.close()

    def test_collection_without_named_vectors_is_refused(self) -> None:
        s = ClientStore(":memory:", collection="plain")
        from qdrant_client import models as qm

        s._client.create_collection(
            "plain", vectors_config=qm.VectorParams(size=DIM, distance=qm.Distance.COSINE)
        )
        with pytest.raises(StoreError, match="named vectors"):
            s.ensure_collection(DIM)
        s.close()
