"""The one query layer (observability/explore.py) the app and the CLI read: the union of the
features of the two layers it replaced (the app's and `memwb timeline`'s), each tested."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_engine.errors import ValidationError
from memory_engine.observability import explore, verdicts
from memory_engine.observability.metrics import Filters
from memory_engine.observability.synthetic import emit_answer, emit_retrieve, emit_write
from memory_engine.observability.tracing import SPAN_FORGET, set_attrs

DAY_NS = 86_400 * 10**9
T0 = 1_750_000_000 * 10**9

pytestmark = pytest.mark.integration


@pytest.fixture
def cited(wh, tracer):
    emit_write(tracer, at_ns=T0, user_id="u1", memory_id="m1", importance=0.8, content="likes tea")
    emit_write(tracer, at_ns=T0 + 10**9, user_id="u1", memory_id="m2", content="likes coffee now",
               superseded_ids=["m1"])  # fmt: skip
    r1 = emit_retrieve(tracer, at_ns=T0 + DAY_NS, user_id="u1", ids=["m1", "m2"], contents=["likes tea", "likes coffee now"],
                       sources=["vector", "vector+keyword"], scores=[0.9, 0.7], query="drink?")  # fmt: skip
    a1 = emit_answer(tracer, at_ns=T0 + DAY_NS + 10**8, user_id="u1", retrieve_span_id=r1, cited_ids=["m1", "m2"],
                     answer_text="You like tea [mem-m1] and coffee [mem-m2].")  # fmt: skip
    r2 = emit_retrieve(tracer, at_ns=T0 + 2 * DAY_NS, user_id="u1", ids=["m2"], query="coffee?")
    return {"r1": r1, "a1": a1, "r2": r2}


def test_retrieval_list_pages_filters_and_searches(wh, cited):
    page = explore.list_retrievals(wh, limit=1)
    assert page.total == 2 and len(page.rows) == 1 and page.rows[0].span_id == cited["r2"]  # newest first
    page2 = explore.list_retrievals(wh, limit=1, offset=1)
    assert page2.rows[0].span_id == cited["r1"] and page2.rows[0].answered and page2.rows[0].cited_count == 2
    assert page2.records()[0]["cited_count"] == 2 and page2.records()[0]["at"] == page2.rows[0].at
    assert explore.list_retrievals(wh, query_contains="DRINK").total == 1
    # search: a query substring, or an exact span id or trace id
    assert [r.span_id for r in explore.list_retrievals(wh, search="coff").rows] == [cited["r2"]]
    assert [r.span_id for r in explore.list_retrievals(wh, search=cited["r1"]).rows] == [cited["r1"]]
    trace = page2.rows[0].trace_id
    assert [r.span_id for r in explore.list_retrievals(wh, search=trace).rows] == [cited["r1"]]
    assert explore.list_retrievals(wh, search="nothing like this").total == 0
    assert explore.list_retrievals(wh, degraded_only=True).total == 0
    assert explore.list_retrievals(wh, Filters(user_id="u2")).total == 0
    # a page past the end still knows the total
    past = explore.list_retrievals(wh, limit=5, offset=10)
    assert past.rows == () and past.total == 2
    for bad in ({"limit": 0}, {"limit": 1001}, {"offset": -1}):
        with pytest.raises(ValidationError):
            explore.list_retrievals(wh, **bad)


def test_retrieval_detail_hits_answers_verdicts_and_writes(wh, cited):
    verdicts.record_verdict(wh, cited["r1"], "m2", "correct", reviewer="ana")
    d = explore.retrieval_detail(wh, cited["r1"])
    assert [(h.rank, h.memory_id, h.score, h.sources, h.cited) for h in d.hits] == [
        (1, "m1", 0.9, "vector", True), (2, "m2", 0.7, "vector+keyword", True)]  # fmt: skip
    assert d.hits[1].verdicts[0]["verdict"] == "correct" and d.hit_records()[1]["verdicts"] == 1
    assert d.answers[0]["answer_text"].startswith("You like tea") and d.answers[0]["at"] is not None
    assert [w["memory_id"] for w in d.writes] == ["m1", "m2"] and d.writes_in_window
    assert not any(w["after_retrieval"] for w in d.writes)
    assert d.retrieval["query"] == "drink?" and d.retrieval["started_at"] is not None
    assert d.attributes["memory.query"] == "drink?" and d.row.span_id == cited["r1"]
    assert explore.retrieval_detail(wh, "0" * 16) is None


def test_detail_lists_only_the_same_tenants_writes(wh, tracer):
    # the same user id in another tenant is another person: its writes do not explain this retrieval
    emit_write(tracer, at_ns=T0, user_id="u1", memory_id="mine", content="likes tea", tenant_id="acme")
    emit_write(tracer, at_ns=T0 + 10**9, user_id="u1", memory_id="theirs", content="likes rum", tenant_id="globex")
    r = emit_retrieve(tracer, at_ns=T0 + DAY_NS, user_id="u1", ids=["mine"], query="drink?", tenant_id="acme")
    assert [w["memory_id"] for w in explore.retrieval_detail(wh, r).writes] == ["mine"]


def test_detail_falls_back_to_the_latest_writes_before_it(wh, tracer):
    # written months before the question (an imported conversation): nothing in the window, the latest before it
    for i in range(4):
        emit_write(tracer, at_ns=T0 + i * 10**9, user_id="u1", memory_id=f"m{i}", content=f"fact {i}")
    r = emit_retrieve(tracer, at_ns=T0 + 90 * DAY_NS, user_id="u1", ids=["m3"], query="facts?")
    emit_write(tracer, at_ns=T0 + 95 * DAY_NS, user_id="u1", memory_id="later", content="after")
    d = explore.retrieval_detail(wh, r, max_writes=3)
    assert not d.writes_in_window and [w["memory_id"] for w in d.writes] == ["m1", "m2", "m3"]
    wide = explore.retrieval_detail(wh, r, writes_before_days=100, writes_after_days=10)
    assert wide.writes_in_window and [w["memory_id"] for w in wide.writes][-1] == "later"
    assert wide.writes[-1]["after_retrieval"]


def test_memory_timeline_joins_every_event(wh, cited, tracer):
    verdicts.record_verdict(wh, cited["r1"], "m1", "incorrect", reviewer="ana", at=datetime(2026, 1, 1, tzinfo=UTC))
    with tracer.start_as_current_span(SPAN_FORGET, start_time=T0 + 3 * DAY_NS) as span:  # as MemoryEngine.forget
        set_attrs(span, {"memory.id": "m1", "memory.user_id": "u1", "memory.forgotten_count": 1})
    tl = explore.memory_timeline(wh, "m1")
    assert [e.kind for e in tl.events] == ["write", "superseded_by", "retrieved", "cited", "forget", "verdict"]
    w = tl.events[0].details
    assert (w["outcome"], w["importance"]) == ("stored", 0.8)
    assert tl.events[1].details["by_memory_id"] == "m2"
    assert tl.events[2].details == {"rank": 1, "score": 0.9, "routes": "vector", "query": "drink?", "user_id": "u1"}
    assert tl.events[3].span_id == cited["a1"]
    rows = tl.records()
    assert [r["event"] for r in rows] == [e.kind for e in tl.events]
    assert rows[2]["what"] == "rank 1" and rows[2]["text"] == "drink?" and rows[1]["what"] == "superseded by m2"
    assert rows[4]["what"] == "forgotten" and rows[5]["detail"] == "by ana"
    tl2 = explore.memory_timeline(wh, "m2")
    assert [e.kind for e in tl2.events][:2] == ["write", "supersedes"]  # same instant: the write comes first
    assert tl2.count("retrieved") == 2 and tl2.count("supersedes") == 1 and tl2.count("cited") == 1
    assert explore.memory_timeline(wh, "nope").events == ()
    assert len(explore.memory_timeline(wh, "m1", limit=2).events) == 3  # 2 span events + the verdict


def test_summary_owners_and_filter_values(wh, cited, tracer):
    emit_write(tracer, at_ns=T0, user_id="u2", memory_id="x", content="x", tenant_id="acme")
    s = explore.workspace_summary(wh)
    assert s.spans == 6 and s.first is not None and s.last > s.first and "spans)" in s.provenance
    assert explore.known_owners(wh)[0] == ("default", "u1") and ("acme", "u2") in explore.known_owners(wh)
    opts = explore.filter_options(wh)
    assert opts["user_id"] == ["u1"] and set(opts) == set(explore.FILTER_COLUMNS)
    assert explore.describe_source("demo") == "demo replay"
    assert explore.describe_source("file:x.json") == "ingested file x.json"
    assert explore.describe_source("http") == "live collector" and explore.describe_source("sdk") == "live engine"


def test_health_inputs_and_forget_events_of_the_real_engine(tmp_path, embedder):
    from memory_engine import EngineConfig
    from memory_engine.workspace import open_workspace

    with open_workspace(EngineConfig(workspace=str(tmp_path / "ws")), embedder=embedder) as ws:
        eng = ws.engine
        fact = eng.add("My default courier is SF Express", user_id="u1", fact={"key": "shipping.courier", "value": "SF"})
        other = eng.add("I always travel to Zanzibar in July", user_id="u1")
        assert eng.forget(other.memory_id, user_id="u1")
        memories, facts = explore.health_inputs(eng, [("default", "u1")])
        assert [m["id"] for m in memories] == [fact.memory_id]
        assert [(f["key"], f["value"]) for f in facts] == [("shipping.courier", "SF")]
        ws.flush()
        kinds = [e.kind for e in explore.memory_timeline(ws.warehouse, other.memory_id).events]
        assert kinds == ["write", "forget"]
