"""The owner's store served to another process (store.remote) passes the whole store contract.

The server runs a real qdrant-edge shard; the client speaks HTTP to it on loopback, as an engine in
another process does beside `memwb app`."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from memory_engine.errors import StoreError
from memory_engine.store.edge import EdgeStore
from memory_engine.store.remote import TOKEN_HEADER, RemoteStore, StoreServer
from memory_engine.testing.store_contract import DIM, StoreContract


class TestRemoteStore(StoreContract):
    @pytest.fixture
    def store(self, fast_tmp) -> Iterator[RemoteStore]:
        edge = EdgeStore(fast_tmp / "shard")
        srv = StoreServer(edge).start()
        s = RemoteStore(srv.url, srv.token)
        s.ensure_collection(DIM)
        yield s
        s.close()
        srv.stop()
        edge.close()

    def test_is_a_vector_store(self, store) -> None:  # the remote name, same behaviour
        from memory_engine.store.base import VectorStore

        assert isinstance(store, VectorStore) and store.name == "remote"

    def test_a_wrong_token_is_refused_and_errors_travel(self, fast_tmp) -> None:
        edge = EdgeStore(fast_tmp / "shard2")
        srv = StoreServer(edge).start()
        try:
            bad = RemoteStore(srv.url, "not-the-token")
            with pytest.raises(StoreError, match="403"):
                bad.ensure_collection(DIM)
            assert httpx.post(f"{srv.url}/store/close", headers={TOKEN_HEADER: srv.token}).status_code == 404
            good = RemoteStore(srv.url, srv.token)
            good.ensure_collection(DIM)
            with pytest.raises(StoreError):  # another dimension: the owner's StoreError reaches the caller
                good.ensure_collection(DIM + 1)
        finally:
            srv.stop()
            edge.close()
