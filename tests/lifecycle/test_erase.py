"""erase_user: nothing of the user remains in the vector store or the DuckDB warehouse."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from memory_engine.engine import MemoryEngine
from memory_engine.lifecycle.forget import erase_user, pseudonym
from memory_engine.observability.exporter import DuckDBSpanExporter
from memory_engine.observability.verdicts import record_verdict
from memory_engine.observability.warehouse import Warehouse
from memory_engine.store.base import StoreFilter

pytestmark = pytest.mark.integration

VICTIM = "alice-0xdead"
TABLES = ("spans", "retrievals", "writes", "answers", "verdicts")


def _populate(tmp_path, day):
    wh = Warehouse(tmp_path / "wh.duckdb")
    eng = MemoryEngine.in_memory(span_processors=[SimpleSpanProcessor(DuckDBSpanExporter(wh))])
    for uid, code in ((VICTIM, "qwertyuiop"), ("bob", "asdfghjkl")):
        eng.add("I travel to Zanzibar every July", user_id=uid, now=day(0), session_id="s1")
        eng.add(f"My locker code is {code}", user_id=uid, now=day(0))
        eng.add("Archived note about Zanzibar ferries", user_id=uid, memory_type="episodic", now=day(0))
        res = eng.retrieve("When do I go to Zanzibar?", user_id=uid, session_id="s1", now=day(1))
        assert res.hits
        eng.record_answer(res, f"You go in July [mem-{res.hits[0].memory_id}]")
        record_verdict(wh, res.span_id, res.hits[0].memory_id, "correct", reviewer="rev", note="Zanzibar ok")
    # one of the owner's records is archived: erase must reach it too
    rec = eng.list_memories(user_id=VICTIM, memory_types=["episodic"])[0]
    eng.store.set_payload([rec.id], {"archived_at": day(2).timestamp()})
    return wh, eng


def _dump(wh, table):
    return [str(r) for r in wh.fetchall(f"SELECT * FROM {table}")]


def test_erase_deletes_everything_of_the_user(tmp_path, day):
    wh, eng = _populate(tmp_path, day)
    try:
        before = {t: len(_dump(wh, t)) for t in TABLES}
        n = len(eng.list_memories(user_id=VICTIM))
        assert n >= 2 and any(r.archived_at for r in eng.list_memories(user_id=VICTIM))
        rep = erase_user(eng, VICTIM, warehouse=wh, mode="delete")
        assert rep.store == n and rep.warehouse_mode == "delete"
        assert rep.warehouse["retrievals"] == 1 and rep.warehouse["answers"] == 1 and rep.warehouse["verdicts"] == 1
        # 3 writes, retrieve, answer: the engine's own erase span carries a pseudonym, never the victim's id
        assert rep.warehouse["writes"] == 3 and rep.warehouse["spans"] >= 5
        # the store: nothing of the owner in any status, archived or not
        flt = StoreFilter(tenant_id="default", user_id=None, statuses=None, include_archived=True, tenant_scan=True)
        owners = {p.payload["user_id"] for p in eng.store.scroll(flt)}
        assert owners == {"bob"}
        # the warehouse: no row mentions the owner's id or anything only the owner said
        for t in TABLES:
            rows = _dump(wh, t)
            assert not any(VICTIM in r or "qwertyuiop" in r for r in rows), t
        # bob keeps everything (his rows mention Zanzibar too)
        assert any("bob" in r for r in _dump(wh, "retrievals")) and len(_dump(wh, "verdicts")) == 1
        assert sum(len(_dump(wh, t)) for t in TABLES) < sum(before.values())
        eng.flush()
        assert not any(VICTIM in r for r in _dump(wh, "spans"))  # the erase's own spans leave no raw id
    finally:
        eng.close()
        wh.close()


def test_erase_pseudonymises_the_warehouse_when_configured(tmp_path, day):
    wh, eng = _populate(tmp_path, day)
    try:
        n_ret = len(_dump(wh, "retrievals"))
        rep = erase_user(eng, VICTIM, warehouse=wh, mode="pseudonymise", salt="s3cret")
        alias = pseudonym(VICTIM, "default", "s3cret")
        assert rep.pseudonym == alias and rep.store >= 2
        assert len(_dump(wh, "retrievals")) == n_ret  # rows kept for the metrics...
        for t in TABLES:
            for r in _dump(wh, t):
                assert VICTIM not in r and "qwertyuiop" not in r, t  # ...but nothing identifies or quotes the user
        row = wh.fetchone("SELECT query, retrieved_contents, retrieved_count FROM retrievals WHERE user_id = ?", [alias])
        assert row[0] is None and row[1] is None and row[2] >= 1
        assert wh.fetchone("SELECT note FROM verdicts WHERE note IS NULL") is not None
    finally:
        eng.close()
        wh.close()
