"""The retrieve path's shortcuts give the reference path's results, to the last digit.

* The engine redacts the query once and hands that :class:`~memory_engine.write.pii.Redaction` to the
  planner (``RetrievalRequest.redaction``) instead of the planner redacting it again for the keyed search
  terms of redacted values; the reference is the pipeline called without it. Hits, scores, relevance,
  sources and every candidate's route ranks and scores must be equal on a fixed corpus, and a wrong
  redaction must change them (so the comparison can fail).
* :func:`memory_engine.retrieve.candidates.is_cjk` counts non-space characters with ``str.split`` (C);
  the reference is the character loop over ``str.isspace`` it replaced.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memory_engine.retrieve import temporal
from memory_engine.retrieve.candidates import is_cjk
from memory_engine.retrieve.pipeline import RetrievalRequest
from memory_engine.text import _CJK
from memory_engine.validation import epoch_now
from memory_engine.write.pii import PiiSettings, redact

pytestmark = pytest.mark.integration

CORPUS = (
    "上周在京东给我爸买了一台按摩椅，花了两千三",
    "我家狗狗对鸡肉过敏，只能吃三文鱼狗粮",
    "我儿子在读初二，数学一直不太好",
    "搬家以后快递都寄到公司前台",
    "我的备用号码是13912345678，工作日打这个",
    "My brother Tom moved to Lisbon in March",
    "I gave up sugar in my coffee after the checkup",
    "The landlord said the rent goes up 5% from July",
    "Call the plumber at +44 20 7946 0958 if the boiler leaks again",
    "我舅妈下周三生日，想送她一条丝巾",
)
QUERIES = (
    "我给我爸买了啥", "狗粮选哪种", "我儿子几年级", "快递寄到哪", "13912345678 是什么号码",
    "where does Tom live now", "do I take sugar", "how much is the rent going up",
    "who do I call for the boiler, +44 20 7946 0958?", "舅妈生日送什么", "what is my passport number",
)


def _normal(hits, explanations):
    return ([(h.memory_id, h.score, h.relevance, h.sources) for h in hits],
            [(e.memory_id, e.fused_score, e.relevance, e.final_rank, e.dropped_at, e.route_ranks, e.route_scores)
             for e in explanations])


@pytest.fixture
def filled(make_engine, t0):
    exporter = InMemorySpanExporter()
    eng = make_engine({"retrieval.touch_on_hit": False}, span_processors=[SimpleSpanProcessor(exporter)])
    for i, text in enumerate(CORPUS):
        eng.add(text, user_id="u1", session_id=f"s{i % 3}", now=t0 + timedelta(hours=i))
        eng.add(text, user_id="other", now=t0 + timedelta(hours=i))  # another owner's copy never answers
    return eng, exporter


def _reference(eng, query, now, redaction=None):
    ts = epoch_now(now)
    run = eng.retrieval_pipeline.run(RetrievalRequest(
        query, "u1", "default", eng.config.retrieval.top_k, ts,
        temporal.user_time(ts, now, None, eng.config.memory.timezone), redaction=redaction))
    return _normal(run.hits, run.explanations)


def test_engine_path_equals_the_pipeline_redacting_on_its_own(filled, t0):
    eng, exporter = filled
    now = t0 + timedelta(days=2)
    phone_hits = {}
    for q in QUERIES:
        res = eng.retrieve(q, user_id="u1", now=now, explain=True)
        assert not res.degraded, res.error
        assert _normal(res.hits, res.explanations) == _reference(eng, q, now), q
        phone_hits[q] = [h.content for h in res.hits]
    # both phone questions reach their memory first (the keyed search term of the redacted number)
    assert phone_hits["13912345678 是什么号码"][0].startswith("我的备用号码")
    assert phone_hits["who do I call for the boiler, +44 20 7946 0958?"][0].startswith("Call the plumber")
    spans = [s for s in exporter.get_finished_spans() if s.name == "memory.retrieve"]
    queries = [s.attributes["memory.query"] for s in spans]
    assert len(queries) == len(QUERIES)
    assert not any("13912345678" in q or "7946" in q for q in queries)  # the span still carries it redacted
    assert queries[QUERIES.index("13912345678 是什么号码")] == redact("13912345678 是什么号码",
                                                                      PiiSettings.from_config(eng.config.pii)).text


def test_a_redaction_of_another_text_changes_the_result(filled, t0):
    """The planner does use the redaction it is given: the comparison above can fail."""
    eng, _ = filled
    now = t0 + timedelta(days=2)
    q = "13912345678 是什么号码"
    other = redact("18800001111 是什么号码", PiiSettings.from_config(eng.config.pii))
    assert _reference(eng, q, now, other) != _reference(eng, q, now)


SAMPLES = ("", " ", "\u3000\u3000", "abc", "我上周买了耳机", "我 买了 headphones", "a\u00a0b\u2028c\u3000中文字",
           "订单 A-1234 已发货", "\x1c\x1d\x1e\x1f中", "ｆｕｌｌ　ｗｉｄｔｈ　中文", "中" + " " * 50 + "x" * 3,
           "x" * 7 + "中文中", "x" * 8 + "中文", "\t\n中\r\x0b\x0c", "𠀀𠀁 ext-b")


def _is_cjk_reference(text: str) -> bool:
    chars = [ch for ch in text if not ch.isspace()]
    return bool(chars) and sum(len(m) for m in _CJK.findall(text)) >= 0.3 * len(chars)


@pytest.mark.unit
@pytest.mark.parametrize("text", SAMPLES + CORPUS + QUERIES)
def test_is_cjk_counts_like_the_character_loop(text):
    assert is_cjk(text) is _is_cjk_reference(text)
