"""`memwb serve`: the engine over HTTP, per-tenant API keys, isolation enforced server-side.

A real uvicorn server on a free port, a real HTTP client (httpx), the real engine
(qdrant-edge shard, bundled model); the user-isolation suite replayed over HTTP.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import httpx
import pytest

from memory_engine.errors import ConfigError
from memory_engine.evaluation.suite import load_suite
from memory_engine.service import OPENAPI, ApiKeys, Service, load_keys, parse_key_pairs

SUITE = Path(__file__).resolve().parents[2] / "eval_sets" / "user_isolation.yaml"
INTRUDER = "t_intruder"


def _key(tenant: str) -> str:
    return f"sk-{tenant}-{'x' * 24}"


@pytest.fixture
def served(engine):
    suite = load_suite(SUITE)
    tenants = {e.tenant for c in suite.cases for e in c.events} | {q.tenant for c in suite.cases for q in c.queries}
    keys = ApiKeys({_key(t): t for t in tenants | {INTRUDER}})
    svc = Service(engine, keys, port=0).start()
    with httpx.Client(base_url=svc.url, timeout=60) as client:
        yield suite, client
    svc.stop()


def _h(tenant: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {_key(tenant)}"}


def test_isolation_suite_over_http(served, caplog, capfd):
    suite, client = served
    caplog.set_level(logging.DEBUG)
    owner: dict[str, tuple[str, str]] = {}
    bodies: list[str] = []
    for case in suite.cases:
        label_ids: dict[str, str] = {}
        for ev in case.events:
            body = {"user_id": ev.user, "text": ev.text, "session_id": ev.session, "role": ev.role,
                    "now": ev.at.isoformat()}  # fmt: skip
            if ev.memory_type:
                body["memory_type"] = ev.memory_type
            if ev.fact:
                body["fact"] = {"key": ev.fact[0], "value": ev.fact[1]}
            r = client.post("/v1/memories", json=body, headers=_h(ev.tenant))
            assert r.status_code == 200, r.text
            bodies.append(r.text)
            got = r.json()
            if got["memory_id"]:
                label_ids[ev.label] = got["memory_id"]
                owner.setdefault(got["memory_id"], (ev.tenant, ev.user))
    counts: Counter[str] = Counter()
    for case in suite.cases:
        for q in case.queries:
            body = {"user_id": q.user, "query": q.text, "session_id": q.session, "now": q.at.isoformat()}
            if q.top_k:
                body["top_k"] = q.top_k
            r = client.post("/v1/retrieve", json=body, headers=_h(q.tenant))
            assert r.status_code == 200, r.text
            bodies.append(r.text)
            hits = r.json()["hits"]
            counts["own"] += len(hits)
            counts["foreign"] += sum(1 for h in hits if owner.get(h["memory_id"], (q.tenant, q.user)) != (q.tenant, q.user))
            assert all(f"[mem-{h['memory_id']}]" in r.json()["context"] for h in hits)
            # the same user id through another tenant's key sees nothing of this tenant
            other = client.post("/v1/retrieve", json=body, headers=_h(INTRUDER))
            assert other.status_code == 200 and other.json()["hits"] == []
            facts = client.get("/v1/facts", params={"user_id": q.user}, headers=_h(INTRUDER))
            assert facts.status_code == 200 and facts.json()["facts"] == {}
            mine = client.get("/v1/facts", params={"user_id": q.user}, headers=_h(q.tenant)).json()["facts"]
            for key, value in q.fact.items():  # a fact the suite expects is the owner's value
                assert mine.get(key) == value, (q.id, key, mine)
    assert counts["foreign"] == 0  # cross-owner mis-recall over HTTP: zero (seed 004)
    assert counts["own"] > 0
    # keys never reach a log or a response
    logs = caplog.text + "".join(capfd.readouterr())
    for t in {e.tenant for c in suite.cases for e in c.events} | {INTRUDER}:
        assert _key(t) not in logs
        assert all(_key(t) not in b for b in bodies)


def test_keys_and_tenants_are_enforced(served):
    _suite, client = served
    body = {"user_id": "u1", "text": "I live in Lisbon and I prefer window seats on flights."}
    assert client.post("/v1/memories", json=body).status_code == 401
    assert client.post("/v1/memories", json=body, headers={"Authorization": "Bearer nope"}).status_code == 401
    bad = client.post("/v1/memories", json={**body, "tenant_id": "t_iso"}, headers=_h(INTRUDER))
    assert bad.status_code == 403 and "another tenant" in bad.json()["error"]
    ok = client.post("/v1/memories", json=body, headers={"X-API-Key": _key("t_iso")})
    assert ok.status_code == 200 and ok.json()["outcome"] == "stored"
    mid = ok.json()["memory_id"]
    # another tenant can neither forget nor erase it
    assert client.delete(f"/v1/memories/{mid}", params={"user_id": "u1"}, headers=_h(INTRUDER)).json()["forgotten"] is False
    assert client.delete("/v1/users/u1", headers=_h(INTRUDER)).json()["erased"] == 0
    q = {"user_id": "u1", "query": "where do I live?"}
    assert [h["memory_id"] for h in client.post("/v1/retrieve", json=q, headers=_h("t_iso")).json()["hits"]] == [mid]
    ctx = client.post("/v1/context", json=q, headers=_h("t_iso"))
    assert ctx.status_code == 200 and mid in ctx.json()["memory_ids"]
    # the owner can
    assert client.delete(f"/v1/memories/{mid}", params={"user_id": "u1"}, headers=_h("t_iso")).json()["forgotten"]
    assert client.post("/v1/retrieve", json=q, headers=_h("t_iso")).json()["hits"] == []
    client.post("/v1/memories", json=body, headers=_h("t_iso"))
    assert client.delete("/v1/users/u1", headers=_h("t_iso")).json()["erased"] == 1
    # bad input: 400 naming the field, nothing stored
    for payload, field in (({"text": "x"}, "user_id"), ({"user_id": "u1"}, "text"),
                           ({"user_id": "u1", "text": "x", "now": "yesterday"}, "now"),
                           ({"user_id": "u1", "text": "x", "now": "2026-03-02T09:00:00"}, "now")):  # fmt: skip
        r = client.post("/v1/memories", json=payload, headers=_h("t_iso"))
        assert (r.status_code, r.json()["field"]) == (400, field), payload
    r = client.post("/v1/memories", content=b"[1, 2]", headers=_h("t_iso"))
    assert r.status_code == 400
    assert client.post("/v1/retrieve", json={"user_id": "u1", "query": "x", "top_k": 0}, headers=_h("t_iso")).status_code == 400


def test_openapi_schema_and_health(served):
    _suite, client = served
    doc = client.get("/openapi.json").json()
    assert doc == OPENAPI and doc["openapi"].startswith("3.")
    assert set(doc["paths"]) == {"/v1/memories", "/v1/retrieve", "/v1/context", "/v1/facts",
                                 "/v1/memories/{memory_id}", "/v1/users/{user_id}", "/health"}  # fmt: skip
    assert client.get("/health").json()["status"] == "ok"


def test_key_loading(tmp_path, monkeypatch):
    assert parse_key_pairs("a:k1, b:k2\n# c:k3\n") == {"k1": "a", "k2": "b"}
    with pytest.raises(ConfigError) as e:
        parse_key_pairs("a:k1,secret-without-tenant")
    assert "entry 2" in str(e.value) and "secret" not in str(e.value)
    f = tmp_path / "keys.json"
    f.write_text('{"acme": ["k-a1", "k-a2"], "globex": "k-g"}')
    keys = load_keys(f, env={"MEMWB_API_KEYS": "initech:k-i"})
    assert [keys.tenant_of(k) for k in ("k-a1", "k-a2", "k-g", "k-i", "k-x", None)] == [
        "acme", "acme", "globex", "initech", None, None]
    with pytest.raises(ConfigError):
        load_keys(None, env={})


def test_http_erase_reaches_the_workspace_warehouse(tmp_path, embedder):
    # memwb serve runs on an opened workspace: DELETE /v1/users/{id} erases the owner's trace rows too
    from memory_engine import EngineConfig
    from memory_engine.workspace import open_workspace

    cfg = EngineConfig(workspace=str(tmp_path / "ws")).with_overrides({"lifecycle.erase_warehouse": "pseudonymise"})
    with open_workspace(cfg, embedder=embedder) as ws:
        svc = Service(ws.engine, ApiKeys({_key("t1"): "t1"}), port=0, workspace=ws).start()
        try:
            with httpx.Client(base_url=svc.url, timeout=60) as client:
                body = {"user_id": "u1", "text": "I live in Lisbon and I prefer window seats on flights."}
                assert client.post("/v1/memories", json=body, headers=_h("t1")).json()["outcome"] == "stored"
                ws.flush()
                assert ws.warehouse.fetchone("SELECT count(*) FROM writes WHERE user_id = 'u1'")[0] == 1
                out = client.delete("/v1/users/u1", headers=_h("t1")).json()
        finally:
            svc.stop()
        assert out["erased"] == 1 and out["warehouse_mode"] == "pseudonymise" and out["warehouse_rows"] >= 2
        assert ws.warehouse.fetchone("SELECT count(*) FROM writes WHERE user_id = 'u1'")[0] == 0
        assert ws.warehouse.fetchone("SELECT count(*) FROM writes WHERE content IS NULL")[0] == 1
