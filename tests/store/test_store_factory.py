"""make_store: backend choice, paths, env fallback, errors."""

from __future__ import annotations

import pytest

from memory_engine.config import StorageSection
from memory_engine.errors import ConfigError
from memory_engine.store.client import ClientStore
from memory_engine.store.edge import EdgeStore
from memory_engine.store.factory import make_store

pytestmark = pytest.mark.integration


def test_edge_default_path_is_workspace_qdrant(fast_tmp) -> None:
    store = make_store(StorageSection(), fast_tmp)
    assert isinstance(store, EdgeStore) and store.path == fast_tmp / "qdrant"
    store.ensure_collection(4)
    assert (fast_tmp / "qdrant" / "edge_config.json").exists()
    store.close()


def test_edge_configured_path(fast_tmp) -> None:
    store = make_store(StorageSection(path=str(fast_tmp / "elsewhere")), fast_tmp / "ws")
    assert isinstance(store, EdgeStore) and store.path == fast_tmp / "elsewhere"
    store.close()


def test_edge_ephemeral_ignores_workspace(fast_tmp) -> None:
    store = make_store(StorageSection(), fast_tmp, ephemeral=True)
    assert isinstance(store, EdgeStore) and store.ephemeral
    store.ensure_collection(4)
    assert not (fast_tmp / "qdrant").exists()
    root = store.path.parent
    store.close()
    assert not root.exists()


def test_client_memory_url(fast_tmp) -> None:
    store = make_store(StorageSection(backend="client", url=":memory:", collection="mem_x"), fast_tmp)
    assert isinstance(store, ClientStore) and store.local and store.collection == "mem_x"
    store.close()


def test_client_url_from_env(fast_tmp, monkeypatch) -> None:
    monkeypatch.setenv("QDRANT_URL", ":memory:")
    store = make_store(StorageSection(backend="client"), fast_tmp)
    assert isinstance(store, ClientStore) and store.url == ":memory:"
    store.close()


def test_client_without_url_is_a_config_error(fast_tmp, monkeypatch) -> None:
    monkeypatch.delenv("QDRANT_URL", raising=False)
    with pytest.raises(ConfigError, match="QDRANT_URL") as info:
        make_store(StorageSection(backend="client"), fast_tmp)
    assert info.value.key == "storage.url"
    store = make_store(StorageSection(backend="client"), fast_tmp, ephemeral=True)
    assert isinstance(store, ClientStore) and store.local
    store.close()


def test_unknown_backend_names_valid_ones(fast_tmp) -> None:
    with pytest.raises(ConfigError, match="edge, client") as info:
        make_store(StorageSection(backend="milvus"), fast_tmp)
    assert info.value.key == "storage.backend"
