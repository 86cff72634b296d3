"""The retrieval pipeline on a real in-memory store and the real model, without the
facade: the same hits as the engine, routes named, rewrite and entity hop per call."""

from __future__ import annotations

import pytest

from memory_engine.retrieve.pipeline import RetrievalPipeline, RetrievalRequest
from memory_engine.retrieve.routes import RouteQuery, build_routes
from memory_engine.scope import Scope

pytestmark = pytest.mark.integration


def _req(q, t0, **kw):
    kw.setdefault("top_k", 5)
    return RetrievalRequest(query=q, user_id="u1", tenant_id="default", ts=t0.timestamp(), now=t0, **kw)


@pytest.fixture
def filled(make_engine, t0):
    eng = make_engine({"retrieval.touch_on_hit": False})
    for text in ("I prefer green tea in the morning", "My order A12345 has not arrived yet",
                 "My manager is Sarah Lee", "Sarah Lee works in the London office",
                 "Please never recommend horror movies to me"):
        eng.add(text, user_id="u1", now=t0, session_id="s1")
    eng.add("I prefer black coffee", user_id="u2", now=t0)
    return eng


def test_pipeline_matches_the_engine(filled, t0):
    pipe = RetrievalPipeline(filled.store, filled.embedder, filled.config)
    for q in ("what tea do I like", "order A12345", "where does my manager work", "recommend a movie"):
        run = pipe.run(_req(q, t0))
        res = filled.retrieve(q, user_id="u1", now=t0, explain=True)
        assert [h.memory_id for h in run.hits] == res.ids
        assert [e.memory_id for e in run.explanations] == [e.memory_id for e in res.explanations]


def test_routes_find_by_channel(filled, t0):
    pipe = RetrievalPipeline(filled.store, filled.embedder, filled.config)
    scope = Scope("default", "u1", filled.embedding_version)
    q = "recommend a movie for tonight"
    plan = pipe.planner.plan(q, scope, None, t0.timestamp(), t0)
    rq = RouteQuery(q, plan.text, plan.route_terms, plan.vector, scope, scope.filter(), None)
    by_name = {r.name: r.search(rq) for r in build_routes(filled.store, filled.config.retrieval)}
    assert by_name["constraint"] and all("horror" in p.payload["content"] for p in by_name["constraint"])
    assert all(p.payload["user_id"] == "u1" for rows in by_name.values() for p in rows)
    assert by_name["fact"] == []


def test_entity_hop_and_isolation(filled, t0):
    pipe = RetrievalPipeline(filled.store, filled.embedder, filled.config)
    run = pipe.run(_req("who is my manager", t0))
    contents = [h.content for h in run.hits]
    assert "My manager is Sarah Lee" in contents
    assert not any("coffee" in c for c in contents)


def test_vague_query_is_rewritten_from_the_session(filled, t0):
    pipe = RetrievalPipeline(filled.store, filled.embedder, filled.config)
    run = pipe.run(_req("that one again", t0, session_id="s1"))
    assert run.rewritten is not None and run.rewritten.startswith("that one again ")
    assert pipe.run(_req("that one again", t0)).rewritten is None
