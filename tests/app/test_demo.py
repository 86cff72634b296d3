"""The demo builder, the extractive reader, and the query layer on a real seeded demo workspace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory_engine import demo
from memory_engine.engine import parse_citations
from memory_engine.errors import ValidationError
from memory_engine.models import Hit
from memory_engine.observability import explore

from .conftest import NOW


def _hit(mid: str, content: str) -> Hit:
    return Hit(memory_id=mid, content=content, score=0.5, sources=("vector",), memory_type="semantic",
               created_at=datetime(2026, 1, 1, tzinfo=UTC), importance=0.5)  # fmt: skip


@pytest.mark.unit
def test_extractive_answer_cites_hits_sharing_terms():
    hits = [_hit("00000000000000a1", "The user likes blue Jabra headphones"),
            _hit("00000000000000a2", "Dinner was pasta"),
            _hit("00000000000000a3", "Ordered Jabra Elite 8 in blue")]  # fmt: skip
    ans = demo.extractive_answer("which blue headphones?", hits)
    assert parse_citations(ans) == ["00000000000000a1", "00000000000000a3"]
    assert "Dinner" not in ans
    assert demo.extractive_answer("which blue headphones?", hits, max_citations=1).count("[mem-") == 1
    assert demo.extractive_answer("weather tomorrow", hits) == demo.NO_MEMORY_ANSWER
    zh = demo.extractive_answer("蓝色的耳机", [_hit("00000000000000b1", "下单了蓝色的 Jabra 耳机")])
    assert parse_citations(zh) == ["00000000000000b1"]
    with pytest.raises(ValueError):
        demo.extractive_answer("q", hits, max_citations=0)


@pytest.mark.unit
def test_spread_times_shifts_and_compresses():
    t = datetime(2026, 1, 1, tzinfo=UTC)
    end = datetime(2026, 6, 1, tzinfo=UTC)
    short = demo.spread_times([t, t + timedelta(days=2)], end, timedelta(days=10))
    assert short == [end - timedelta(days=2), end]
    long = demo.spread_times([t, t + timedelta(days=40), t + timedelta(days=20)], end, timedelta(days=10))
    assert long == [end - timedelta(days=10), end, end - timedelta(days=5)]


@pytest.mark.unit
def test_plan_without_locomo_says_so(tmp_path):
    opts = demo.DemoOptions(max_cases_per_suite=1, locomo_path=tmp_path / "missing.json")
    plan = demo.plan_demo(opts, now=NOW)
    assert plan.cases and all(c.origin == "golden" for c in plan.cases)
    assert any("LoCoMo" in n for n in plan.notes)
    lo = NOW - timedelta(days=opts.days)
    assert all(lo <= s.at < NOW for c in plan.cases for s in c.steps)


@pytest.mark.integration
def test_demo_build_fills_the_warehouse_over_days(demo_build, wh):
    _, _, rep = demo_build
    # the LoCoMo sample lives in ../shared/data (CI has it); without it the demo says so and uses the suites only
    assert rep.locomo_used == demo.DEFAULT_LOCOMO.exists()
    assert rep.writes > 50 and rep.retrievals > 20 and rep.answers == rep.retrievals
    assert wh.list_eval_runs() and any("golden evaluation run" in n for n in rep.notes)  # Golden eval page has a run
    assert rep.cited > 0 and rep.verdicts > 0 and rep.spans_stored == rep.writes + rep.retrievals + rep.answers
    s = explore.workspace_summary(wh)
    assert s.sources[0][0] == demo.DEMO_SOURCE and "demo replay" in s.provenance
    assert s.first is not None and s.first < NOW - timedelta(days=7) and s.last < NOW
    days = wh.fetchone("SELECT count(DISTINCT start_ns // 86400000000000) FROM retrievals")[0]
    assert days >= 5
    # every answer span is linked to its retrieval and cites only retrieved ids
    bad = wh.fetchone("SELECT count(*) FROM answers a JOIN retrievals r ON r.span_id = a.retrieve_span_id "
                      "WHERE NOT list_has_all(r.retrieved_ids, a.cited_ids)")[0]
    assert bad == 0


@pytest.mark.integration
def test_the_query_layer_on_the_demo_workspace(wh):
    page = explore.list_retrievals(wh, limit=5)
    assert len(page.rows) == 5 and page.total > 5
    second = explore.list_retrievals(wh, limit=5, offset=5)
    assert {r.span_id for r in page.rows}.isdisjoint(r.span_id for r in second.rows)
    assert page.rows[0].at >= second.rows[0].at
    cited_row = wh.fetchone("SELECT retrieve_span_id, cited_ids[1] FROM answers WHERE len(cited_ids) > 0 LIMIT 1")
    d = explore.retrieval_detail(wh, cited_row[0])
    assert d is not None and any(h.cited and h.memory_id == cited_row[1] for h in d.hits)
    assert d.answers and d.writes and d.writes_in_window
    # nothing written within the window (e.g. a conversation imported months earlier): the latest writes before it
    far = explore.retrieval_detail(wh, cited_row[0], writes_before_days=0, writes_after_days=0, max_writes=3)
    assert far is not None and not far.writes_in_window and 0 < len(far.writes) <= 3
    assert not any(w["after_retrieval"] for w in far.writes)
    assert all(w["at"] <= far.row.at for w in far.writes)
    life = explore.memory_timeline(wh, cited_row[1]).records()
    events = [e["event"] for e in life]
    assert events[0] == "write" and "retrieved" in events and "cited" in events
    assert [e["at"] for e in life] == sorted(e["at"] for e in life)
    assert explore.retrieval_detail(wh, "0" * 16) is None
    q = wh.fetchone("SELECT query FROM retrievals WHERE span_id = ?", [cited_row[0]])[0]
    assert explore.list_retrievals(wh, search=q[:6]).total >= 1
    with pytest.raises(ValidationError):
        explore.list_retrievals(wh, limit=0)


@pytest.mark.unit
def test_workspace_is_empty(tmp_path: Path):
    assert demo.workspace_is_empty(tmp_path / "nothing")
    (tmp_path / "ws" / "qdrant").mkdir(parents=True)
    assert not demo.workspace_is_empty(tmp_path / "ws")


@pytest.mark.integration
def test_demo_build_embeds_queries_in_batches_and_shows_eval_progress(tmp_path: Path):
    """The build warms the query cache in batches before the replay (same vectors, far less CPU), the
    golden evaluation run reports progress per case, so a first start shows where its time goes, and it
    covers the cases the demo replayed (``max_cases_per_suite``), so a quick demo is quick."""
    import shutil

    from memory_engine.evaluation.suite import load_suites
    from memory_engine.observability.warehouse import Warehouse

    suites = tmp_path / "suites"
    suites.mkdir()
    shutil.copy(demo.DEFAULT_SUITES_DIR / "correction_keeps_details.yaml", suites)
    (suite,) = load_suites([suites])
    assert len(suite.cases) == 2
    n_q = len(suite.cases[0].queries)
    seen: list[demo.DemoProgress] = []
    opts = demo.DemoOptions(suites_dir=suites, locomo_path=None, repeat_after_days=(), max_cases_per_suite=1)
    rep = demo.build_demo(tmp_path / "ws", now=NOW, options=opts, progress=seen.append)
    wh = Warehouse.open(tmp_path / "ws")
    try:
        assert wh.fetchone("SELECT count(*), count(DISTINCT case_id) FROM eval_queries") == (n_q, 1)
    finally:
        wh.close()
    emb = [p for p in seen if p.stage == "embedding"]
    assert any(p.message == "embedding queries" for p in emb) and emb[-1].done == emb[-1].total
    ev = [p for p in seen if p.stage == "eval"]
    assert ev[-1].total == n_q and ev[-1].done == n_q and len(ev) > 1
    assert rep.verdicts > 0 and rep.retrievals == n_q
