"""Erase that is complete and honest (issue 15): after erasing a user, no table or file of the workspace
holds their id or text - OpenInference spans keyed by ``user.id``, ``eval_queries`` rows, dead letters,
cached embeddings, working-memory sessions included - once compacted; the erase span carries no unsalted
hash; the report counts what was removed. On main at 303e610: 6 spans, an eval row, dead letters, 36
cache entries and a session remained, and the report said 0 warehouse rows."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memory_engine import EngineConfig
from memory_engine.lifecycle.forget import pseudonym
from memory_engine.observability.records import SpanRecord
from memory_engine.working import sessions_for

pytestmark = pytest.mark.integration
VICTIM = "victim-7f3a"
T0 = 1_750_000_000 * 10**9


def _open(root: Path, embedder):
    from memory_engine.workspace import open_workspace

    ws = open_workspace(EngineConfig(workspace=str(root)), embedder=embedder)
    return ws, ws.engine, ws.warehouse


def test_erase_leaves_no_trace_after_compaction(embedder, tmp_path, monkeypatch):
    monkeypatch.delenv("MEMWB_PSEUDONYM_SALT", raising=False)
    root = tmp_path / "ws"
    ws, eng, wh = _open(root, embedder)
    texts = [f"ZQX{i} my secret garden note number {i} about orchids" for i in range(5)]
    others = ["I prefer aisle seats on long flights", "My dentist appointment is on Friday at 3pm",
              "I drive a blue Toyota Corolla", "My sister lives in Chengdu", "I am allergic to peanuts"]
    for t, o in zip(texts, others, strict=True):
        eng.add(t, user_id=VICTIM)
        eng.add(o, user_id="bystander")
    res = eng.retrieve("ZQX2 orchids garden", user_id=VICTIM)
    eng.record_answer(res, "ZQX answer about your orchids")
    wh.insert_spans([SpanRecord("e" * 32, "e" * 16, None, "retrieve", T0, T0 + 5, attributes={
        "openinference.span.kind": "RETRIEVER", "user.id": VICTIM, "input.value": "ZQX orchid question"})])
    wh.execute("INSERT INTO eval_queries VALUES ('run1', 's/c1', 'q1', '{}', ?)",
               [f'{{"misses": ["filtered: stored for user {VICTIM}/default"], "text": "ZQX eval"}}'])

    def broken(_e, _r):
        raise OSError("disk full")

    w = eng.writer(apply=broken, max_attempts=1, backoff_s=0.0)
    w.submit("ZQXDL a note that failed to store", user_id=VICTIM)
    w.submit("bystander dead letter", user_id="bystander")
    assert w.close(timeout=30)
    sessions_for(eng).add_turn("ZQXWM a working-memory turn", user_id=VICTIM, session_id="s1")
    eng.flush()
    n_bystander = len(eng.list_memories(user_id="bystander"))
    assert n_bystander >= 3

    rep = ws.erase_user(VICTIM, mode="delete")  # the workspace's one erase place
    assert rep.store == 5
    assert rep.warehouse["spans"] == 8 and rep.warehouse["writes"] == 5 and rep.warehouse["eval_queries"] == 1
    assert rep.elsewhere["dead_letters"] == 1 and rep.elsewhere["working_sessions"] == 1
    assert rep.elsewhere["embedding_cache"] >= 5
    assert not any(("d", t) in eng.embedder._cache for t in texts)
    done = ws.compact()
    assert done["store_points_kept"] == n_bystander and done["warehouse_bytes"] is not None
    assert len(eng.list_memories(user_id="bystander")) == n_bystander  # nobody else's data went

    unsalted = [pseudonym(VICTIM, "default", ""), "anon-" + hashlib.sha256(f"|default|{VICTIM}".encode()).hexdigest()[:12]]
    residue = []
    for (t,) in wh.fetchall("SELECT table_name FROM information_schema.tables WHERE table_schema='main'"):
        blob = "\n".join(repr(r) for r in wh.fetchall(f'SELECT * FROM "{t}"'))
        residue += [f"table {t}: {x}" for x in (VICTIM, "ZQX", *unsalted) if x in blob]
    ws.close()
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            residue += [f"file {p.relative_to(root)}: {x}" for x in (VICTIM, "ZQX", *unsalted) if x.encode() in data]
    assert residue == [], residue
    assert (root / "pseudonym.salt").stat().st_mode & 0o077 == 0  # the generated salt is private
